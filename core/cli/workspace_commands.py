"""The commands that build and maintain a workspace: ``index``, ``status``, ``docs``, ``delete``,
``retry``, ``repair``, ``export``, ``graph-quality``. Indexing goes through ``core.api`` like the app."""
from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from core.auth import LOCAL_ADMIN  # the CLI runs as the operator
from core.cli.base import (CANCELLED_MESSAGE, EXIT_CANCELLED, StderrProgress, add_embedding_flags,
                           add_provider_flags, cli_settings, emit_json, graceful_interrupts, open_workspace, providers)
from core.types import Cancelled
from core.workspace import Workspace


def run_indexing(ws: Workspace, args: argparse.Namespace, index: Callable[..., Any]) -> bool:
    """Run ``index(progress=…, llm=…, cancel=…, wait=…)`` (a ``core.api`` indexing call) with the LLM
    of the run's settings (offline when none or ``--offline``), Ctrl-C as a resumable stop.
    Returns True when the run was cancelled."""
    cancel = threading.Event()  # shared with the LLM client: Ctrl-C reaches its cancellation
    llm, _keywords = providers(ws, args, cancel_event=cancel)
    progress = StderrProgress(enabled=not args.quiet)
    try:
        with graceful_interrupts(cancel):
            index(progress=progress, llm=llm, cancel=cancel, wait=args.wait)
    except Cancelled:
        return True
    finally:
        progress.close()
    return False


class _Changed(Exception):
    """Raised under the write lock when another writer changed the workspace after the hash check."""


def unchanged_run(ws: Workspace, args: argparse.Namespace, sources: list[Any], report: Any) -> bool:
    """The no-op re-index: when every source is already indexed with the same content (the hash check,
    ``nothing_to_index``), take the write lock, check again, and only reconcile the vectors (a quick
    count check that reads an embedded store's file): no model, spaCy or LLM client is loaded.
    Returns False when something is to be indexed (then the caller runs the full indexing)."""
    from core import api
    from core.indexing.pipeline import nothing_to_index

    if not nothing_to_index(ws, sources):
        return False

    def still_unchanged(_report: Any) -> None:
        if not nothing_to_index(ws, sources):
            raise _Changed

    try:
        api.index_pending(LOCAL_ADMIN, ws, progress=StderrProgress(enabled=False), report=report, wait=args.wait,
                          before=still_unchanged)
    except _Changed:
        return False
    report.unchanged = len(sources)
    return True


def cmd_index(args: argparse.Namespace) -> int:
    from core import api
    from core.loaders import ParseLimits, load_paths
    from core.indexing.pipeline import IndexReport

    started = time.perf_counter()
    ws = open_workspace(args)
    sources, failures = load_paths([Path(p) for p in args.paths], max_bytes=int(ws.settings.max_document_mb * 2**20),
                                  limits=ParseLimits.from_settings(ws.settings))
    report = IndexReport()
    if all(getattr(fail, "skipped", False) for fail in failures) and unchanged_run(ws, args, sources, report):
        cancelled = False  # nothing changed: no model, spaCy or LLM client was loaded
    else:
        cancelled = run_indexing(ws, args, lambda **options: api.index_sources(LOCAL_ADMIN, ws, sources, failures,
                                                                                report=report, **options))
    elapsed = time.perf_counter() - started
    summary = report.as_dict() | {"seconds": round(elapsed, 2), "cancelled": cancelled,
                                  "tokens_per_s": round(report.tokens / elapsed, 1) if elapsed else 0.0}
    stats = getattr(ws.loaded_embedder, "stats", None)  # the embeddings server's client-side cost
    if stats is not None:
        summary["embedding_server"] = cost = stats.snapshot()
        print(f"embeddings server: {cost['requests']} requests ({cost['retries']} retries), {cost['texts']} texts, "
              f"{cost['request_bytes'] / 1e6:.1f} MB sent, {cost['response_bytes'] / 1e6:.1f} MB received, "
              f"{cost['wait_s']:.1f}s waiting", file=sys.stderr)
    if args.json:
        emit_json(summary)
    for fail in report.failed:
        print(f"failed: {fail['name']}: {fail['reason']}", file=sys.stderr)
    for skip in [f for f in failures if getattr(f, "skipped", False)]:  # a zip's files of a type no loader reads
        print(f"skipped: {skip.name}: {skip.reason}", file=sys.stderr)
    print(f"{report.new_documents} new document(s), {report.unchanged} unchanged, {report.replaced} replaced, "
          f"{report.processed} indexed, {len(report.failed)} failed; {report.chunks_embedded} chunks, "
          f"{report.entities_embedded} entities, {report.relations_embedded} relations, "
          f"{report.summaries_recomputed} summaries embedded in {elapsed:.1f}s", file=sys.stderr)
    if report.dropped_records:
        print(f"the extraction parser dropped {report.dropped_records} record(s) it could not use "
              "(status: dropped_records; reasons in the run log)", file=sys.stderr)
    if cancelled:
        print(CANCELLED_MESSAGE.format(command="index"), file=sys.stderr)
        return EXIT_CANCELLED
    return 1 if report.failed else 0


def cmd_status(args: argparse.Namespace) -> int:
    ws = open_workspace(args, read_only=True)
    status = ws.status()
    if args.json:
        emit_json(status)
    else:
        for key, value in status.items():
            print(f"{key:>15}: {_status_value(key, value)}")
        from core import api

        gaps = api.position_gaps(LOCAL_ADMIN, ws)  # documents whose citations cannot name pages yet
        if gaps:
            print(gaps, file=sys.stderr)
    return 0


