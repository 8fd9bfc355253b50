"""Summary tree (E2GraphRAG): the corpus levels on top, one subtree per document, chunks as leaves.

Large corpora are browsed by parts: the corpus top levels (down to each document's root), one
document's subtree, or — for small corpora — everything. Pick a node to read its summary, its
children and its leaf chunks (escaped prose: document text is untrusted); a click on a node in
the drawing picks it too. Labels name documents by their file name (without extension; long ones
wrap onto a second line) and leaves by document and chunk number; the drawing's height follows
the number of levels so the tree fills the canvas."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import networkx as nx
import pandas as pd
import streamlit as st

from ui.auth_gate import guard  # noqa: E402

guard()  # the refusal / sign-in page unless this session may open it (app.py gates first)

from core import api
from ui import state
from ui.errors import show_errors
from ui.graph_component import clickable_graph, last_click
from ui.graph_view import graph_html, legend_html, legend_items
from ui.prose import prose_html
from ui.escape import label
from ui.safe_tables import safe_dataframe

if TYPE_CHECKING:
    from core.api import Workspace

HEIGHT = 560  # the tallest drawing; shallow trees get less (see ``drawing_height``)
LEVEL_PX = 110  # ui.graph_view's levelSeparation
NODE_SPACING_PX = 130  # ui.graph_view's nodeSpacing
CANVAS_WIDTH_PX = 1000  # the drawing's width in a wide layout, roughly
GRAPH_KEY = "tree_graph"
EVERYTHING_MAX = 600  # nodes (summaries + chunks) up to which the whole tree may be drawn
CORPUS_VIEW_MAX = 400  # the corpus view drops document roots / lower corpus levels beyond this
MAX_LEAVES_SHOWN = 10
SCOPES = {"corpus": "Corpus top levels", "doc": "One document", "all": "Everything (small corpora)"}


def node_label(node_id: str, tree: dict[str, Any], names: dict[str, str], chunk_docs: dict[str, Any],
               roots: dict[str, str]) -> str:
    """A readable label: 'Corpus L2 #0', '<document> L1 #3', 'chunk 4 of <document>'."""
    node = tree.get(node_id)
    if node is not None and node.scope == "corpus":
        return f"Corpus L{node.level} #{node.ord}"
    if node is not None:
        doc = names.get(node.doc_id or "", node.doc_id or "?")
        root = " (root)" if roots.get(node.doc_id or "") == node_id else ""
        return f"{doc} L{node.level} #{node.ord}{root}"
    chunk = chunk_docs.get(node_id)
    if chunk is not None:
        return f"chunk {chunk.order + 1} of {names.get(chunk.doc_id, chunk.doc_id)}"
    return node_id


def doc_stem(name: str) -> str:
    """A document's name without its extension (``01-velmora-coast.md`` → ``01-velmora-coast``)."""
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    return stem or name


def wrap_label(label: str, width: int = 18, limit: int = 36) -> str:
    """At most two lines of ``width`` characters, broken at a space, '-' or '_' (capped at ``limit``)."""
    if len(label) > limit:
        label = label[: limit - 1] + "…"
    if len(label) <= width:
        return label
    cut = max(label.rfind(ch, 0, width + 1) for ch in " -_")
    cut = cut + 1 if cut > 0 else width
    return label[:cut].rstrip() + "\n" + label[cut:].lstrip()


def short_label(node_id: str, tree: dict[str, Any], names: dict[str, str], chunk_docs: dict[str, Any],
                roots: dict[str, str]) -> str:
    """The label drawn under a node: 'Corpus L2 #0', a document's name at its root, '<document> L1 #2'
    inside a document, '<document> · chunk 3' for leaves (the tooltip and the side panel give the
    full label)."""
    node = tree.get(node_id)
    root_docs = {root: doc for doc, root in roots.items()}
    if node is not None and node.scope == "corpus":
        return f"Corpus L{node.level} #{node.ord}"
    if node_id in root_docs:
        return wrap_label(doc_stem(names.get(root_docs[node_id], root_docs[node_id])))
    if node is not None:
        return wrap_label(f"{doc_stem(names.get(node.doc_id or '', '?'))} L{node.level} #{node.ord}")
    if node_id in chunk_docs:
        chunk = chunk_docs[node_id]
        return wrap_label(f"{doc_stem(names.get(chunk.doc_id, '?'))} · chunk {chunk.order + 1}")
    return wrap_label(node_id)


def drawing_height(graph: nx.DiGraph, canvas_px: int = CANVAS_WIDTH_PX) -> int:
    """Pixels for the drawing so the tree fills the canvas: vis fits the whole tree, so a wide, flat
    tree is scaled down by its widest level and needs little height; a deep, narrow one gets up to
    HEIGHT."""
    if graph.number_of_nodes() == 0:
        return 200
    depth = nx.dag_longest_path_length(graph) if graph.number_of_edges() else 0
    levels: dict[int, int] = {}
    roots = [n for n in graph.nodes if graph.in_degree(n) == 0]
    for root in roots:
        for node, d in nx.single_source_shortest_path_length(graph, root).items():
            levels[d] = levels.get(d, 0) + 1
    widest = max(levels.values() or [1])
    scale = min(1.0, canvas_px / max(widest * NODE_SPACING_PX, 1))
    return int(min(HEIGHT, max(240, 150 + depth * LEVEL_PX * scale)))


