"""End-to-end latency of a Compare run: ``core.api.run_modes`` with all modes (answers included)
on every question of a file, warm (models, graph views, vector matrices and whatever else the app's
warm-up, ``core.warmup``, loads, before timing), each question asked for the first time (the per-process memos of question parses and
rendered rows are cleared before each). Prints the median and p95 of the whole run per question, and per mode the median and
p95 of its total and of each stage (the answer stage included), and its process-CPU median (retrieval and answer; hybrid
and mix replay the gathers local and global made for the same question, so their CPU is what a Compare adds for them).

    python benchmarks/compare_latency.py --workspace W [--questions FILE] [--repeat 1] [--limit 0] [--slowest N]

After the warm-up the loaded objects are frozen out of the garbage collector's view (``gc.freeze``), as the
app's server does (``core.warmup``); ``--no-gc-freeze`` leaves them in it (full collections then pause a run
~200 ms on dev_musique_full). ``--slowest N`` prints the N questions with the most process CPU, each mode's CPU and its three largest stages
(wall ms of the mode's own stopwatch): what makes the slow questions slow.

The workspace is only read; pass a copy if you want to be sure nothing is touched.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from common import SHARED_DATA, median, p95, write_result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--questions", default=str(SHARED_DATA / "dev_musique_full" / "questions.jsonl"))
    parser.add_argument("--modes", default="all")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument("--name", default="")
    parser.add_argument("--no-gc-freeze", action="store_true",
                        help="leave the loaded models and views in the garbage collector's view (the app freezes them)")
    parser.add_argument("--slowest", type=int, default=0,
                        help="also print the N questions with the most process CPU: each mode's CPU and its largest stages")
    args = parser.parse_args()

    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.evaluation.questions import load_questions
    from core.retrieval.registry import parse_modes
    from core.workspace import Workspace

    ws = Workspace(Path(args.workspace))
    questions = [q.question for q in load_questions(Path(args.questions))]
    if args.limit:
        questions = questions[: args.limit]
    modes = parse_modes(args.modes)
    from core.warmup import warm_models, warm_workspace

    warm_models()
    warm_workspace(ws)  # what the app's warm-up loads before the first question (core.warmup)
    if not args.no_gc_freeze:  # as the app's server after its warm-up (core.warmup: models and views frozen)
        import gc

        gc.collect()
        gc.freeze()
    run_modes(LOCAL_ADMIN, ws, "Who founded the company mentioned here, and when?", modes)  # warm-up: models, graphs, caches
    totals: list[float] = []
    cpu: list[float] = []  # process CPU ms of each run (less sensitive to a loaded machine)
    per_mode: dict[str, list[float]] = {m: [] for m in modes}
    stages: dict[str, dict[str, list[float]]] = {m: {} for m in modes}
    from retrieval_latency import clear_memos

    import core.answers
    import core.retrieval.registry as registry

    mode_cpu: dict[str, list[float]] = {m: [] for m in modes}
    real_retrieve, real_answer = registry.retrieve, core.answers.answer
    started_cpu: dict[str, float] = {}

    def timed_retrieve(ctx, mode):  # run_modes imports both at call time, so these wrappers are what it calls
        started_cpu[mode] = time.process_time()
        return real_retrieve(ctx, mode)

    def timed_answer(result, *args, **kwargs):
        out = real_answer(result, *args, **kwargs)
        mode_cpu[result.mode].append((time.process_time() - started_cpu[result.mode]) * 1000)
        return out

    registry.retrieve, core.answers.answer = timed_retrieve, timed_answer  # type: ignore[assignment]

    slow: list[tuple[float, str, dict[str, float], dict[str, dict[str, float]]]] = []  # per run: CPU, question, per mode
    for _ in range(args.repeat):
        for question in questions:
            first = {m: len(v) for m, v in mode_cpu.items()}
            clear_memos()  # each question as if asked for the first time: no parse or row memo of an earlier one
            cpu_started = time.process_time()
            started = time.perf_counter()
            results = run_modes(LOCAL_ADMIN, ws, question, modes)
            totals.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - cpu_started) * 1000)
            slow.append((cpu[-1], question, {m: sum(v[first[m]:]) for m, v in mode_cpu.items()},
                         {m: dict(r.timings_ms) for m, r in results.items()}))
            for mode, result in results.items():
                per_mode[mode].append(sum(result.timings_ms.values()))
                for stage, ms in result.timings_ms.items():
                    stages[mode].setdefault(stage, []).append(ms)
    print(f"{len(questions)} questions x {args.repeat}: all {len(modes)} modes end to end "
          f"median {median(totals):.1f} ms, p95 {p95(totals):.1f} ms; CPU median {median(cpu):.1f} ms, p95 {p95(cpu):.1f} ms")
    table = {}
    for mode in modes:
        answer = stages[mode].get("answer", [])
        table[mode] = {"p50_ms": median(per_mode[mode]), "p95_ms": p95(per_mode[mode]),
                       "stages": {s: {"p50_ms": median(v), "p95_ms": p95(v)} for s, v in stages[mode].items()}}
        table[mode]["cpu_p50_ms"] = median(mode_cpu[mode])
        print(f"{mode:<7} total median {table[mode]['p50_ms']:7.1f} ms  p95 {table[mode]['p95_ms']:7.1f} ms   "
              f"answer median {median(answer):6.1f} ms  p95 {p95(answer):6.1f} ms   CPU median {table[mode]['cpu_p50_ms']:6.1f} ms")
        print("        " + ", ".join(f"{s} {v['p50_ms']:.1f}" for s, v in table[mode]["stages"].items()))
    for run_cpu, question, by_mode, timings in sorted(slow, key=lambda item: -item[0])[: args.slowest]:
        print(f"slow: CPU {run_cpu:.1f} ms  {question[:90]}")
        for mode in sorted(by_mode, key=lambda m: -by_mode[m]):
            top = sorted(timings.get(mode, {}).items(), key=lambda kv: -kv[1])[:3]
            print(f"        {mode:<7} CPU {by_mode[mode]:6.1f} ms  " + ", ".join(f"{k} {v:.1f}" for k, v in top))
    status = ws.status()
    write_result(args.name or f"compare_latency_{Path(args.workspace).name}",
                 {"workspace": args.workspace, "documents": status["documents"], "chunks": status["chunks"],
                  "questions": len(questions), "repeat": args.repeat,
                  "end_to_end": {"p50_ms": median(totals), "p95_ms": p95(totals), "n": len(totals),
                                 "cpu_p50_ms": median(cpu), "cpu_p95_ms": p95(cpu)},
                  "modes": table})


if __name__ == "__main__":
    main()
