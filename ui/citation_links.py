"""An answer's citations as links that open the Source viewer at the cited span (Compare, Inspect).

Each ``[doc, p. 3]`` / ``[doc, § Heading]`` / ``[doc, l. 40]`` / ``[doc, chunk n]`` of an answer becomes a
link to ``pages/source.py`` carrying the chunk that holds the quoted sentence and the sentence itself
(``?chunk=<id>&quote=<sentence>``); a sentence that is in none of the result's chunks (a graph mode
quoting an entity's source chunk) is sent as ``?doc=<name>&quote=<line>`` and found there in that
document's chunks. The links navigate inside the session (``st.page_link``) and name the workspace
(``?workspace=``), so a link opened in a new tab, a new session, opens the same workspace; the viewer
opens it under the same role checks, and nothing is served as a file.
"""
from __future__ import annotations

from typing import Any

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from core.citations import locate, quote_candidates, quoted_before
from ui.errors import escape_markdown

SOURCE_PAGE = "pages/source.py"
MAX_LINKS = 12  # citation links under one answer
QUOTE_CHARS = 1000  # characters of a quoted sentence sent in the link
LABEL_WORDS = 8  # words of the quote that tell apart links of the same citation


def citation_targets(result: Any) -> list[tuple[str, dict[str, str]]]:
    """``(citation as written, query parameters of the viewer)`` for each distinct citation of the
    result's answer, in answer order."""
    text = result.answer.text if getattr(result, "answer", None) else ""
    out: list[tuple[str, dict[str, str]]] = []
    seen: set[tuple[str, str]] = set()
    for written, doc, segment in quoted_before(text or ""):
        params: dict[str, str] = {}
        for quote in quote_candidates(segment):
            hit = next((c for c in result.chunks if (c.doc_name or c.doc_id).strip().casefold() == doc.casefold()
                        and locate(c.text, quote)[0] >= 0), None)
            if hit is not None:
                params = {"chunk": hit.chunk_id, "quote": quote[:QUOTE_CHARS]}
                break
        params = params or {"doc": doc, "quote": segment[:QUOTE_CHARS]}
        key = (written, params["quote"])
        if key not in seen and len(out) < MAX_LINKS:
            seen.add(key)
            out.append((written, params))
    return out


def link_labels(targets: list[tuple[str, dict[str, str]]], words: int = LABEL_WORDS) -> list[str]:
    """The link text of each target: the citation as written, followed by the first ``words`` words of its
    quoted sentence when the same citation heads more than one link (three links all reading
    "[facts.pdf, p. 3]" were told apart only by hovering)."""
    written_counts: dict[str, int] = {}
    for written, _ in targets:
        written_counts[written] = written_counts.get(written, 0) + 1
    labels = []
    for written, params in targets:
        if written_counts[written] > 1:
            quote = params["quote"].split()
            labels.append(f"{written} “{' '.join(quote[:words])}{' …' if len(quote) > words else ''}”")
        else:
            labels.append(written)
    return labels


def render_citation_links(result: Any) -> None:
    """Under an answer: one link per citation, opening the Source viewer at the quoted sentence."""
    targets = citation_targets(result)
    if not targets:
        return
    st.caption("Open a cited source (the Source viewer highlights the quoted sentence):")
    from ui.state import URL_PARAM, current_workspace_name

    workspace = {URL_PARAM: current_workspace_name()}  # a link opened in a new tab is a new session
    for (written, params), label in zip(targets, link_labels(targets)):
        try:
            st.page_link(SOURCE_PAGE, label=escape_markdown(label),
                         help=escape_markdown(params["quote"][:300]), query_params={**params, **workspace})
        except StreamlitPageNotFoundError:  # a page run on its own (no app navigation): no viewer to link to
            st.caption(escape_markdown(label))
