"""Long documents: the effect of embedding a chunk window by window (``chunk_vector_windows``).

MiniLM reads the first 256 wordpieces of a text, a fifth of a 1,200-token chunk. This benchmark
indexes a long-document corpus twice (windows on, then off: the chunk's start only), and reports the
indexing time of each run and the chunk-level recall of quoted gold spans per mode (questions written
for RAGScope: benchmarks/questions/christmas_carol.jsonl, gold given as quoted spans so it survives
re-chunking).

    python benchmarks/long_documents.py [--corpus ../shared/data/demo_christmas_carol/corpus.jsonl]
        [--questions benchmarks/questions/christmas_carol.jsonl] [--modes all] [--keep DIR]
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from common import ROOT, SHARED_DATA, require, write_result


def build(path: Path, corpus: Path, windows: bool) -> dict:
    from core.api import index_sources
    from core.auth import LOCAL_ADMIN
    from core.loaders import load_path
    from core.settings import Settings
    from core.workspace import Workspace

    ws = Workspace(path, settings=Settings(chunk_vector_windows=windows))
    ws.save_settings(ws.settings)
    sources, failures = load_path(corpus)
    started = time.perf_counter()
    report = index_sources(LOCAL_ADMIN, ws, sources, failures)
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 2), "embed_seconds": round(report.timings_s.get("embed", 0.0), 2),
            "tokens": report.tokens, "chunks": report.chunks_embedded}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", default=str(SHARED_DATA / "demo_christmas_carol" / "corpus.jsonl"))
    parser.add_argument("--questions", default=str(ROOT / "benchmarks" / "questions" / "christmas_carol.jsonl"))
    parser.add_argument("--modes", default="all")
    parser.add_argument("--keep", default="", help="keep the two workspaces under this folder")
    args = parser.parse_args()

    from core.evaluation.questions import load_questions
    from core.evaluation.runner import evaluate
    from core.retrieval.registry import parse_modes
    from core.workspace import Workspace

    corpus = require(Path(args.corpus))
    questions = load_questions(require(Path(args.questions)))
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ragscope_long_"))
    out: dict = {"corpus": str(corpus), "questions": len(questions), "runs": {}}
    try:
        for windows in (True, False):
            name = "windows" if windows else "start_only"
            path = root / name
            shutil.rmtree(path, ignore_errors=True)
            indexing = build(path, corpus, windows)
            report = evaluate(Workspace(path), questions, parse_modes(args.modes), (1, 3, 5), include_bm25=True)
            spans = {m: v.get("span_recall@k", {}) for m, v in report.modes.items()}
            out["runs"][name] = {"indexing": indexing, "span_recall@k": spans}
            print(f"{name:<10} indexed {indexing['tokens']} tokens in {indexing['seconds']} s "
                  f"(embedding {indexing['embed_seconds']} s, {indexing['chunks']} chunks)")
            for mode, recall in spans.items():
                print(f"  {mode:<7} " + "  ".join(f"span R@{k} {100 * (v or 0):5.1f}" for k, v in recall.items()))
        on, off = out["runs"]["windows"]["indexing"], out["runs"]["start_only"]["indexing"]
        out["indexing_time_ratio"] = round(on["seconds"] / max(off["seconds"], 1e-9), 2)
        out["embedding_time_ratio"] = round(on["embed_seconds"] / max(off["embed_seconds"], 1e-9), 2)
        print(f"windows / start only: indexing time x{out['indexing_time_ratio']}, "
              f"embedding time x{out['embedding_time_ratio']}")
        write_result("long_documents", out)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
