"""Offline indexing throughput (tokens/s end to end, time per stage), median of runs.

    python benchmarks/index_throughput.py [--corpus dev_musique_full|large] [--runs 3]

'large' = every corpus.jsonl under ../shared/data (~0.5M tokens). Each run indexes into a fresh
workspace in a temporary folder; the model load is excluded (done once before timing)."""
from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from common import SHARED_DATA, median, peak_rss_mb, require, write_result


def corpus_paths(name: str) -> list[Path]:
    if name == "large":
        return sorted(SHARED_DATA.glob("*/corpus.jsonl"))
    return [require(SHARED_DATA / name / "corpus.jsonl")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", default="dev_musique_full")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", default="", help="keep the last workspace at this path")
    args = parser.parse_args()

    from core.embeddings import local_embedder
    from core.extraction.nlp import load_nlp
    from core.loaders import load_paths
    from core.pipeline import IndexReport, process_pending, register_documents
    from core.workspace import Workspace

    local_embedder().embed(["warm-up text", "a second warm-up text"])  # first-call set-up not timed
    load_nlp()
    sources, failures = load_paths(corpus_paths(args.corpus))
    runs = []
    for run in range(args.runs):
        folder = Path(tempfile.mkdtemp(prefix="ragscope_bench_"))
        ws = Workspace(folder / "ws")
        started = time.perf_counter()
        with ws.writer():
            report = register_documents(ws, sources, failures, IndexReport())
            process_pending(ws, report=report)
        elapsed = time.perf_counter() - started
        runs.append({"seconds": elapsed, "tokens": report.tokens, "tokens_per_s": report.tokens / elapsed,
                     "stages": dict(report.timings_s), "documents": report.processed,
                     "failed": len(report.failed)})
        print(f"run {run + 1}: {report.processed} docs, {report.tokens} tokens in {elapsed:.1f}s "
              f"= {report.tokens / elapsed:.0f} tokens/s; stages: "
              + ", ".join(f"{k} {v:.1f}s" for k, v in report.timings_s.items()))
        ws.close()
        if args.keep and run == args.runs - 1:
            shutil.rmtree(args.keep, ignore_errors=True)
            shutil.move(str(folder / "ws"), args.keep)
        shutil.rmtree(folder, ignore_errors=True)
    stages = sorted({s for r in runs for s in r["stages"]})
    summary = {
        "corpus": args.corpus, "runs": len(runs), "tokens": runs[0]["tokens"],
        "median_tokens_per_s": median([r["tokens_per_s"] for r in runs]),
        "median_seconds": median([r["seconds"] for r in runs]),
        "median_stage_seconds": {s: median([r["stages"].get(s, 0.0) for r in runs]) for s in stages},
        "peak_rss_mb": peak_rss_mb(), "target_tokens_per_s": 2000,
    }
    summary["ratio_to_target"] = summary["median_tokens_per_s"] / 2000
    print(f"\nmedian {summary['median_tokens_per_s']:.0f} tokens/s over {len(runs)} run(s) "
          f"(target 2000, ratio {summary['ratio_to_target']:.2f}); peak RSS {summary['peak_rss_mb']:.0f} MB")
    for stage, seconds in summary["median_stage_seconds"].items():
        print(f"  {stage:<8} {seconds:7.2f}s  ({100 * seconds / summary['median_seconds']:.0f}%)")
    write_result(f"index_{args.corpus}", summary | {"all_runs": runs})


if __name__ == "__main__":
    main()
