"""Where an imported graph came from, and which parts of it: one caption for the Knowledge graph, Inspect and
Documents pages (``core.api.graph_provenance``), and the origin of one entity or relation
(``core.api.graph_part_origins``). Nothing is shown for a graph RAGScope built itself. Every text from the
import record (model name, source folder) is escaped."""
from __future__ import annotations

from typing import Any, Optional

import streamlit as st

from core import api
from ui import state
from ui.escape import md
from ui.numbers import count

ORIGIN_WORDS = {"imported": "imported from LightRAG", "added": "added by RAGScope indexing",
                "both": "imported from LightRAG, extended by RAGScope indexing"}


def provenance_text(prov: Optional[dict[str, Any]]) -> str:
    """The caption's Markdown (escaped) for an import record; "" for a RAGScope-built graph."""
    if not prov:
        return ""
    counts = prov.get("lightrag_counts") or {}
    text = (f"Graph {md(prov.get('provenance') or 'imported')} (model: {md(prov.get('source_model') or 'unknown')}; "
            f"{count(counts.get('documents', 0))} documents, {count(counts.get('entities', 0))} entities, "
            f"{count(counts.get('relations', 0))} relations in LightRAG).")
    origins = prov.get("origins") or {}
    added = {part: (origins.get(part) or {}).get("added", 0) for part in ("documents", "entities", "relations")}
    if any(added.values()):
        both = {part: (origins.get(part) or {}).get("both", 0) for part in ("entities", "relations")}
        text += (f" Added since by RAGScope indexing: {count(added['documents'])} documents, {count(added['entities'])} entities "
                 f"and {count(added['relations'])} relations of their own; {count(both['entities'])} imported entities and "
                 f"{count(both['relations'])} relations also drawn from them.")
    return text


def provenance_caption(ws: Any) -> Optional[dict[str, Any]]:
    """Draw the caption (nothing for a RAGScope-built graph); returns the import record."""
    prov = api.graph_provenance(state.principal(), ws)
    text = provenance_text(prov)
    if text:
        st.caption(text)
    return prov


def origin_text(origin: Optional[str]) -> str:
    """"Origin: …" for one part ("" when unknown: a RAGScope-built graph has no origins)."""
    return f"Origin: {ORIGIN_WORDS[origin]}" if origin in ORIGIN_WORDS else ""


def entity_origin(ws: Any, key: str) -> str:
    return origin_text(api.graph_part_origins(state.principal(), ws, entity_keys=[key]).get(key))


def relation_origin(ws: Any, a: str, b: str) -> str:
    pair = (a, b) if a <= b else (b, a)
    return origin_text(api.graph_part_origins(state.principal(), ws, relation_keys=[pair]).get(pair))


def origin_column(ws: Any, keys: list[Any], relations: bool = False) -> Optional[list[str]]:
    """The "origin" column of a results table (None for a RAGScope-built graph: no column)."""
    if not keys:
        return None
    pairs = [(a, b) if a <= b else (b, a) for a, b in keys] if relations else []
    found = api.graph_part_origins(state.principal(), ws, entity_keys=[] if relations else keys, relation_keys=pairs)
    if not found:
        return None
    return [ORIGIN_WORDS.get(found.get(k, ""), "—") for k in (pairs if relations else keys)]
