"""Source viewer: a cited chunk opened in its document, at its page, with the cited span highlighted.

A PDF whose file was kept is shown as its real page (rendered on the server by PDFium) with boxes
over the span; every other document as its text around the span, escaped, with the span marked.
The chunks to open are the evidence of the last Compare run (each labelled with its citation), or
any chunk picked by document; the URL parameters ``?chunk=<id>&quote=<sentence>`` (the links under an
answer on Compare and Inspect, ``ui.citation_links``) open one directly with that sentence highlighted,
``?doc=<name>&quote=<answer line>`` the chunk of that document holding the quoted sentence ("Pick another chunk" leaves the link for the
pickers). Viewing needs
the role that may read the workspace's documents (``core.api.source_view``); nothing is written."""
from __future__ import annotations

import streamlit as st

from ui.auth_gate import guard  # noqa: E402

guard()  # the refusal / sign-in page unless this session may open it (app.py gates first)

from core import api  # noqa: E402
from core.citations import MAX_QUOTE_CHARS, hit_citation  # noqa: E402
from ui import state  # noqa: E402
from ui.errors import escape_markdown, show_errors  # noqa: E402

COMPARE_KEY = "compare_last"  # pages/compare.py keeps its last run here


def _compare_choices() -> dict[str, tuple[str, str]]:
    """Label → (chunk id, quote) for the chunks of the last Compare run in this workspace."""
    last = st.session_state.get(COMPARE_KEY) or {}
    if last.get("workspace") != state.current_workspace_name():
        return {}
    out: dict[str, tuple[str, str]] = {}
    for mode, result in (last.get("results") or {}).items():
        for rank, chunk in enumerate(result.chunks, 1):
            cited = hit_citation(chunk)
            out.setdefault(f"{mode} #{rank}: {cited}", (chunk.chunk_id, ""))
    return out


def _document_choice(ws: "api.Workspace") -> str:
    docs = api.documents(state.principal(), ws, "processed")
    if not docs:
        return ""
    names = {d.doc_id: d.name for d in docs}
    doc_id = st.selectbox("Document", list(names), format_func=lambda d: names[d], key="source_doc")
    chunks = api.chunks_of(state.principal(), ws, doc_id)
    if not chunks:
        return ""
    picked = st.selectbox("Chunk", range(len(chunks)), format_func=lambda i: f"chunk {i + 1}", key="source_chunk")
    return chunks[int(picked)].chunk_id


def _forget_link() -> None:
    """Drop the chunk, document and sentence a citation link put in the address (the workspace stays), so
    the page offers its pickers again: clicking "Source viewer" in the navigation kept the link's chunk."""
    for param in ("chunk", "doc", "quote"):
        st.query_params.pop(param, None)
    for key in ("source_quote", "source_quote_param"):
        st.session_state.pop(key, None)


def main() -> None:
    st.title("Source viewer")
    ws = state.indexed_workspace("open a cited source")
    if ws is None:
        return
    chunk_id = str(st.query_params.get("chunk", "") or "")
    doc = str(st.query_params.get("doc", "") or "")  # a cited answer line whose chunk the answer did not list
    if "quote" in st.query_params and st.query_params.get("quote") != st.session_state.get("source_quote_param"):
        st.session_state["source_quote_param"] = str(st.query_params["quote"])
        st.session_state["source_quote"] = st.session_state["source_quote_param"][:MAX_QUOTE_CHARS]
    if (chunk_id or doc) and st.button("Pick another chunk", key="source_pick_other",
                                       help="This chunk was opened from a link; pick any cited chunk or document."):
        _forget_link()
        st.rerun()
    if not chunk_id and not doc:
        choices = _compare_choices()
        source = st.radio("Open", ["Evidence of the last Compare run", "A document's chunk"], horizontal=True,
                          index=0 if choices else 1, key="source_from")
        if source.startswith("Evidence") and choices:
            label = st.selectbox("Cited chunk", list(choices), key="source_pick")
            chunk_id = choices[label][0]
        else:
            chunk_id = _document_choice(ws)
    if not chunk_id and not doc:
        st.info("No chunk to open: run a question on Compare first, or index a document.")
        return
    quote = st.text_input("Sentence to highlight (optional; default: the whole chunk)", key="source_quote",
                          max_chars=MAX_QUOTE_CHARS)
    view = None
    with show_errors("Opening the source"):
        view = api.source_view(state.principal(), ws, chunk_id, quote, doc=doc)
    if view is None:
        if chunk_id:
            st.warning("That chunk is not in this workspace (it was deleted or re-indexed).")
        else:  # the URL named a document (``?doc=``): say so, not "that chunk"
            st.warning(f"No chunk of a document named “{escape_markdown(doc[:200])}” in this workspace holds the "
                       "quoted sentence (the document was deleted, renamed or re-indexed, or never was here).")
        return
    st.subheader(escape_markdown(view.cited))
    if view.note:
        st.caption(escape_markdown(view.note))
    if view.image_png:
        st.image(view.image_png, caption=f"page {view.page}: the cited span is boxed in yellow")
    else:
        st.html(view.html)  # the document text escaped by core.source_view.marked_text, the span in <mark>


main()
