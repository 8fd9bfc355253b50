"""Knowledge graph: browse the LightRAG-style entity graph (or the E2GraphRAG mention graph) with
search, neighbourhood depth, type and degree filters; click a node or an edge (or pick an entity)
to read its profile, relations and source chunks; editors edit the entity graph there (``ui.graph_edits_view``);
download either graph as GraphML or JSON.

The default view reads at a glance: the ``DEFAULT_NODES`` best-connected nodes (or a search's
neighbourhood), labels only where they fit, edge thickness = weight; "Show all nodes" lifts the
budget. Document text is untrusted: it is escaped in the graph and shown as plain text here."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import pandas as pd
import streamlit as st

from ui.auth_gate import guard  # noqa: E402

guard()  # the refusal / sign-in page unless this session may open it (app.py gates first)

from core import api
from ui import edit_impact_view, graph_edits_view, merge_suggestions_view, provenance, state
from ui.errors import escape_markdown, show_errors
from ui.graph_component import apply_click, clickable_graph, last_click
from ui.graph_page import DEFAULT_NODES, HEIGHT, MAX_CHUNKS_SHOWN, DrawnView, draw_view
from ui.graph_view import MAX_LAYOUT_NODES, legend_html
from ui.prose import prose_html
from ui.safe_tables import safe_dataframe
from ui.numbers import count

if TYPE_CHECKING:
    from core.api import EdgeDetail, GraphSummary, NodeDetail, Workspace

GRAPH_KEY = "kg_graph"
EDGE_KEY = "kg_edge"


@st.cache_data(show_spinner="Laying out the graph…", max_entries=8)
def view_html(path: str, generation: int, mention: bool, search: str, depth: int, types: tuple[str, ...],
              min_degree: int, max_nodes: int, size_by_degree: bool, _ws: "Workspace") -> DrawnView:
    """The drawn view (``ui.graph_page.draw_view``: read from storage, not the whole graph), cached per
    workspace generation."""
    return draw_view(state.principal(), _ws, mention, search, depth, types, min_degree, max_nodes, size_by_degree)


def controls(summary: "GraphSummary", mention: bool) -> dict[str, Any]:
    kinds = list(summary.kinds)
    cols = st.columns([3, 1, 1, 1])
    search = cols[0].text_input("Search an entity" if not mention else "Search a term", key="kg_search",
                                persist_state="session",  # kept across page switches (Streamlit drops it otherwise)
                                placeholder="part of a name, e.g. harbour", max_chars=200)
    depth = cols[1].number_input("Neighbourhood depth", min_value=0, max_value=4, value=1, step=1, key="kg_depth",
                                 persist_state="session",
                                 help="Hops around the matching entities (used with a search).")
    show_all = st.session_state.get("kg_show_all", False)
    max_nodes = cols[2].number_input("Max nodes", min_value=10, max_value=2000, value=DEFAULT_NODES, step=10,
                                     key="kg_max_nodes", persist_state="session", disabled=bool(show_all),
                                     help="The view keeps this many nodes: search matches, then their "
                                          "neighbours, then the best-connected. Larger views take longer to draw.")
    min_degree = cols[3].number_input("Min degree", min_value=0, max_value=100, value=0, step=1, key="kg_min_degree",
                                      persist_state="session",
                                      help="Hide nodes with fewer connections (search matches are kept).")
    cols = st.columns([3, 1, 1])
    types = cols[0].multiselect("Entity types" if not mention else "Labels", kinds,
                                key="kg_types_mention" if mention else "kg_types", persist_state="session",
                                help="Empty = all types.")
    size_by_degree = cols[1].checkbox("Size by degree", value=True, key="kg_size_by_degree",
                                      persist_state="session")
    cols[2].checkbox("Show all nodes", key="kg_show_all", persist_state="session",
                     help=f"Draw every node that passes the filters ({summary.nodes:,} in all), up to "
                          f"{MAX_LAYOUT_NODES:,}; labels are still drawn only where they fit (hover a node for its name).")
    budget = min(summary.nodes, MAX_LAYOUT_NODES) if show_all else int(max_nodes)
    return {"search": search or "", "depth": int(depth), "max_nodes": max(budget, 1), "min_degree": int(min_degree),
            "types": tuple(t for t in types if t in kinds), "size_by_degree": bool(size_by_degree),
            "show_all": bool(show_all)}


def show_chunks(ws: "Workspace", chunk_ids: list[str], counts: Optional[dict[str, int]] = None) -> None:
    """Source chunks as plain text (never Markdown/HTML), most relevant first."""
    if not chunk_ids:
        st.caption("No source chunks recorded.")
        return
    names = api.doc_names(state.principal(), ws)
    chunks = api.chunks_by_id(state.principal(), ws, chunk_ids[:MAX_CHUNKS_SHOWN])
    order = {doc: i + 1 for i, doc in enumerate(names)}
    for i, chunk_id in enumerate(chunk_ids[:MAX_CHUNKS_SHOWN]):
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        extra = f", {counts[chunk_id]:,} mention(s)" if counts and chunk_id in counts else ""
        with st.expander(f"Source chunk {i + 1}: document #{count(order.get(chunk.doc_id, '?'))}, "
                         f"chunk {chunk.order + 1}{extra}", expanded=False):
            st.text(f"Document: {names.get(chunk.doc_id, chunk.doc_id)}")
            st.html(prose_html(chunk.text, max_height_px=360))
    if len(chunk_ids) > MAX_CHUNKS_SHOWN:
        st.caption(f"{len(chunk_ids) - MAX_CHUNKS_SHOWN:,} more source chunk(s) not shown.")


RELATION_COLUMNS = {
    "related entity": st.column_config.TextColumn("related entity", width="medium"),
    "keywords": st.column_config.TextColumn("keywords", width="medium"),
    "weight": st.column_config.NumberColumn("weight", width="small", format="%.1f"),
    "description": st.column_config.TextColumn("description", width="large"),
}


def entity_panel(ws: "Workspace", detail: "NodeDetail") -> None:
    data = detail.attributes
    st.text(f"Entity: {data.get('name') or detail.key}")
    st.text(f"Type: {data.get('type') or '—'}   Degree: {detail.degree}")
    if origin := provenance.entity_origin(ws, detail.key):  # imported graphs: where this entity came from
        st.caption(origin)
    st.caption("Profile (description)")
    st.html(prose_html(data.get("description") or "", empty="(no description)"))
    rows = [{"related entity": name, "keywords": ", ".join(map(str, edge.get("keywords") or [])),
             "weight": edge.get("weight"), "description": edge.get("description") or ""}
            for _, name, edge in detail.neighbours]
    st.caption(f"Relations ({len(rows)})")
    if rows:
        frame = pd.DataFrame(rows).sort_values("weight", ascending=False)
        safe_dataframe(frame, key="kg_relations_table", hide_index=True, height=min(400, 38 + 35 * len(rows)),
                     column_config=RELATION_COLUMNS)  # fixed widths: a narrow column cut its header ("keywo…")
    show_chunks(ws, list(data.get("source_chunk_ids") or []))


def term_panel(ws: "Workspace", detail: "NodeDetail") -> None:
    st.text(f"Term: {detail.key}")
    st.text(f"Label: {detail.attributes.get('label') or '—'}   Degree: {detail.degree}")
    rows = sorted(({"co-occurring term": other, "sentences together": edge.get("weight", 1)}
                   for other, _, edge in detail.neighbours), key=lambda r: -float(r["sentences together"]))
    st.caption(f"Co-occurring terms ({len(rows)})")
    if rows:
        safe_dataframe(pd.DataFrame(rows), key="kg_cooccurrence_table", hide_index=True,
                     height=min(400, 38 + 35 * len(rows)))
    counts = detail.chunk_counts
    ranked = sorted(counts, key=lambda c: -counts[c])
    show_chunks(ws, ranked, counts)


def relation_panel(ws: "Workspace", edge: "EdgeDetail", mention: bool) -> None:
    """A clicked edge: both endpoints, keywords, weight, description and source chunks."""
    data = edge.attributes
    st.text(f"{'Co-occurrence' if mention else 'Relation'}: {edge.name_a} — {edge.name_b}")
    if mention:
        st.text(f"Sentences together: {data.get('weight', 1)}")
        index = api.mention_chunks(state.principal(), ws, [edge.a, edge.b])
        first, second = index.get(edge.a, {}), index.get(edge.b, {})
        shared = sorted(set(first) & set(second), key=lambda c: -(first[c] + second[c]))
        st.caption(f"Chunks mentioning both ({len(shared)})")
        show_chunks(ws, shared)
        return
    keywords = ", ".join(map(str, data.get("keywords") or []))
    st.text(f"Keywords: {keywords or '—'}   Weight: {data.get('weight', '—')}")
    if origin := provenance.relation_origin(ws, edge.a, edge.b):
        st.caption(origin)
    st.caption("Description")
    st.html(prose_html(data.get("description") or "", empty="(no description)"))
    show_chunks(ws, list(data.get("source_chunk_ids") or []))


def _on_graph_click() -> None:
    """A click in the graph: a node selects that entity, an edge shows that relation."""
    apply_click(st.session_state, last_click(GRAPH_KEY), "kg_entity", EDGE_KEY)


def _on_graph_switch() -> None:
    """The other graph starts from the default view: "Show all nodes" is unticked (the mention graph has
    ~10x the nodes: all of them is an unreadable hairball) so Max nodes applies again."""
    st.session_state["kg_show_all"] = False
    st.session_state.pop(EDGE_KEY, None)


def _on_entity_pick() -> None:
    st.session_state.pop(EDGE_KEY, None)


def sync_selection(mention: bool, shown: list[str]) -> None:
    """A new view selects its best node (a search match or the best-connected one); the same view
    keeps the entity chosen by a click or the dropdown. Runs before the graph is drawn, so the
    drawing marks the selection too."""
    options = list(shown)
    if not options:
        return
    signature = (mention, tuple(shown[:5]))
    if st.session_state.get("kg_entity") not in options or st.session_state.get("kg_view_signature") != signature:
        st.session_state["kg_entity"] = options[0]  # set via state: the dropdown follows
        if st.session_state.get("kg_view_signature") not in (None, signature):
            st.session_state.pop(EDGE_KEY, None)
    st.session_state["kg_view_signature"] = signature


def side_panel(ws: "Workspace", view: DrawnView, mention: bool) -> None:
    st.subheader("Details")
    if not view.ids:
        st.caption("Nothing to show.")
        return
    options = sorted(view.ids, key=lambda s: view.names.get(s, s).lower())
    sync_selection(mention, view.ids)
    st.caption("Click a node or an edge in the graph, or pick one here.")
    chosen = st.selectbox("Term" if mention else "Entity", options, key="kg_entity", on_change=_on_entity_pick,
                          format_func=lambda s: view.names.get(s, s)[:80])
    clicked = st.session_state.get(EDGE_KEY)
    edge = api.graph_edge(state.principal(), ws, mention, str(clicked[0]), str(clicked[1])) if clicked else None
    if edge is not None:
        relation_panel(ws, edge, mention)
        if not mention:
            graph_edits_view.relation_edits(ws, edge)
        return
    detail = api.graph_node(state.principal(), ws, mention, chosen) if chosen is not None else None
    if detail is None:
        return
    (term_panel if mention else entity_panel)(ws, detail)
    if not mention:  # editors and admins only; a viewer sees none of it
        graph_edits_view.entity_edits(ws, detail, view.names)


@st.cache_data(show_spinner=False, max_entries=8)
def export_bytes(path: str, generation: int, mention: bool, fmt: str, _ws: "Workspace", _principal: Any) -> bytes:
    """The whole graph as GraphML or JSON: built when a download button is clicked (not on open)."""
    principal = _principal
    graph = api.mention_graph(principal, _ws) if mention else api.knowledge_graph(principal, _ws)
    return api.graph_bytes(principal, graph, fmt, ws=_ws)  # with each node's and edge's pages (``cited``)


def export_section(ws: "Workspace") -> None:
    """Download buttons: the knowledge graph and the mention graph, GraphML and JSON (node-link)."""
    with st.expander("Export the graphs", expanded=False):
        st.caption("GraphML opens in Gephi, Cytoscape or yEd (list attributes joined with “; ”); JSON is "
                   "networkx node-link data with every attribute.")
        cols = st.columns(4)
        principal, generation = state.principal(), state.generation(ws)
        for i, (mention, fmt) in enumerate([(False, "graphml"), (False, "json"), (True, "graphml"), (True, "json")]):
            what = "mention graph" if mention else "knowledge graph"

            def data(mention: bool = mention, fmt: str = fmt) -> bytes:  # deferred: runs on the click
                return export_bytes(str(ws.path), generation, mention, fmt, ws, principal)

            cols[i].download_button(
                f"{what.capitalize()} ({'GraphML' if fmt == 'graphml' else 'JSON'})", data,
                file_name=f"{ws.path.name}-{what.replace(' ', '-')}.{fmt}",
                mime="application/xml" if fmt == "graphml" else "application/json",
                key=f"kg_export_{'mg' if mention else 'kg'}_{fmt}", on_click="ignore")


@show_errors()
def main() -> None:
    st.title("Knowledge graph")
    ws = state.workspace()
    mention = st.toggle("Show the E2GraphRAG mention graph instead", key="kg_mention", persist_state="session",
                        on_change=_on_graph_switch,
                        help="Co-occurrence of named entities and nouns in the same sentence (weights = count).")
    provenance.provenance_caption(ws)
    summary = api.graph_summary(state.principal(), ws, mention)
    if summary.nodes == 0:
        st.info("The graph is empty: index documents on the Documents page first.")
        return
    params = controls(summary, mention)
    view = view_html(str(ws.path), state.generation(ws), mention, params["search"], params["depth"], params["types"],
                     params["min_degree"], params["max_nodes"], params["size_by_degree"], ws)
    shown, eligible = view.shown, view.eligible
    if params["search"].strip() and not view.ids:
        st.warning(f"No {'term' if mention else 'entity'} matches: {escape_markdown(params['search'])}")
    total = summary.nodes
    how = ("search matches and their neighbours first, then the best-connected" if params["search"].strip()
           else "the best-connected first")
    if shown < eligible and params["show_all"]:
        st.warning(f"Showing {shown:,} of {eligible:,} nodes ({how}): a drawn graph lays out at most "
                   f"{MAX_LAYOUT_NODES:,} (its layout time and memory grow with the square of the count). Narrow "
                   "the view with a search, entity types or Min degree, or export the graph below.")
    elif shown < eligible:
        st.caption(f"Showing {shown:,} of {eligible:,} nodes ({how}; the graph has {total:,} in all) — tick "
                   f"“Show all nodes” or raise Max nodes for more. Labels are drawn where they fit; hover a node "
                   f"or an edge for its name, click it for details. Edge thickness = weight.")
    else:
        st.caption(f"Showing {shown:,} of {total:,} nodes. Labels are drawn where they fit; hover a node or an edge "
                   f"for its name, click it for details. Edge thickness = weight; drag to move, scroll to zoom.")
    left, right = st.columns([3, 1])
    with left:
        if view.legend:
            st.html(legend_html(view.legend[:16]))
        if shown:
            sync_selection(mention, view.ids)
            clickable_graph(view.html, HEIGHT, key=GRAPH_KEY, selected=st.session_state.get("kg_entity"),
                            on_select=_on_graph_click)
    with right:
        side_panel(ws, view, mention)
        if not mention:
            graph_edits_view.history(ws)
    if not mention:
        merge_suggestions_view.panel(ws)
        edit_impact_view.panel(ws)
    export_section(ws)


main()
