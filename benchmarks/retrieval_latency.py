"""Retrieval-only latency per mode (median and p95 over the questions, answers excluded,
query embedding included) on an indexed workspace.

    python benchmarks/retrieval_latency.py --workspace W [--questions FILE] [--repeat 3]
"""
from __future__ import annotations

import time
from pathlib import Path

from common import SHARED_DATA, median, p95, question_parser, workspace_and_questions, write_result


def main() -> None:
    parser = question_parser(__doc__, SHARED_DATA / "dev_musique_full" / "questions.jsonl")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--name", default="")
    args = parser.parse_args()

    from core.retrieval.base import QueryContext
    from core.retrieval.registry import modes, retrieve

    ws, loaded = workspace_and_questions(args)
    questions = [q.question for q in loaded]
    warm = QueryContext(ws, "warm-up question about a place")
    for mode in modes():  # loads the models and the graph views once
        retrieve(warm, mode)
    table = {}
    for mode in modes():
        samples = []
        for _ in range(args.repeat):
            for question in questions:
                ctx = QueryContext(ws, question)  # fresh context: the query embedding is part of the timing
                started = time.perf_counter()
                retrieve(ctx, mode)
                samples.append((time.perf_counter() - started) * 1000)
        table[mode] = {"p50_ms": median(samples), "p95_ms": p95(samples), "n": len(samples)}
        print(f"{mode:<7} median {table[mode]['p50_ms']:7.1f} ms   p95 {table[mode]['p95_ms']:7.1f} ms   "
              f"(n={len(samples)})")
    status = ws.status()
    write_result(args.name or f"retrieval_{Path(args.workspace).name}",
                 {"workspace": args.workspace, "documents": status["documents"], "chunks": status["chunks"],
                  "entities": status["entities"], "modes": table})


if __name__ == "__main__":
    main()