def corpus_members(tree: dict[str, Any], limit: int = CORPUS_VIEW_MAX) -> set[str]:
    """Corpus nodes plus the document roots below them; for large corpora only the top levels
    that fit in ``limit`` nodes."""
    corpus = [n for n in tree.values() if n.scope == "corpus"]
    members = {n.node_id for n in corpus} | {c for n in corpus for c in n.child_ids}
    if len(members) <= limit:
        return members
    levels = sorted({n.level for n in corpus}, reverse=True)
    kept: set[str] = set()
    for level in levels:
        layer = {n.node_id for n in corpus if n.level == level}
        if kept and len(kept) + len(layer) > limit:
            break
        kept |= layer
    return kept


def build_view(ws: "Workspace", scope: str, doc_id: str) -> nx.DiGraph:
    """The part of the tree to draw, parent → child, with name/type/text/level attributes."""
    tree = api.tree_index(state.principal(), ws)
    names = api.doc_names(state.principal(), ws)
    roots = {doc: root for doc, (root, _) in api.doc_roots(state.principal(), ws).items()}
    if scope == "doc":
        members = {n.node_id for n in tree.values() if n.scope == "doc" and n.doc_id == doc_id}
        chunk_ids = [c.chunk_id for c in api.chunks_of(state.principal(), ws, doc_id)]
        members |= set(chunk_ids)
    elif scope == "corpus":
        members = corpus_members(tree)
    else:
        members = set(tree) | set(api.all_chunk_ids(state.principal(), ws))
    chunk_docs = api.chunks_by_id(state.principal(), ws, [m for m in members if m not in tree])
    graph = nx.DiGraph()
    for member in sorted(members):
        node = tree.get(member)
        kind = node.scope if node is not None else "chunk"
        text = node.text if node is not None else (chunk_docs[member].text if member in chunk_docs else "")
        level = node.level if node is not None else 0
        label = node_label(member, tree, names, chunk_docs, roots)
        graph.add_node(member, name=short_label(member, tree, names, chunk_docs, roots), full_name=label,
                       type=kind, level=level, text=text)
    for member in members:
        node = tree.get(member)
        if node is None:
            continue
        for child in node.child_ids:
            if child in members:
                graph.add_edge(member, child)
    return graph


def _title(_node: Any, data: dict[str, Any]) -> str:
    text = str(data.get("text") or "")
    return f"{data.get('full_name')}\n{data.get('type')} · level {data.get('level')}\n\n{text[:500]}"


@st.cache_data(show_spinner="Building the tree view…", max_entries=8)
def tree_view(path: str, generation: int, scope: str, doc_id: str, _ws: "Workspace"
              ) -> tuple[str, list[str], dict[str, str], list[tuple[str, str]], int]:
    """(html, node ids, labels, legend, height) for one view, cached per workspace generation."""
    graph = build_view(_ws, scope, doc_id)
    height = drawing_height(graph)
    page = graph_html(graph, height_px=height, color_by="type", size_by_degree=False, hierarchical=True,
                      label_attr="name", title_fn=_title)
    order = sorted(graph.nodes, key=lambda n: (-int(graph.nodes[n]["level"]), graph.nodes[n]["type"] != "corpus",
                                              str(graph.nodes[n]["name"])))
    return page, order, {n: str(graph.nodes[n]["full_name"]) for n in graph.nodes}, legend_items(graph, "type"), height


def node_panel(ws: "Workspace", node_id: str, labels: dict[str, str]) -> None:
    tree = api.tree_index(state.principal(), ws)
    node = tree.get(node_id)
    names = api.doc_names(state.principal(), ws)
    if node is None:  # a chunk
        chunk = api.chunks_by_id(state.principal(), ws, [node_id]).get(node_id)
        if chunk is None:
            st.caption("This chunk no longer exists.")
            return
        st.text(f"Chunk {chunk.order + 1} of {names.get(chunk.doc_id, chunk.doc_id)} ({chunk.tokens:,} tokens)")
        st.html(prose_html(chunk.text, max_height_px=420))
        return
    roots = {doc: root for doc, (root, _) in api.doc_roots(state.principal(), ws).items()}
    title = labels.get(node_id) or node_label(node_id, tree, names, {}, roots)
    st.text(f"{title} — {node.scope} level {node.level}, {node.tokens:,} tokens")
    left, right = st.columns(2)
    with left:
        st.caption("Summary")  # headings set apart for reading (the stored text, which is embedded, keeps spaces)
        st.html(prose_html(api.readable_summary(state.principal(), ws, node_id), max_height_px=420))
    with right:
        node_children(ws, node, labels, tree, names)


