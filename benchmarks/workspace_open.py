"""Workspace open time and resident memory, each run in a fresh Python process.

    python benchmarks/workspace_open.py --workspace W [--runs 5]

Stages timed in the child process: ``open`` (SQLite + settings), ``status`` (counts), ``vectors``
(ChromaDB client and collection counts), ``graphs`` (knowledge graph, mention graph, mention index,
tree index: every in-memory view a query needs), ``embedder`` (MiniLM load), and ``first_query``
(one hybrid query end to end). RSS is read from /proc after the graphs and after the first query.
Prints the median of each stage and of the peak RSS.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from common import ROOT, median, require, write_result

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
def rss_mb():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")
t = {}
start = time.perf_counter()
from core.workspace import Workspace
t["imports"] = time.perf_counter() - start
mark = time.perf_counter()
ws = Workspace(__import__("pathlib").Path(sys.argv[1]))
t["open"] = time.perf_counter() - mark; mark = time.perf_counter()
status = ws.status()
t["status"] = time.perf_counter() - mark; mark = time.perf_counter()
counts = {name: ws.vectors.count(name) for name in ("chunks", "entities", "relations", "tree")}
t["vectors"] = time.perf_counter() - mark; mark = time.perf_counter()
ws.knowledge_graph(); ws.mention_graph(); ws.mention_index(); ws.tree_index(); ws.chunk_order(); ws.doc_names()
t["graphs"] = time.perf_counter() - mark
rss_graphs = rss_mb(); mark = time.perf_counter()
ws.embedder
t["embedder"] = time.perf_counter() - mark; mark = time.perf_counter()
from core.retrieval.registry import query_context
from core.retrieval.registry import retrieve
retrieve(query_context(ws, "Which river flows through the capital?"), "hybrid")
t["first_query"] = time.perf_counter() - mark
print(json.dumps({"stages_s": t, "rss_after_graphs_mb": rss_graphs, "rss_after_query_mb": rss_mb(),
                  "status": {k: status[k] for k in ("documents", "chunks", "entities", "relations")},
                  "vectors": counts}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    workspace = require(Path(args.workspace)).resolve()
    runs = []
    for run in range(args.runs):
        done = subprocess.run([sys.executable, "-c", CHILD, str(workspace), str(ROOT)], capture_output=True,
                              text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"run {run + 1} failed:\n{done.stderr[-2000:]}")
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        stages = runs[-1]["stages_s"]
        print(f"run {run + 1}: " + ", ".join(f"{k} {v:.2f}s" for k, v in stages.items())
              + f"; RSS {runs[-1]['rss_after_query_mb']:.0f} MB")
    names = list(runs[0]["stages_s"])
    summary = {"median_stage_s": {n: median([r["stages_s"][n] for r in runs]) for n in names},
               "median_rss_after_graphs_mb": median([r["rss_after_graphs_mb"] for r in runs]),
               "median_rss_after_query_mb": median([r["rss_after_query_mb"] for r in runs])}
    open_ready = sum(summary["median_stage_s"][n] for n in ("open", "status", "vectors", "graphs"))
    summary["median_open_to_graphs_s"] = open_ready
    print(f"\n{runs[0]['status']}")
    for name, value in summary["median_stage_s"].items():
        print(f"  {name:<12} {value:6.2f}s")
    print(f"open -> graphs ready: {open_ready:.2f}s (median of {len(runs)}); RSS after graphs "
          f"{summary['median_rss_after_graphs_mb']:.0f} MB, after the first query "
          f"{summary['median_rss_after_query_mb']:.0f} MB")
    write_result(f"open_{workspace.name}", {"workspace": str(workspace), "runs": runs, **summary})


if __name__ == "__main__":
    main()
