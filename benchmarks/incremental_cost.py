"""Incremental cost: add one ~3,000-token document to a large workspace vs to an empty one.

    python benchmarks/incremental_cost.py --workspace LARGE_WS [--runs 3] [--tokens 3000]

The large workspace is never modified: every run copies it to a temporary folder first (the copy is
not timed). The added document is made from the project's own sample articles (data/samples), so it
is new to any workspace built from ../shared/data. Time covers registering + processing the document
(extraction, merge of touched entities/relations, summary tree, embedding, reconciliation). Work is
what the pipeline reports: chunks, entities and relations embedded, summary nodes recomputed.
Prints medians and the large/empty time ratio (target <= 1.5).
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from common import ROOT, median, require, write_result

WORK_FIELDS = ("chunks_embedded", "entities_embedded", "relations_embedded", "summaries_recomputed")


def probe_document(target_tokens: int) -> str:
    """About ``target_tokens`` tokens of text made from the sample articles, in file order."""
    from core.tokens import count_tokens, truncate

    parts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "data" / "samples").glob("*.md"))
             if p.name != "README.md"]
    text = "\n\n".join(parts)
    if count_tokens(text) < target_tokens:
        raise SystemExit(f"the sample corpus has fewer than {target_tokens} tokens")
    return truncate(text, target_tokens)


def add_once(folder: Path, text: str) -> dict:
    from core.indexing.pipeline import IndexReport, process_pending, register_documents
    from core.types import SourceDocument
    from core.workspace import Workspace

    ws = Workspace(folder)
    try:
        started = time.perf_counter()
        with ws.writer():
            report = register_documents(ws, [SourceDocument(name="incremental-probe.md", text=text)], [], IndexReport())
            process_pending(ws, report=report)
        seconds = time.perf_counter() - started
    finally:
        ws.close()
    if report.processed != 1:
        raise SystemExit(f"the probe document was not indexed: {report.failed}")
    return {"seconds": seconds, "tokens": report.tokens, **{f: getattr(report, f) for f in WORK_FIELDS},
            "stages": dict(report.timings_s)}


def run_series(label: str, source: Path | None, text: str, runs: int) -> list[dict]:
    results = []
    for run in range(runs):
        tmp = Path(tempfile.mkdtemp(prefix="ragscope_incr_"))
        target = tmp / "ws"
        try:
            if source is not None:
                shutil.copytree(source, target, ignore=shutil.ignore_patterns("write.lock"))
            result = add_once(target, text)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        results.append(result)
        print(f"{label} run {run + 1}: {result['seconds']:.2f}s, "
              + ", ".join(f"{f} {result[f]}" for f in WORK_FIELDS))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workspace", required=True, help="the large workspace (left unchanged)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=3000)
    args = parser.parse_args()

    from core.embeddings import local_embedder
    from core.extraction.nlp import load_nlp

    large = require(Path(args.workspace))
    local_embedder().embed(["warm-up text", "a second warm-up text"])  # first-call set-up not timed
    load_nlp()
    text = probe_document(args.tokens)
    series = {"empty": run_series("empty", None, text, args.runs),
              "large": run_series("large", large, text, args.runs)}
    summary = {name: {"median_seconds": median([r["seconds"] for r in rs]),
                      **{f"median_{f}": median([r[f] for r in rs]) for f in WORK_FIELDS}}
               for name, rs in series.items()}
    ratio = summary["large"]["median_seconds"] / summary["empty"]["median_seconds"]
    print(f"\nprobe document: {series['empty'][0]['tokens']} tokens")
    for name, row in summary.items():
        print(f"  {name:<6} median {row['median_seconds']:.2f}s  "
              + ", ".join(f"{f} {row['median_' + f]:.0f}" for f in WORK_FIELDS))
    print(f"ratio large/empty = {ratio:.2f} (target <= 1.5)")
    write_result("incremental_cost", {"workspace": str(large), "runs": args.runs, "summary": summary,
                                      "ratio": ratio, "target_ratio": 1.5, "all_runs": series})


if __name__ == "__main__":
    main()
