"""SQLite vs PostgreSQL as the system of record, back to back on the same machine: index time of the sample
corpus (fresh workspace per run, runs alternating between the backends, the MiniLM load excluded: one
embedder object serves every run) and retrieval latency per mode over data/sample_questions.jsonl (each
question timed on both backends one after the other). Also checks that every mode retrieves the same
chunks, entities and relations on both backends.

    scripts/start-postgres.sh /tmp/ragscope-pg            # prints the admin URL
    python benchmarks/store_compare.py --store postgresql://postgres@127.0.0.1:PORT/postgres [--runs 2]

Each run creates (and drops) its own database on that server.
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from common import ROOT, median, p95, write_result


def new_database(admin: str) -> str:
    import psycopg

    name = "bench_" + uuid.uuid4().hex[:10]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(admin)._replace(path="/" + name))


def drop_database(admin: str, dsn: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{urlsplit(dsn).path.lstrip("/")}" WITH (FORCE)')


def index_once(folder: Path, spec: str, embedder, sources) -> tuple[float, object]:
    from core.indexing.pipeline import process_pending, register_documents
    from core.workspace import Workspace

    ws = Workspace(folder, embedder=embedder, store=spec)
    started = time.perf_counter()
    with ws.writer():
        register_documents(ws, sources, [])
        report = process_pending(ws)
    elapsed = time.perf_counter() - started
    assert report.processed == len(sources) and not report.failed, report
    return elapsed, ws


def fingerprint(result) -> tuple:
    """What a mode retrieved, in order (chunks, entities, relations, paths, summaries, with scores)."""
    return ([(c.chunk_id, c.score) for c in result.chunks], [(e.key, e.score) for e in result.entities],
            [(r.source_key, r.target_key, r.score) for r in result.relations],
            [(tuple(p.keys), p.score) for p in result.paths],
            [(s.node_id, s.score) for s in result.summaries])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", required=True, help="admin URL of a PostgreSQL server (…/postgres)")
    parser.add_argument("--runs", type=int, default=2, help="index runs per backend (alternating)")
    parser.add_argument("--name", default="store_compare")
    args = parser.parse_args()

    from core.embeddings import local_embedder
    from core.evaluation.questions import load_questions
    from core.loaders import load_path
    from core.retrieval.registry import query_context
    from core.retrieval.registry import modes, retrieve

    samples = sorted(p for p in (ROOT / "data" / "samples").glob("*.md") if p.name.lower() != "readme.md")
    sources = [doc for path in samples for doc in load_path(path)[0]]
    questions = [q.question for q in load_questions(ROOT / "data" / "sample_questions.jsonl")]
    embedder = local_embedder(32)
    embedder.embed(["warm-up"])  # the model load is not part of any timing
    root = Path(tempfile.mkdtemp(prefix="store-compare-"))
    index_s: dict[str, list[float]] = {"sqlite": [], "postgresql": []}
    workspaces, databases = {}, []
    try:
        for run in range(args.runs):
            for backend in ("sqlite", "postgresql"):
                spec = "sqlite" if backend == "sqlite" else new_database(args.store)
                if backend == "postgresql":
                    databases.append(spec)
                elapsed, ws = index_once(root / f"{backend}-{run}", spec, embedder, sources)
                index_s[backend].append(elapsed)
                print(f"index {backend:<10} run {run + 1}: {elapsed:6.1f} s", flush=True)
                old = workspaces.pop(backend, None)
                if old is not None:
                    old.close()
                workspaces[backend] = ws
        latency: dict[str, dict[str, list[float]]] = {}
        differing: list[str] = []
        for ws in workspaces.values():  # warm the views and the models
            for mode in modes():
                retrieve(query_context(ws, "warm-up question about a place"), mode)
        for mode in modes():
            latency[mode] = {"sqlite": [], "postgresql": []}
            for question in questions:
                seen = {}
                for backend, ws in workspaces.items():
                    ctx = query_context(ws, question)
                    started = time.perf_counter()
                    result = retrieve(ctx, mode)
                    latency[mode][backend].append((time.perf_counter() - started) * 1000)
                    seen[backend] = fingerprint(result)
                if seen["sqlite"] != seen["postgresql"]:
                    differing.append(f"{mode}: {question}")
        table = {mode: {b: {"p50_ms": median(v), "p95_ms": p95(v)} for b, v in per.items()}
                 for mode, per in latency.items()}
        for mode, per in table.items():
            ratio = per["postgresql"]["p50_ms"] / per["sqlite"]["p50_ms"]
            print(f"{mode:<7} sqlite p50 {per['sqlite']['p50_ms']:7.1f} ms  postgresql p50 "
                  f"{per['postgresql']['p50_ms']:7.1f} ms  ratio {ratio:4.2f}")
        ratio = median(index_s["postgresql"]) / median(index_s["sqlite"])
        print(f"index median: sqlite {median(index_s['sqlite']):.1f} s, postgresql "
              f"{median(index_s['postgresql']):.1f} s, ratio {ratio:.2f}")
        print(f"mode results identical on both backends: {not differing} ({len(differing)} differ)")
        for line in differing[:10]:
            print("  differs:", line)
        write_result(args.name, {"index_s": index_s, "retrieval": table, "questions": len(questions),
                                 "differing": differing, "load_average": os.getloadavg()})
    finally:
        for ws in workspaces.values():
            ws.close()
        for dsn in databases:
            drop_database(args.store, dsn)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
