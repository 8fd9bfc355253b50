"""Benchmark (not a test): RAGScope's force layout against networkx's ``spring_layout`` on the graph sizes the
Knowledge graph page draws (60 by default, up to ``MAX_LAYOUT_NODES`` with "Show all nodes").

Both are Fruchterman–Reingold with 50 iterations. ``ui.graph_view.force_layout`` is vectorised numpy in float32
with exact repulsion; networkx uses float64 arrays below 500 nodes and a per-node sparse loop (or, with
``method="energy"``, scipy's optimiser) above. Prints the median of ``--runs`` runs per size and the ratio
networkx / RAGScope, so the choice to keep the hand-written layout can be re-checked after a networkx upgrade.

    python benchmarks/layout_compare.py [--sizes 60 250 1000 2000] [--runs 3]
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

import networkx as nx

import common  # noqa: F401 - puts the repository on sys.path
from ui.graph_view import force_layout


def _median_ms(run: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 250, 1000, 2000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print("| nodes | RAGScope force_layout ms | networkx spring_layout ms | ratio | networkx method |")
    print("|---|---|---|---|---|")
    for n in args.sizes:
        graph = nx.barabasi_albert_graph(n, 2, seed=1)  # ~2 edges per node, like an extracted graph
        ours = _median_ms(lambda: force_layout(graph), args.runs)
        theirs = _median_ms(lambda: nx.spring_layout(graph, seed=7, iterations=50), args.runs)
        method = "force (dense)" if n < 500 else "energy (sparse)"
        print(f"| {n:,} | {ours:.1f} | {theirs:.1f} | {theirs / max(ours, 1e-9):.1f}× | {method} |", flush=True)


if __name__ == "__main__":
    main()
