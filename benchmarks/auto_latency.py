"""What the ``auto`` mode costs over the mode it chose: per question, the chosen mode alone and auto
(features + routing + the chosen mode), each on a fresh question context (nothing cached from the other),
retrieval only, in the same process after one warm-up question.

    python benchmarks/auto_latency.py --workspace WS --questions QUESTIONS.jsonl [--limit N] [--repeat R]

Prints the median and p95 of both and of the per-question difference (auto − chosen), and the routing
step alone (``timings_ms["route"]``), in wall-clock and in process CPU time (every thread of the process,
so the embedder's worker threads count). The order of the two runs alternates per question and repeat.
On a busy machine wall-clock differences are mostly other processes' noise: read the CPU medians and the
ratio of the summed times of the interleaved runs."""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.evaluation.questions import load_questions  # noqa: E402
from core.retrieval.registry import query_context, retrieve  # noqa: E402
from core.routing.auto_mode import run_candidate  # noqa: E402
from core.workspace import Workspace  # noqa: E402


def _timed(ws: Workspace, question: str, mode: str) -> tuple[float, float, Any]:
    """Wall and process-CPU milliseconds of one retrieval on a fresh context, and its result."""
    started, cpu = time.perf_counter(), time.process_time()
    ctx = query_context(ws, question)
    result = retrieve(ctx, mode) if mode == "auto" else run_candidate(ctx, mode)  # a mode, or the fused pair
    return (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000, result


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--questions", required=True)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    ws = Workspace(Path(args.workspace))
    questions = load_questions(Path(args.questions))
    questions = questions[: args.limit] if args.limit else questions
    _timed(ws, questions[0].question, "auto")  # warm-up: models, views, matrices
    wall: dict[str, list[float]] = {"chosen": [], "auto": [], "diff": [], "route": []}
    cpu: dict[str, list[float]] = {"chosen": [], "auto": [], "diff": []}
    chosen_modes: dict[str, int] = {}
    for i, q in enumerate(questions):
        mode = retrieve(query_context(ws, q.question), "auto").route["chosen"]  # which mode, untimed
        chosen_modes[mode] = chosen_modes.get(mode, 0) + 1
        for r in range(args.repeat):
            order = ("auto", mode) if (i + r) % 2 else (mode, "auto")
            runs = {name: _timed(ws, q.question, name) for name in order}
            for key, name in (("chosen", mode), ("auto", "auto")):
                wall[key].append(runs[name][0])
                cpu[key].append(runs[name][1])
            wall["diff"].append(runs["auto"][0] - runs[mode][0])
            cpu["diff"].append(runs["auto"][1] - runs[mode][1])
            wall["route"].append(float(runs["auto"][2].timings_ms.get("route", 0.0)))
    print(f"{len(questions)} questions x {args.repeat}; chosen: {chosen_modes}")
    for label, table in (("wall", wall), ("CPU", cpu)):
        for name, values in table.items():
            print(f"{label:<4} {name:<7} p50 {statistics.median(values):8.2f} ms   p95 {_p(values, 0.95):8.2f} ms")
    print(f"auto / chosen, summed interleaved: wall {sum(wall['auto']) / sum(wall['chosen']):.3f}  "
          f"CPU {sum(cpu['auto']) / sum(cpu['chosen']):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
