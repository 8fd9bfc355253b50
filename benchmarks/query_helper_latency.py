"""The int8 embedder's helper thread on and off, alternated question by question in one process (the
fairest comparison on a loaded machine): per mode the wall, process-CPU and calling-thread-CPU medians of
``benchmarks/retrieval_latency.py``'s timed call (a fresh question state, memos cleared) with the helper
(``RAGSCOPE_QUERY_HELPER=1``: the question's strings on two cores, its vector beside its parse) and
without (``0``: every string on the calling thread). The results are the same either way (same
per-string session calls); only the time differs.

    python benchmarks/query_helper_latency.py --workspace W [--questions FILE] [--limit 50] [--modes ...]
"""
from __future__ import annotations

import os
import time

from common import SHARED_DATA, median, p95, question_parser, workspace_and_questions, write_result
from retrieval_latency import CountingEmbedder, timed


def main() -> None:
    parser = question_parser(__doc__, SHARED_DATA / "dev_musique_full" / "questions.jsonl")
    parser.add_argument("--limit", type=int, default=50, help="first N questions (the first one is the warm-up)")
    parser.add_argument("--modes", default="naive,local,global,hybrid,mix,tree,path")
    parser.add_argument("--name", default="query_helper_latency")
    args = parser.parse_args()

    from core.retrieval.registry import parse_modes

    ws, loaded = workspace_and_questions(args)
    questions = [q.question for q in loaded][: args.limit or None]
    counter = CountingEmbedder(ws.embedder)
    ws._embedder = counter
    modes = parse_modes(args.modes)
    for mode in modes:
        for setting in ("1", "0"):
            os.environ["RAGSCOPE_QUERY_HELPER"] = setting
            timed(ws, counter, "warm-up question about a place", mode)
    table = {}
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    for mode in modes:
        runs: dict[str, dict[str, list[float]]] = {s: {"wall": [], "cpu": [], "caller": []} for s in ("1", "0")}
        for i, question in enumerate(questions):
            order = ("1", "0") if i % 2 == 0 else ("0", "1")  # which goes first alternates
            for setting in order:
                os.environ["RAGSCOPE_QUERY_HELPER"] = setting
                wall, _ = timed(ws, counter, question, mode)
                if i == 0:
                    continue  # the warm-up question
                runs[setting]["wall"].append(wall)
                runs[setting]["cpu"].append(timed.cpu_ms)  # type: ignore[attr-defined]
                runs[setting]["caller"].append(timed.thread_ms)  # type: ignore[attr-defined]
        row = {("helper" if s == "1" else "no_helper"): {"p50_ms": median(v["wall"]), "p95_ms": p95(v["wall"]),
                                                         "cpu_p50_ms": median(v["cpu"]),
                                                         "caller_cpu_p50_ms": median(v["caller"]), "n": len(v["wall"])}
               for s, v in runs.items()}
        table[mode] = row
        on, off = row["helper"], row["no_helper"]
        print(f"{mode:<7} wall p50 {off['p50_ms']:6.1f} -> {on['p50_ms']:6.1f} ms   cpu {off['cpu_p50_ms']:6.1f} -> "
              f"{on['cpu_p50_ms']:6.1f}   caller cpu {off['caller_cpu_p50_ms']:6.1f} -> {on['caller_cpu_p50_ms']:6.1f}"
              f"   (no helper -> helper, n={on['n']})", flush=True)
    os.environ.pop("RAGSCOPE_QUERY_HELPER", None)
    write_result(args.name, {"workspace": args.workspace, "questions": len(questions), "modes": table,
                             "load_average_end": os.getloadavg()[0], "time": time.strftime("%H:%M:%S")})


if __name__ == "__main__":
    main()
