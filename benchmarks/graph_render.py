"""Benchmark (not a test): time for the Knowledge graph view to draw N nodes in headless Chromium.

Builds a random entity graph shaped like an extracted knowledge graph (preferential attachment,
entity types, descriptions), writes ``ui.graph_view.graph_html`` to a file, opens it with
``file://`` in Debian Chromium driven by Playwright, and measures the time from navigation start
until vis-network has stabilised and drawn (our page records ``window.ragscopeGraph``), then checks
that the canvas has non-blank pixels. Prints medians over ``--runs`` runs. Target: ≤ 3 s at 1,000 nodes.

    python benchmarks/graph_render.py [--sizes 300 1000] [--runs 3]
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ui.graph_view import graph_html  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
TYPES = ["PERSON", "ORG", "GPE", "LOC", "EVENT", "FAC", "NORP"]


def random_graph(n_nodes: int, seed: int = 7) -> nx.Graph:
    """A scale-free graph with entity-like attributes (about 2 edges per node)."""
    rng = random.Random(seed)
    base = nx.barabasi_albert_graph(n_nodes, 2, seed=seed)
    graph = nx.Graph()
    for node in base.nodes:
        graph.add_node(f"e{node}", name=f"Entity {node}", type=rng.choice(TYPES),
                       description=" ".join(rng.choice(["harbour", "flood", "railway", "council", "tide"])
                                            for _ in range(30)))
    for u, v in base.edges:
        graph.add_edge(f"e{u}", f"e{v}", keywords=["related"], description="co-occur", weight=1.0)
    return graph


def draw_once(page, path: Path, timeout_ms: int = 60000) -> dict[str, float]:
    """Load the file and wait for the drawn event; return timings in seconds."""
    started = time.perf_counter()
    page.goto(path.as_uri(), wait_until="load")
    page.wait_for_function(
        "() => window.ragscopeGraph && window.ragscopeGraph.drawn !== null && "
        "(window.ragscopeGraph.stabilized !== null || !network.physics.options.enabled)",
        timeout=timeout_ms)
    wall = time.perf_counter() - started
    nav = page.evaluate("() => ({stab: window.ragscopeGraph.stabilized, drawn: window.ragscopeGraph.drawn})")
    non_blank = page.evaluate(
        """() => { const c = document.querySelector('#mynetwork canvas');
                   const ctx = c.getContext('2d');
                   const d = ctx.getImageData(0, 0, c.width, c.height).data;
                   let n = 0; for (let i = 3; i < d.length; i += 4) { if (d[i] > 0) n++; }
                   return n; }""")
    return {"wall_s": wall, "in_page_s": max(nav["stab"] or 0, nav["drawn"] or 0) / 1000.0,
            "painted_pixels": float(non_blank)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} is missing: run scripts/install-browser.sh")
    out_dir = Path(tempfile.mkdtemp(prefix="ragscope-bench-"))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        print(f"{'nodes':>6} {'edges':>6} {'build_s':>8} {'draw_wall_s':>12} {'in_page_s':>10} {'total_s':>8} "
              f"{'pixels':>8}")
        for size in args.sizes:
            graph = random_graph(size)
            builds, walls, in_page, totals, pixels = [], [], [], [], []
            for run in range(args.runs):
                t0 = time.perf_counter()
                html_page = graph_html(graph, height_px=800)
                builds.append(time.perf_counter() - t0)
                path = out_dir / f"graph_{size}_{run}.html"
                path.write_text(html_page, encoding="utf-8")
                timing = draw_once(page, path)
                walls.append(timing["wall_s"])
                in_page.append(timing["in_page_s"])
                totals.append(builds[-1] + timing["wall_s"])
                pixels.append(timing["painted_pixels"])
            print(f"{size:>6} {graph.number_of_edges():>6} {statistics.median(builds):>8.2f} "
                  f"{statistics.median(walls):>12.2f} {statistics.median(in_page):>10.2f} "
                  f"{statistics.median(totals):>8.2f} {int(statistics.median(pixels)):>8}")
        browser.close()
    print(f"medians over {args.runs} runs. build_s = Python graph_html (force layout + HTML; cached per view by "
          "the page); draw_wall_s = file:// navigation until vis-network has drawn; total_s = both, i.e. an "
          "uncached Knowledge graph view. Target: total ≤ 3 s at 1,000 nodes.")


if __name__ == "__main__":
    main()
