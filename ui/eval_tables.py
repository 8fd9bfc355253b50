"""Per-question tables of the Evaluate page: document names instead of ids, ranks as numbers.

* ``gold_rank_frame`` — one row per (question, gold document: "document") with one numeric column per mode:
  the rank at which that mode's ranked evidence reached the document (empty = not found). This is
  the per-question view of which gold documents each mode found.
* ``rows_frame`` — the runner's per-(question, mode) rows with gold documents by name, the number
  of gold documents found and the best and worst rank as numbers (no JSON in cells).
* ``evidence_frame`` / ``answers_frame`` — the summary, split in two tables that fit the page: the
  evidence recall per mode (per question, then averaged over the questions with gold documents) and
  the answers and costs per mode (over the questions with a gold answer). A figure a row has no value
  for (BM25 builds no answer) is "—", explained by ``summary_notes``; no cell reads ``None``.
* ``counted_over`` — what the figures count over: questions, questions with gold documents, with a
  gold answer, and gold documents pooled over the set (the evidence-loss view's unit).
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

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


NO_VALUE = "—"
ANSWER_COLUMNS = (("answer_in_context", "in context %"), ("answer_in_answer", "in answer %"),
                  ("answer_in_first_line", "in first line %"), ("right_bold", "bold = gold %"),
                  ("wrong_bold", "bold ≠ gold %"))  # short headers: the nine columns fit the page's width
RANK_COLUMN_PX = 60  # a mode's rank column in the per-question table ("hybrid" fits)
QUESTION_COLUMN_PX = 360  # at most; narrower when many modes share the table's width
TABLE_PX = 1020  # the per-question table's width on a wide page (measured in the browser test: 1,038 px box)
MIN_QUESTION_COLUMN_PX = 200
DOCUMENT_COLUMN_PX = 180


def _pct(value: Any) -> str:
    return NO_VALUE if value is None else f"{100 * value:.1f}"


def _ms(value: Any) -> str:
    return NO_VALUE if value is None else f"{value:,.1f}"


def counted_over(report: Any) -> dict[str, int]:
    """questions, with_gold (questions with gold documents), with_answer (with a gold answer) and
    gold_documents (pooled over the question set, as the evidence-loss view counts)."""
    modes = [m for m in report.modes if m != "bm25"] or list(report.modes)
    first = modes[0] if modes else None
    rows = [r for r in report.rows if r["mode"] == first]
    return {"questions": report.questions,
            "with_gold": sum(1 for r in rows if r.get("gold")),
            "with_answer": sum(1 for r in rows if r.get("answer_in_context") is not None),
            "gold_documents": sum(len(r.get("gold") or []) for r in rows)}


def evidence_frame(report: Any) -> pd.DataFrame:
    """mode, R@k %, all@k % (strings with one decimal; "—" where a mode has no value)."""
    rows = []
    for mode, s in report.modes.items():
        row = {"mode": mode}
        row.update({f"R@{k} %": _pct(s["recall@k"][str(k)]) for k in report.ks})
        row.update({f"all@{k} %": _pct(s["all@k"][str(k)]) for k in report.ks})
        rows.append(row)
    return pd.DataFrame(rows)


def answers_frame(report: Any) -> pd.DataFrame:
    """mode, the answer rates, context tokens and retrieval latency percentiles."""
    rows = []
    for mode, s in report.modes.items():
        row = {"mode": mode}
        row.update({label: _pct(s.get(key)) for key, label in ANSWER_COLUMNS})
        row["context tokens"] = NO_VALUE if s.get("context_tokens") is None else f"{s['context_tokens']:,.0f}"
        row["p50 ms"] = _ms(s["latency_ms"]["p50"])
        row["p95 ms"] = _ms(s["latency_ms"]["p95"])
        rows.append(row)
    return pd.DataFrame(rows)


def auto_frame(report: Any) -> Optional[pd.DataFrame]:
    """The auto mode against the best fixed mode and the per-question oracle, one row per k (regret = oracle −
    auto, in points); None when the evaluation did not run auto with other modes."""
    auto = report.modes.get("auto") or {}
    if "regret" not in auto:
        return None
    rows = []
    for k in report.ks:
        best = auto["best_fixed"].get(str(k)) or {}
        rows.append({"k": k, "auto R@k %": _pct(auto["auto"].get(str(k))),
                     "best fixed mode": best.get("mode", NO_VALUE), "its R@k %": _pct(best.get("recall")),
                     "oracle R@k %": _pct(auto["oracle"].get(str(k))), "regret (points)": _pct(auto["regret"].get(str(k)))})
    return pd.DataFrame(rows)


def auto_chosen_text(report: Any) -> str:
    """How often auto chose each mode, e.g. "mix 40, naive 11"."""
    chosen = (report.modes.get("auto") or {}).get("chosen") or {}
    return ", ".join(f"{m} {n:,}" for m, n in sorted(chosen.items(), key=lambda kv: (-kv[1], kv[0])))


def summary_notes(report: Any) -> list[str]:
    """Why a cell is "—"."""
    notes = []
    if "bm25" in report.modes:
        notes.append("bm25 is a lexical reference ranking of chunks: it builds no answer, so its answer columns "
                     "are “—”.")
    if any(s.get("answer_in_context") is None for m, s in report.modes.items() if m != "bm25"):
        notes.append("No question of this set has a gold answer: the answer columns are “—”.")
    return notes


def gold_rank_columns(modes: Sequence[str]) -> dict[str, Any]:
    """Column widths of the per-question table that fit the page (rank columns narrow, the question
    widest; its full text shows on hover), as keyword arguments for ``st.column_config`` built by the page."""
    question = max(MIN_QUESTION_COLUMN_PX,
                   min(QUESTION_COLUMN_PX, TABLE_PX - DOCUMENT_COLUMN_PX - RANK_COLUMN_PX * len(modes)))
    return {"question": question, "document": DOCUMENT_COLUMN_PX, **{m: RANK_COLUMN_PX for m in modes}}



MAX_KS = 6  # cut-offs per run: two table columns each
MAX_K = 1000


def parse_ks(text: str) -> tuple[list[int], list[str]]:
    """The recall cut-offs typed in Evaluate's "k values" (commas, semicolons or spaces between them),
    and the entries left out with why: not a whole number, outside 1–``MAX_K``, or beyond the first
    ``MAX_KS`` distinct values. Nothing usable gives ``[5]``."""
    ks: list[int] = []
    dropped: list[str] = []
    for entry in text.replace(";", ",").replace(" ", ",").split(","):
        if not entry:
            continue
        if not entry.isdigit() or not 1 <= int(entry) <= MAX_K:
            dropped.append(f"{entry[:20]} (not a whole number from 1 to {MAX_K})")
        elif int(entry) not in ks:
            if len(ks) == MAX_KS:
                dropped.append(f"{entry} (at most {MAX_KS} values)")
            else:
                ks.append(int(entry))
    return sorted(ks) or [5], dropped
