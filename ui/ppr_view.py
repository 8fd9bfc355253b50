"""Inspect's panel for the ``ppr`` mode: the restart vector (every seed with its weight, kind and why),
the entities that ended with the most PageRank mass, and why each chunk ranked where it did.

It reads the mode's own trace records (``ppr_seeds`` and ``ppr`` events) and its chunks; the frames
are built by plain functions (tested without Streamlit) and shown with ``st.dataframe``, which never
interprets document text as markup."""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from ui.safe_tables import safe_dataframe

from core.types import RetrievalResult

FUSED_JOIN = "+"  # a fused auto candidate is named by its parts joined with "+" (core.routing.fusion)


def _parts(chosen: str) -> list[str]:
    """The modes an auto result's chosen candidate ran: several for a fused candidate, else one."""
    return [p for p in chosen.split(FUSED_JOIN) if p]


def _event(result: RetrievalResult, name: str) -> dict[str, Any]:
    found = result.events(name)
    return dict(found[-1].data) if found else {}


def seeds_frame(result: RetrievalResult) -> pd.DataFrame:
    """One row per node of the restart vector, heaviest first: its name, kind, weight, share and why."""
    seeds = _event(result, "ppr_seeds").get("seeds") or []
    total = sum(float(s.get("weight", 0.0)) for s in seeds) or 1.0
    return pd.DataFrame([{"seed": str(s.get("name", s.get("key", ""))), "kind": str(s.get("kind", "")),
                          "weight": float(s.get("weight", 0.0)),
                          "share %": round(100.0 * float(s.get("weight", 0.0)) / total, 2),
                          "why": str(s.get("why", ""))} for s in seeds],
                        columns=["seed", "kind", "weight", "share %", "why"])


def top_entities_frame(result: RetrievalResult) -> pd.DataFrame:
    """The entities with the most PageRank mass after the walk, best first."""
    top = _event(result, "ppr").get("top_entities") or []
    return pd.DataFrame([{"rank": i, "entity": str(name), "PageRank mass": float(mass)}
                         for i, (name, mass) in enumerate(top, start=1)], columns=["rank", "entity", "PageRank mass"])


def chunk_reasons_frame(result: RetrievalResult) -> pd.DataFrame:
    """The chunks in rank order with their mass and the reason the walk gave for their place (for an auto
    result that fused ppr with other modes: the rank each part gave the chunk, no mass)."""
    if result.mode != "ppr" and len(_parts(str((result.route or {}).get("chosen", "")))) > 1:
        return pd.DataFrame([{"rank": i, "document": c.doc_name or c.doc_id, "chunk": c.chunk_id,
                              "why it ranked here": c.reason} for i, c in enumerate(result.chunks, start=1)],
                            columns=["rank", "document", "chunk", "why it ranked here"])
    return pd.DataFrame([{"rank": i, "document": c.doc_name or c.doc_id, "chunk": c.chunk_id, "PageRank mass": c.score,
                          "why it ranked here": c.reason} for i, c in enumerate(result.chunks, start=1)],
                        columns=["rank", "document", "chunk", "PageRank mass", "why it ranked here"])


def fact_filter_text(result: RetrievalResult) -> str:
    """Which recognition filter chose the facts that seed the walk (the LLM's, or the offline rule), as
    logged; empty for a trace without it."""
    note = str(_event(result, "ppr_seeds").get("fact_filter", ""))
    return f"Facts chosen by: {note}" if note else ""


def is_ppr_walk(result: RetrievalResult) -> bool:
    """A ppr result, or an auto result that ran ppr alone or in a fused candidate (it carries ppr's trace)."""
    chosen = str((result.route or {}).get("chosen", ""))
    return result.mode == "ppr" or "ppr" in _parts(chosen)


def render_ppr(result: RetrievalResult, key_prefix: str) -> None:
    """The three tables, for a ppr walk (anything else: nothing)."""
    if not is_ppr_walk(result):
        return
    walk = _event(result, "ppr")
    st.caption(f"Personalised PageRank, damping {walk.get('damping', '?')}: the walk restarts at the seeds below "
               f"in proportion to their weight; {walk.get('nodes', 0):,} entity and chunk nodes, "
               f"{walk.get('synonyms', 0):,} synonym edges.")
    if note := fact_filter_text(result):
        st.text(note)  # plain text: an LLM error message may be part of it
    safe_dataframe(seeds_frame(result), hide_index=True, key=f"{key_prefix}_ppr_seeds")
    st.caption("Entities with the most PageRank mass")
    safe_dataframe(top_entities_frame(result), hide_index=True, key=f"{key_prefix}_ppr_entities")
    st.caption("Why each chunk ranked where it did")
    safe_dataframe(chunk_reasons_frame(result), hide_index=True, key=f"{key_prefix}_ppr_chunks")
