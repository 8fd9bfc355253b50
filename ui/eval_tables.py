"""Per-question tables of the Evaluate page: document names instead of ids, ranks as numbers.

* ``gold_rank_frame`` — one row per (question, gold document: "document") with one numeric column per mode:
  the rank at which that mode's ranked evidence reached the document (empty = not found). This is
  the per-question view of which gold documents each mode found.
* ``rows_frame`` — the runner's per-(question, mode) rows with gold documents by name, the number
  of gold documents found and the best and worst rank as numbers (no JSON in cells).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd


def _rank(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and value is not None else float("nan")


def gold_rank_frame(rows: Sequence[Mapping[str, Any]], questions: Mapping[str, str],
                    names: Mapping[str, str]) -> pd.DataFrame:
    """(qid, question, gold document, <mode>…) with the rank of the document in each mode's evidence."""
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    table: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        for doc, rank in (r.get("found_ranks") or {}).items():
            key = (r["qid"], doc)
            entry = table.setdefault(key, {"qid": r["qid"], "question": questions.get(r["qid"], ""),
                                           "document": names.get(doc, doc)})
            entry[r["mode"]] = _rank(rank)
    frame = pd.DataFrame(list(table.values()), columns=["qid", "question", "document"] + modes)
    for mode in modes:
        frame[mode] = pd.to_numeric(frame[mode], errors="coerce")
    return frame


def rows_frame(rows: Sequence[Mapping[str, Any]], names: Mapping[str, str]) -> pd.DataFrame:
    """The runner's rows, readable: gold documents by name, found / best / worst rank as numbers."""
    out = []
    for r in rows:
        ranks = [v for v in (r.get("found_ranks") or {}).values() if isinstance(v, (int, float))]
        row = {k: v for k, v in r.items() if k not in ("gold", "found_ranks", "evidence_loss", "evidence_loss_chunks")}
        row = {"qid": r["qid"], "mode": r["mode"],
               "gold documents": ", ".join(names.get(d, d) for d in r.get("gold") or []),
               "found": len(ranks), "of": len(r.get("found_ranks") or {}),
               "best rank": min(ranks) if ranks else None, "worst rank": max(ranks) if ranks else None,
               **{k: v for k, v in row.items() if k not in ("qid", "mode")}}
        out.append(row)
    frame = pd.DataFrame(out)
    for column in ("best rank", "worst rank"):
        if column in frame:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame
