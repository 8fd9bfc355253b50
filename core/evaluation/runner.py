"""Run a question set through several modes and aggregate evidence metrics per mode."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from core.evaluation.bm25 import BM25Baseline
from core.answers import extractive_answer
from core.evaluation.loss import chunk_loss, document_loss, stage_counts
from core.evaluation.metrics import (KEY_TERM_RECALL, SHORT_ANSWER_WORDS, all_at_k, answer_in_answer,
                                     answer_in_context, bootstrap_ci, first_line, mean, right_bold, sentence_gold,
                                     wrong_bold,
                                     ranked_documents, recall_at_k, span_recall_at_k)
from core.evaluation.questions import Question, resolve_gold
from core.evaluation.regret import AUTO, auto_summary
from core.retrieval.registry import query_context, retrieve
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

    keywords: dict[str, Any] = field(default_factory=dict)  # extractor name and per-source question counts

    def summary(self) -> dict[str, Any]:
        return {"questions": self.questions, "modes": self.modes, "keywords": self.keywords,
                "warnings": self.warnings}


def _percentile(values: list[Optional[float]], q: float) -> Optional[float]:
    kept = [v for v in values if v is not None]
    return float(np.percentile(kept, q)) if kept else None


def _chunk_docs(ws: Workspace) -> dict[str, str]:
    return {cid: chunk.doc_id for cid, chunk in ws.records.chunks_by_id(ws.records.all_chunk_ids()).items()}


class _KeywordProbe:
    """Wraps a keyword extractor to note, per question, where the keywords came from."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name: str = getattr(inner, "name", "keywords")
        self.source = ""
        self.last_usage: dict[str, int] = {}

    def extract(self, question: str) -> tuple[list[str], list[str]]:
        keywords = self.inner.extract(question)
        self.last_usage = dict(getattr(self.inner, "last_usage", None) or {})
        self.source = getattr(self.inner, "last_source", "") or ("offline" if self.name == "spacy" else self.name)
        return keywords


