"""Rows of Inspect's evidence tables as links to the Source viewer (issue 34).

Selecting a row of the entities, relations, paths, chunks or summaries table opens the Source viewer
(``pages/source.py``, the page the answer's citation links open) at the place the row rests on, with
the span highlighted: a chunk row opens that chunk; an entity row the first of its source chunks
whose text names it, at the sentence naming it; a relation row (or a path row: its first hop) the
first source chunk with a sentence naming both ends; a summary row the leaf that holds its first
sentence (an extractive summary quotes its leaves), else its first leaf. Chunk texts are read only
when a row is selected (``core.api.chunks_by_id``, under the same role checks); navigation stays in
the session (``st.switch_page``), nothing is served as a file.
"""
from __future__ import annotations

import re
from typing import Any, Mapping, Optional, Sequence

import streamlit as st

from core import api
from core.citations import locate
from ui import state
from ui.citation_links import QUOTE_CHARS, SOURCE_PAGE

CHUNKS_READ = 30  # source chunks of a row read to find the sentence that names it
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+|\n{2,}")


def sentences(text: str) -> list[str]:
    """The sentences of a chunk's text (split after ``.``/``!``/``?`` and at blank lines), stripped."""
    return [s.strip() for s in _SENTENCE_END.split(text or "") if s and s.strip()]


def sentence_naming(text: str, names: Sequence[str]) -> str:
    """The first sentence of ``text`` that names every one of ``names`` (case-insensitive), else ""."""
    wanted = [n.casefold() for n in names if n and n.strip()]
    if not wanted:
        return ""
    return next((s for s in sentences(text) if all(n in s.casefold() for n in wanted)), "")


def evidence_target(chunk_ids: Sequence[str], texts: Mapping[str, str], names: Sequence[str] = (),
                    lead: str = "") -> Optional[dict[str, str]]:
    """The Source viewer's query parameters for a row resting on ``chunk_ids`` (in order): the first
    chunk holding ``lead`` (a summary's first sentence) quoted there; else the first chunk with a
    sentence naming all of ``names``, then one naming the first name, quoted there; else the first
    chunk, whole. None without chunks."""
    ids = [c for c in chunk_ids if c]
    if not ids:
        return None
    if lead.strip():
        for chunk_id in ids:
            if chunk_id in texts and locate(texts[chunk_id], lead)[0] >= 0:
                return {"chunk": chunk_id, "quote": lead[:QUOTE_CHARS]}
    for wanted in (list(names), list(names[:1])):
        for chunk_id in ids:
            found = sentence_naming(texts.get(chunk_id, ""), wanted)
            if found:
                return {"chunk": chunk_id, "quote": found[:QUOTE_CHARS]}
    return {"chunk": ids[0]}


def row_target(ws: Any, kind: str, item: Any) -> Optional[dict[str, str]]:
    """The viewer's parameters for one row of an evidence table (``kind``: chunk, entity, relation,
    path or summary), reading the row's source chunks."""
    principal = state.principal()
    if kind == "chunk":
        return {"chunk": item.chunk_id}
    names: list[str] = []
    lead = ""
    if kind == "entity":
        ids, names = list(item.source_chunk_ids), [item.name]
    elif kind == "relation":
        ids, names = list(item.source_chunk_ids), [item.source, item.target]
    elif kind == "summary":
        ids, lead = list(item.leaf_chunk_ids), (sentences(item.text) or [""])[0]
    elif kind == "path" and item.relations:
        hop = item.relations[0]
        edge = api.graph_edge(principal, ws, False, hop.source_key, hop.target_key)
        ids = list((edge.attributes.get("source_chunk_ids") or []) if edge is not None else [])
        names = [hop.source, hop.target]
    else:
        return None
    ids = ids[:CHUNKS_READ]
    texts = {c: chunk.text for c, chunk in api.chunks_by_id(principal, ws, ids).items()}
    return evidence_target([c for c in ids if c in texts] or ids, texts, names, lead)


def open_row(ws: Any, kind: str, items: Sequence[Any], event: Any) -> None:
    """After a row of a table built from ``items`` was selected (``event``: the dataframe's selection),
    open the Source viewer at that row's source; a row without one says so."""
    rows = list(getattr(getattr(event, "selection", None), "rows", None) or [])
    if not rows or not 0 <= rows[0] < len(items):
        return
    params = row_target(ws, kind, items[rows[0]])
    if params is None:
        st.info("This row rests on no stored chunk (an imported graph without chunk ids), so there is no source to open.")
        return
    st.switch_page(SOURCE_PAGE, query_params=params)
