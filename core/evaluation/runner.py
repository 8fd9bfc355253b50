"""Run a question set through several modes and aggregate evidence metrics per mode."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from core.evaluation.bm25 import BM25Baseline
from core.evaluation.metrics import (all_at_k, answer_in_context, bootstrap_ci, mean, ranked_documents,
                                     recall_at_k)
from core.evaluation.questions import Question, resolve_gold
from core.retrieval.base import QueryContext
from core.retrieval.registry import retrieve
from core.settings import Settings
from core.tokens import count_tokens
from core.types import ProgressCallback, ProgressEvent, no_progress
from core.workspace import Workspace


@dataclass
class EvalReport:
    questions: int
    ks: list[int]
    modes: dict[str, dict[str, Any]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)  # one per (question, mode)
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"questions": self.questions, "modes": self.modes, "warnings": self.warnings}


def _chunk_docs(ws: Workspace) -> dict[str, str]:
    return {cid: chunk.doc_id for cid, chunk in ws.store.chunks_by_id(ws.store.all_chunk_ids()).items()}


def evaluate(ws: Workspace, questions: list[Question], modes: Sequence[str], ks: Sequence[int] = (2, 5, 10),
             settings: Optional[Settings] = None, include_bm25: bool = True,
             progress: ProgressCallback = no_progress) -> EvalReport:
    """Evidence recall of gold documents per mode (plus a BM25 row); retrieval only, no answers."""
    ks = sorted(set(int(k) for k in ks))
    questions = resolve_gold(questions, ws.doc_names())
    known = set(ws.doc_names())
    report = EvalReport(questions=len(questions), ks=list(ks))
    missing = sum(1 for q in questions for d in q.gold_doc_ids if d not in known)
    if missing:
        report.warnings.append(f"{missing} gold document id(s) are not in this workspace: was it built from the "
                               "matching corpus with its doc_ids kept?")
    chunk_doc = _chunk_docs(ws)
    all_modes = list(modes) + (["bm25"] if include_bm25 else [])
    bm25 = BM25Baseline(ws) if include_bm25 else None
    total = len(questions) * len(all_modes)
    done = 0
    for q in questions:
        ctx = QueryContext(ws, q.question, settings=settings)
        for mode in all_modes:
            started = time.perf_counter()
            if mode == "bm25":
                result = bm25.retrieve(q.question, k=max(ks))
                latency = (time.perf_counter() - started) * 1000
            else:
                result = retrieve(ctx, mode)
                latency = sum(v for s, v in result.timings_ms.items() if s != "answer")
            docs = ranked_documents(result.evidence_chunk_ids, chunk_doc)
            context = result.context_text
            row: dict[str, Any] = {
                "qid": q.qid, "mode": mode, "question_type": q.question_type, "gold": q.gold_doc_ids,
                "found_ranks": {g: (docs.index(g) + 1 if g in docs else None) for g in q.gold_doc_ids},
                "answer_in_context": answer_in_context(context, q.answer, q.aliases),
                "context_tokens": count_tokens(context) if mode == "bm25" else result.context_tokens,
                "latency_ms": round(latency, 3), "retrieved_docs": len(docs),
            }
            for k in ks:
                row[f"recall@{k}"] = recall_at_k(docs, q.gold_doc_ids, k)
                row[f"all@{k}"] = all_at_k(docs, q.gold_doc_ids, k)
            report.rows.append(row)
            done += 1
            progress(ProgressEvent("eval", done, total, f"{q.qid} · {mode}"))
    for mode in all_modes:
        rows = [r for r in report.rows if r["mode"] == mode]
        latencies = [r["latency_ms"] for r in rows]
        summary: dict[str, Any] = {
            "recall@k": {str(k): mean(r[f"recall@{k}"] for r in rows) for k in ks},
            "all@k": {str(k): mean(r[f"all@{k}"] for r in rows) for k in ks},
            "recall_ci95@k": {str(k): bootstrap_ci([r[f"recall@{k}"] for r in rows]) for k in ks},
            "answer_in_context": mean(r["answer_in_context"] for r in rows),
            "context_tokens": mean(r["context_tokens"] for r in rows),
            "latency_ms": {"p50": float(np.percentile(latencies, 50)) if latencies else None,
                           "p95": float(np.percentile(latencies, 95)) if latencies else None},
            "questions_with_gold": sum(1 for r in rows if r["gold"]),
        }
        report.modes[mode] = summary
    return report