def evaluate(ws: Workspace, questions: list[Question], modes: Sequence[str], ks: Sequence[int] = (2, 5, 10),
             settings: Optional[Settings] = None, include_bm25: bool = True,
             progress: ProgressCallback = no_progress, keywords: Any = None) -> EvalReport:
    """Evidence recall of gold documents per mode (plus a BM25 row), and answer-in-answer.

    Answer-in-answer is measured on each mode's *offline extractive* answer (``core.answers``), built
    whatever the provider, so that it is comparable with or without an LLM (no LLM answer is
    generated here): ``answer_in_answer`` over the whole answer, ``answer_in_first_line`` over its
    first line (the single best sentence). BM25 has no answer (None).

    ``keywords`` is the query keyword extractor of local/global/hybrid/mix/path (default: offline
    spaCy; ``core.llm.keywords.LLMKeywords`` for LLM keywords). Each row records the source of its
    question's keywords (``keywords_source``: llm, offline fallback, offline; empty when no mode of
    the question used keywords) and the LLM calls and tokens its result reports."""
    ks = sorted(set(int(k) for k in ks))
    questions = resolve_gold(questions, ws.doc_names())
    known = set(ws.doc_names())
    report = EvalReport(questions=len(questions), ks=list(ks))
    missing = sum(1 for q in questions for d in q.gold_doc_ids if d not in known)
    if missing:
        report.warnings.append(f"{missing} gold document id(s) are not in this workspace: was it built from the "
                               "matching corpus with its doc_ids kept?")
    long_gold = sum(1 for q in questions if sentence_gold(q.answer, q.aliases))
    if long_gold:
        report.warnings.append(
            f"{long_gold} of {len(questions)} gold answers are sentences or long phrases (more than "
            f"{SHORT_ANSWER_WORDS} words): for them answer-in-context and answer-in-answer count a match when at least "
            f"{KEY_TERM_RECALL:.0%} of the gold answer's content words occur (key-term recall), and the bold columns "
            "leave them out (a bold is a short answer).")
    chunk_doc = _chunk_docs(ws)
    with_spans = any(q.evidence_spans for q in questions)
    chunk_text = ({cid: c.text for cid, c in ws.records.chunks_by_id(ws.records.all_chunk_ids()).items()}
                  if with_spans else {})
    all_modes = list(modes) + (["bm25"] if include_bm25 else [])
    bm25 = BM25Baseline(ws) if include_bm25 else None
    total = len(questions) * len(all_modes)
    done = 0
    if keywords is None:
        from core.retrieval.keywords import OfflineKeywords

        keywords = OfflineKeywords()
    probe = _KeywordProbe(keywords)
    for q in questions:
        ctx = query_context(ws, q.question, settings=settings, keywords=probe)
        probe.source = ""
        first_row = len(report.rows)
        for mode in all_modes:
            started = time.perf_counter()
            if mode == "bm25":
                assert bm25 is not None  # "bm25" is a mode only with include_bm25
                result = bm25.retrieve(q.question, k=max(ks))
                latency = (time.perf_counter() - started) * 1000
                answer_text, answer_ms = None, None
            else:
                result = retrieve(ctx, mode)
                latency = sum(v for s, v in result.timings_ms.items() if s != "answer")
                started = time.perf_counter()
                answer_text = extractive_answer(result, ws, ctx, ctx.state).text
                answer_ms = round((time.perf_counter() - started) * 1000, 3)
            docs = ranked_documents(result.evidence_chunk_ids, chunk_doc)
            context = result.context_text
            row: dict[str, Any] = {
                "qid": q.qid, "mode": mode, "question_type": q.question_type, "gold": q.gold_doc_ids,
                "found_ranks": {g: (docs.index(g) + 1 if g in docs else None) for g in q.gold_doc_ids},
                "answer_in_context": answer_in_context(context, q.answer, q.aliases),
                "answer_in_answer": answer_in_answer(answer_text, q.answer, q.aliases),
                "answer_in_first_line": answer_in_answer(first_line(answer_text), q.answer, q.aliases),
                "wrong_bold": wrong_bold(answer_text, q.answer, q.aliases),
                "right_bold": right_bold(answer_text, q.answer, q.aliases),
                "answer_ms": answer_ms,
                "context_tokens": count_tokens(context) if mode == "bm25" else result.context_tokens,
                "latency_ms": round(latency, 3), "retrieved_docs": len(docs),
                "llm_calls": getattr(result, "llm_calls", 0), "prompt_tokens": getattr(result, "prompt_tokens", 0),
                "completion_tokens": getattr(result, "completion_tokens", 0),
            }
            for k in ks:
                row[f"recall@{k}"] = recall_at_k(docs, q.gold_doc_ids, k)
                row[f"all@{k}"] = all_at_k(docs, q.gold_doc_ids, k)
            if with_spans:
                texts = [chunk_text[c] for c in dict.fromkeys(result.evidence_chunk_ids) if c in chunk_text]
                for k in ks:
                    row[f"span_recall@{k}"] = span_recall_at_k(texts, q.evidence_spans, k)
            if result.route:
                row["chosen"] = result.route.get("chosen")
            row["evidence_loss"] = document_loss(result, q.gold_doc_ids, chunk_doc, max(ks))
            if q.gold_chunk_ids:
                row["evidence_loss_chunks"] = chunk_loss(result, q.gold_chunk_ids, max(ks))
            report.rows.append(row)
            done += 1
            progress(ProgressEvent("eval", done, total, f"{q.qid} · {mode}"))
        for row in report.rows[first_row:]:
            row["keywords_source"] = probe.source
    sources: dict[str, int] = {}
    for row in report.rows:
        if all_modes and row["mode"] == all_modes[0] and row["keywords_source"]:
            sources[row["keywords_source"]] = sources.get(row["keywords_source"], 0) + 1
    report.keywords = {"extractor": probe.name, "questions_by_source": sources}
    for mode in all_modes:
        rows = [r for r in report.rows if r["mode"] == mode]
        latencies = [r["latency_ms"] for r in rows]
        summary: dict[str, Any] = {
            "recall@k": {str(k): mean(r[f"recall@{k}"] for r in rows) for k in ks},
            "all@k": {str(k): mean(r[f"all@{k}"] for r in rows) for k in ks},
            "recall_ci95@k": {str(k): bootstrap_ci([r[f"recall@{k}"] for r in rows]) for k in ks},
            "answer_in_context": mean(r["answer_in_context"] for r in rows),
            "answer_in_answer": mean(r["answer_in_answer"] for r in rows),
            "answer_in_first_line": mean(r["answer_in_first_line"] for r in rows),
            "wrong_bold": mean(r["wrong_bold"] for r in rows),
            "right_bold": mean(r["right_bold"] for r in rows),
            "answer_ms": {"p50": _percentile([r["answer_ms"] for r in rows], 50),
                          "p95": _percentile([r["answer_ms"] for r in rows], 95)},
            "context_tokens": mean(r["context_tokens"] for r in rows),
            "latency_ms": {"p50": float(np.percentile(latencies, 50)) if latencies else None,
                           "p95": float(np.percentile(latencies, 95)) if latencies else None},
            "questions_with_gold": sum(1 for r in rows if r["gold"]),
            "llm_calls": sum(int(r["llm_calls"]) for r in rows),
            "evidence_loss": stage_counts(r["evidence_loss"] for r in rows),
        }
        if with_spans:  # chunk-level: share of quoted gold spans inside the top-k evidence chunks
            summary["span_recall@k"] = {str(k): mean(r.get(f"span_recall@{k}") for r in rows) for k in ks}
        report.modes[mode] = summary
    routed = auto_summary(report.rows, ks)
    if routed is not None:  # auto's choices, regret against the oracle and the best fixed mode run
        from core.routing.auto_mode import model_for

        trained = set(model_for(ws)[0].trained_on.get("qids", []))
        routed["trained_on_these"] = seen = sum(1 for q in questions if q.qid in trained)
        if seen:
            report.warnings.append(
                f"auto's router model was trained on {seen} of these {len(questions)} questions: auto's recall and "
                "regret here are train-set figures; its held-out (cross-validated) figures are in the model file "
                "(trained_on.cv), as 'python -m core router train' prints them")
        report.modes[AUTO].update(routed)
    return report
