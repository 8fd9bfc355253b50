"""Measure the hostile files of issue 20 through ``core.loaders.load_bytes``: seconds, CPU, characters
and this process's RSS growth, for the bounded loaders (default) or a saved copy of the old ones.

    python benchmarks/hostile_files.py                  # the current, bounded loaders
    git show c9045cc:core/loaders.py > /tmp/old_loaders.py
    python benchmarks/hostile_files.py --loaders /tmp/old_loaders.py   # before (minutes!)

The files are built by ``tests/hostile_files.py`` (the same ones ``tests/test_hostile_files.py`` uses).
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import psutil  # noqa: E402

import hostile_files as H  # noqa: E402

FILES = {
    "shared-stream.pdf (20 pages, one stream)": ("shared.pdf", lambda: H.shared_stream_pdf(20, 40_000)),
    "many-pages.pdf (3,000 pages)": ("many.pdf", lambda: H.shared_stream_pdf(3_000, 50)),
    "expanding.docx (200,000 paragraphs)": ("bomb.docx", lambda: H.expanding_docx(200_000)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loaders", help="a loaders module file to measure instead of core.loaders")
    args = parser.parse_args()
    if args.loaders:
        spec = importlib.util.spec_from_file_location("measured_loaders", args.loaders)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    else:
        import core.loaders as module
    process = psutil.Process()
    for label, (name, build) in FILES.items():
        data = build()
        rss = process.memory_info().rss
        wall, cpu = time.perf_counter(), time.process_time()
        docs, failures = module.load_bytes(name, data)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        chars = sum(len(d.text) for d in docs)
        grown = (process.memory_info().rss - rss) / 2**20
        outcome = failures[0].reason if failures else "loaded"
        print(f"{label}: {len(data):,} bytes -> {wall:.1f} s wall, {cpu:.1f} s CPU (this process), "
              f"{chars:,} characters, RSS +{grown:.0f} MB; {outcome}")


if __name__ == "__main__":
    main()