def _status_value(key: str, value: Any) -> str:
    """One ``status`` value as a person reads it (``--json`` gives the raw values)."""
    if key == "embedder" and isinstance(value, dict):
        where = f" at {value['base_url']}" if value.get("base_url") else ""
        return f"{value.get('kind', '?')} ({value.get('model', '?')}, {value.get('dimension', '?')} dimensions){where}"
    if key == "llm_usage" and isinstance(value, dict):
        if not value:
            return "none (offline)"
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items()) or "none"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def cmd_docs(args: argparse.Namespace) -> int:
    rows = open_workspace(args, read_only=True).documents_table()
    if args.json:
        emit_json([{k: r[k] for k in ("doc_id", "name", "status", "chunks", "error")} for r in rows])
    else:
        for r in rows:
            print(f"{r['doc_id']:<24} {r['status']:<10} {r['chunks']:>4} chunks  {r['name']}  {r['error']}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    from core import api

    ws = open_workspace(args)
    unknown = [d for d in args.doc_ids if ws.records.document(d) is None]
    removed = api.delete(LOCAL_ADMIN, ws, [d for d in args.doc_ids if d not in unknown], wait=args.wait)
    for doc_id in unknown:
        print(f"unknown document id: {doc_id}", file=sys.stderr)
    print(f"deleted {removed['documents']} document(s), {removed['chunks']} chunk(s)", file=sys.stderr)
    return 1 if unknown else 0


def cmd_retry(args: argparse.Namespace) -> int:
    from core import api
    from core.indexing.pipeline import IndexReport, retry_failed

    ws = open_workspace(args)
    report = IndexReport()
    retried = 0

    def reset_failed(_report: IndexReport) -> None:
        nonlocal retried
        retried = retry_failed(ws)

    cancelled = run_indexing(ws, args, lambda **options: api.index_pending(LOCAL_ADMIN, ws, report=report, before=reset_failed,
                                                                            **options))
    print(f"retried {retried} document(s); {report.processed} indexed, {len(report.failed)} failed", file=sys.stderr)
    if cancelled:
        print(CANCELLED_MESSAGE.format(command="retry"), file=sys.stderr)
        return EXIT_CANCELLED
    return 1 if report.failed else 0


def cmd_repair(args: argparse.Namespace) -> int:
    from core.indexing.reconcile import reconcile

    if args.reembed:
        from core.indexing.reembed import reembed

        emit_json({"reembedded": reembed(Path(args.workspace), cli_settings(args), wait=args.wait)})
        return 0
    if args.types:
        from core.indexing.retype import retype_entities

        emit_json({"types": retype_entities(open_workspace(args), wait=args.wait)})
        return 0
    ws = open_workspace(args)
    with ws.writer(wait=args.wait):
        ws.record_embedder()
        repaired = reconcile(ws)
        if args.sentences:
            from core.indexing.reconcile import backfill_sentence_vectors

            emit_json({"repaired": repaired, "sentence_vectors": backfill_sentence_vectors(ws)})
            return 0
    emit_json({"repaired": repaired})
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from core.export import export_graph

    ws = open_workspace(args, read_only=True)
    path = export_graph(ws, args.format, Path(args.out))
    print(f"wrote {path}", file=sys.stderr)
    return 0


def cmd_graph_quality(args: argparse.Namespace) -> int:
    from core.graph_quality import graph_quality, render

    report = graph_quality(open_workspace(args, read_only=True))
    if args.json:
        emit_json(report)
    else:
        print(render(report))
    return 0


def add_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register this module's sub-commands on the parser's sub-parsers."""
    p = sub.add_parser("index", parents=[common], help="index files, folders or .jsonl corpora")
    p.add_argument("paths", nargs="+")
    add_provider_flags(p)
    add_embedding_flags(p)
    p.set_defaults(run=cmd_index)
    sub.add_parser("status", parents=[common], help="workspace counts").set_defaults(run=cmd_status)
    sub.add_parser("docs", parents=[common], help="list documents").set_defaults(run=cmd_docs)
    p = sub.add_parser("delete", parents=[common], help="delete documents by id")
    p.add_argument("doc_ids", nargs="+")
    p.set_defaults(run=cmd_delete)
    p = sub.add_parser("retry", parents=[common], help="re-index failed (and resume pending) documents")
    add_provider_flags(p)
    add_embedding_flags(p)
    p.set_defaults(run=cmd_retry)
    p = sub.add_parser("repair", parents=[common], help="reconcile vectors with the database")
    p.add_argument("--reembed", action="store_true",
                   help="embed every vector again with the configured embedder and switch the workspace to it")
    p.add_argument("--sentences", action="store_true",
                   help="add the sentence vectors a workspace indexed before they were stored lacks (the chunk "
                        "windows run once more; chunk vectors are not changed)")
    p.add_argument("--types", action="store_true",
                   help="recompute every entity's type from its stored mentions with the current typing rule "
                        "(no re-index; names, descriptions and vectors unchanged; hand-edited entities kept)")
    add_embedding_flags(p)
    p.set_defaults(run=cmd_repair)
    sub.add_parser("graph-quality", parents=[common],
                   help="entity names by suspicious rule, alias merges, type conflicts, relations per entity"
                   ).set_defaults(run=cmd_graph_quality)
    p = sub.add_parser("export", parents=[common], help="export the knowledge graph")
    p.add_argument("--format", choices=["graphml", "json"], default="json")
    p.add_argument("out")
    p.set_defaults(run=cmd_export)