def node_children(ws: "Workspace", node: Any, labels: dict[str, str], tree: dict[str, Any], names: dict[str, str]) -> None:
    """A summary node's children (table) and its leaf chunks (expanders with plain text)."""
    chunk_meta = api.chunks_by_id(state.principal(), ws, [c for c in node.child_ids if c not in tree])
    roots = {doc: root for doc, (root, _) in api.doc_roots(state.principal(), ws).items()}
    rows = []
    for child in node.child_ids:
        sub = tree.get(child)
        if sub is not None:  # a child outside the drawn view has no label there: name it, never its raw id
            name = labels.get(child) or node_label(child, tree, names, chunk_meta, roots)
            rows.append({"child": name, "kind": f"{sub.scope} summary L{sub.level}", "start": sub.text[:120]})
        elif child in chunk_meta:
            meta = chunk_meta[child]
            rows.append({"child": labels.get(child) or f"chunk {meta.order + 1} of {names.get(meta.doc_id, '?')}",
                         "kind": "chunk", "start": meta.text[:120]})
    st.caption(f"Children ({len(rows):,})")
    if rows:
        safe_dataframe(pd.DataFrame(rows), key="tree_children_table", hide_index=True)
    leaves = list(node.leaf_chunk_ids)
    st.caption(f"Leaf chunks ({len(leaves):,})")
    chunks = api.chunks_by_id(state.principal(), ws, leaves[:MAX_LEAVES_SHOWN])
    for i, leaf in enumerate(leaves[:MAX_LEAVES_SHOWN]):
        chunk = chunks.get(leaf)
        if chunk is None:
            continue
        with st.expander(f"Leaf {i + 1}: {label(names.get(chunk.doc_id, chunk.doc_id), 60)}, chunk {chunk.order + 1}",
                         expanded=False):
            st.html(prose_html(chunk.text, max_height_px=360))
    if len(leaves) > MAX_LEAVES_SHOWN:
        st.caption(f"{len(leaves) - MAX_LEAVES_SHOWN:,} more leaf chunk(s) not shown.")


def choose_scope(ws: "Workspace") -> tuple[str, str]:
    names = api.doc_names(state.principal(), ws)
    roots = api.doc_roots(state.principal(), ws)
    docs = [d for d in names if d in roots]
    total = len(api.tree_index(state.principal(), ws)) + api.chunk_count(state.principal(), ws)
    cols = st.columns([2, 3])
    scope = cols[0].radio("View", list(SCOPES), format_func=SCOPES.get, key="tree_scope", horizontal=False,
                          persist_state="session")  # kept across page switches (Streamlit drops it otherwise)
    doc_id = ""
    if scope == "doc":
        if docs and st.session_state.get("tree_doc") not in docs:
            st.session_state["tree_doc"] = docs[0]
        doc_id = cols[1].selectbox("Document", docs, key="tree_doc",
                                   format_func=lambda d: names.get(d, d)[:100]) or ""
    elif scope == "all" and total > EVERYTHING_MAX:
        cols[1].warning(f"The whole tree has {total:,} nodes (more than {EVERYTHING_MAX:,}): showing the corpus top "
                        f"levels instead. Pick one document to see its subtree.")
        scope = "corpus"
    elif scope == "corpus":
        cols[1].caption("Corpus summary nodes and, below them, each document's root (a summary, or the chunk of a "
                        "one-chunk document). Pick “One document” to open a subtree down to its chunks.")
    return scope, doc_id


def _on_click() -> None:
    click = last_click(GRAPH_KEY)
    if click is not None and click["kind"] == "node":
        st.session_state["tree_node"] = click["id"]


@show_errors()
def main() -> None:
    st.title("Summary tree")
    ws = state.workspace()
    if not api.tree_index(state.principal(), ws) and api.chunk_count(state.principal(), ws) == 0:
        st.info("The summary tree is empty: index documents on the Documents page first.")
        return
    scope, doc_id = choose_scope(ws)
    if scope == "doc" and not doc_id:
        st.info("No indexed document to show.")
        return
    page, order, labels, legend, height = tree_view(str(ws.path), state.generation(ws), scope, doc_id, ws)
    if not order:
        st.info("Nothing to show in this view yet (the corpus level appears once documents are indexed).")
        return
    st.html(legend_html(legend))
    st.caption(f"{len(order):,} nodes. Top = corpus levels; leaves = chunks. Hover a node for its summary, click "
               "it to read it below; scroll to zoom, drag to pan.")
    if st.session_state.get("tree_node") not in order:
        st.session_state["tree_node"] = order[0]
    clickable_graph(page, height, key=GRAPH_KEY, selected=st.session_state.get("tree_node"), on_select=_on_click)
    st.subheader("Node")
    chosen = st.selectbox("Pick a node", order, key="tree_node", format_func=lambda n: labels.get(n, n)[:100])
    if chosen:
        node_panel(ws, chosen, labels)

main()
