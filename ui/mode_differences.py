"""What differs between the modes of one Compare run: each mode's top evidence in rank order, and
which of its top-k chunks no other mode has in its own top-k ("only here").

``difference_rows`` is pure (results in, table rows out) so other columns (page citations, new
modes) can be added to a row without touching the rendering; ``render_differences`` draws it.
"""
from __future__ import annotations

from typing import Any, Mapping

import pandas as pd
import streamlit as st
from ui.safe_tables import safe_dataframe

from core.types import RetrievalResult
from ui.numbers import count

TOP_K = 5
ONLY_HERE = "★ "  # the cell of a chunk no other mode has in its top-k
RANK_PX = 90  # the rank column's width: "only here" whole (checked in Chromium at 1280 and 1500 px)


def chunk_label(result: RetrievalResult, chunk_id: str) -> str:
    """``document, chunk n`` when the mode's context holds the chunk's record, else its id."""
    for record in result.chunks:
        if record.chunk_id == chunk_id and record.doc_name:
            return f"{record.doc_name}, chunk {int(record.order) + 1}"
    return chunk_id


def top_chunks(result: RetrievalResult, k: int = TOP_K) -> list[str]:
    """The mode's first ``k`` evidence chunks, in its order."""
    return list(dict.fromkeys(result.evidence_chunk_ids))[:k]


def only_here(results: Mapping[str, RetrievalResult], k: int = TOP_K) -> dict[str, list[str]]:
    """Per mode, the chunks of its top-``k`` that no other mode has in its top-``k`` (in its order)."""
    tops = {mode: top_chunks(r, k) for mode, r in results.items()}
    out = {}
    for mode, ids in tops.items():
        others = {c for other, chunk_ids in tops.items() if other != mode for c in chunk_ids}
        out[mode] = [c for c in ids if c not in others]
    return out


def difference_rows(results: Mapping[str, RetrievalResult], k: int = TOP_K) -> list[dict[str, Any]]:
    """One row per rank 1..k: per mode, the chunk at that rank (``★`` when only that mode has it in its
    top-k); then a row counting each mode's only-here chunks."""
    unique = {mode: set(ids) for mode, ids in only_here(results, k).items()}
    rows: list[dict[str, Any]] = []
    for rank in range(k):
        row: dict[str, Any] = {"rank": str(rank + 1)}
        for mode, result in results.items():
            ids = top_chunks(result, k)
            if rank < len(ids):
                mark = ONLY_HERE if ids[rank] in unique[mode] else ""
                row[mode] = mark + chunk_label(result, ids[rank])
            else:
                row[mode] = ""
        rows.append(row)
    rows.append({"rank": "only here", **{mode: f"{count(len(unique[mode]))} of {count(min(k, len(top_chunks(r, k))))}"
                                          for mode, r in results.items()}})
    return rows


def render_differences(results: Mapping[str, RetrievalResult], k: int = TOP_K) -> None:
    """The top-k evidence of every mode side by side, with what only one mode found marked."""
    if len(results) < 2:
        return
    st.caption(f"Each mode's top-{k} evidence chunks in its own order; {ONLY_HERE.strip()} = no other mode "
               f"has this chunk in its top-{k}.")
    frame = pd.DataFrame(difference_rows(results, k))
    # the rank column stays in view while the modes scroll, wide enough for "only here" (it read "only he")
    safe_dataframe(frame, hide_index=True, column_config={"rank": st.column_config.TextColumn("rank", width=RANK_PX,
                                                                                          pinned=True)})
