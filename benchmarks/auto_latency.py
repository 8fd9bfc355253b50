"""What the ``auto`` mode costs over the mode it chose: per question, the chosen mode alone and auto
(features + routing + the chosen mode), each on a fresh question context (nothing cached from the other),
retrieval only, in the same process after one warm-up question.

    python benchmarks/auto_latency.py --workspace WS --questions QUESTIONS.jsonl [--limit N]

Prints the median and p95 of both and of the per-question difference (auto − chosen), and the routing
step alone (``timings_ms["route"]``). The order of the two runs alternates per question."""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.evaluation.questions import load_questions  # noqa: E402
from core.retrieval.registry import query_context, retrieve  # noqa: E402
from core.workspace import Workspace  # noqa: E402


def _timed(ws: Workspace, question: str, mode: str) -> tuple[float, object]:
    started = time.perf_counter()
    result = retrieve(query_context(ws, question), mode)
    return (time.perf_counter() - started) * 1000, result


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--questions", required=True)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    ws = Workspace(Path(args.workspace))
    questions = load_questions(Path(args.questions))
    questions = questions[: args.limit] if args.limit else questions
    _timed(ws, questions[0].question, "auto")  # warm-up: models, views, matrices
    auto_ms, chosen_ms, route_ms, diffs, chosen_modes = [], [], [], [], {}
    for i, q in enumerate(questions):
        if i % 2:
            a, result = _timed(ws, q.question, "auto")
            mode = result.route["chosen"]
            c, _ = _timed(ws, q.question, mode)
        else:
            probe = retrieve(query_context(ws, q.question), "auto").route["chosen"]  # which mode, untimed
            c, _ = _timed(ws, q.question, probe)
            a, result = _timed(ws, q.question, "auto")
            mode = result.route["chosen"]
        auto_ms.append(a)
        chosen_ms.append(c)
        diffs.append(a - c)
        route_ms.append(float(result.timings_ms.get("route", 0.0)))
        chosen_modes[mode] = chosen_modes.get(mode, 0) + 1
    print(f"{len(questions)} questions; chosen: {chosen_modes}")
    for name, values in (("chosen mode alone", chosen_ms), ("auto", auto_ms), ("auto - chosen", diffs),
                         ("routing step", route_ms)):
        print(f"{name:<18} p50 {statistics.median(values):8.1f} ms   p95 {_p(values, 0.95):8.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
