"""What the extraction/embedding overlap brings when the embeddings server costs the indexing machine no CPU.

    python benchmarks/embedding_overlap.py [--corpus dev_musique] [--latency 0.25] [--runs 2] [--batch-tokens 3000]

A server on other hardware is stood in for by the tests' fake OpenAI-compatible server
(``tests/test_remote_embedder.py``: deterministic vectors, 384-d), run in its own process, that answers each
request after a fixed latency and does no model work. The corpus is indexed alternately batch after batch (``overlap=False``) and
with the next batch extracted while the current one embeds (``overlap=True``); medians and their ratio."""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, SHARED_DATA, median, require, write_result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="dev_musique")
    parser.add_argument("--latency", type=float, default=0.25, help="seconds per request at the fake server")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--batch-tokens", type=int, default=3000,
                        help="tokens per indexing batch (the overlap needs several batches; default 24,000 makes "
                             "dev_musique a single batch)")
    args = parser.parse_args()

    from core.extraction.nlp import load_nlp
    from core.loaders import load_paths
    from core.indexing.pipeline import IndexReport, process_pending, register_documents
    from core.settings import Settings
    from core.workspace import Workspace

    load_nlp()
    server = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; sys.path.insert(0, sys.argv[1]); "
         "from test_remote_embedder import FakeEmbeddingServer; "
         "s = FakeEmbeddingServer(dim=384, delay_s=float(sys.argv[2])); print(s.url, flush=True); time.sleep(86400)",
         str(ROOT / "tests"), str(args.latency)], stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().strip()
    sources, failures = load_paths([require(SHARED_DATA / args.corpus / "corpus.jsonl")])
    settings = Settings(embedder="openai", embedding_base_url=url, embedding_model="fake-model")
    rates: dict[bool, list[float]] = {False: [], True: []}
    try:
        for _ in range(args.runs):
            for overlap in (False, True):
                folder = Path(tempfile.mkdtemp(prefix="ragscope_overlap_"))
                ws = Workspace(folder / "ws", settings=settings)
                ws.embedder.embed(["warm-up"])
                started = time.perf_counter()
                with ws.writer():
                    report = register_documents(ws, sources, failures, IndexReport())
                    process_pending(ws, report=report, overlap=overlap, batch_tokens=args.batch_tokens)
                seconds = time.perf_counter() - started
                rates[overlap].append(report.tokens / seconds)
                print(f"overlap={overlap}: {report.tokens} tokens in {seconds:.1f}s = {report.tokens / seconds:.0f} "
                      "tokens/s; " + ", ".join(f"{k} {v:.1f}s" for k, v in report.timings_s.items()), flush=True)
                ws.close()
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    summary = {"corpus": args.corpus, "latency_s": args.latency, "runs": args.runs, "batch_tokens": args.batch_tokens,
               "median_tokens_per_s_sequential": median(rates[False]),
               "median_tokens_per_s_overlap": median(rates[True])}
    summary["ratio"] = summary["median_tokens_per_s_overlap"] / summary["median_tokens_per_s_sequential"]
    print(f"\nmedian tokens/s: sequential {summary['median_tokens_per_s_sequential']:.0f}, overlapped "
          f"{summary['median_tokens_per_s_overlap']:.0f} (ratio {summary['ratio']:.2f})")
    write_result(f"embedding_overlap_{args.corpus}", summary | {"all": {str(k): v for k, v in rates.items()}})


if __name__ == "__main__":
    main()
