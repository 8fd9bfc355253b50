"""Command-line interface: ``python -m core index|status|docs|delete|retry|export|repair|graph-quality|query|compare|eval``."""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from core.types import ProgressEvent
from core.workspace import DEFAULT_WORKSPACE, Workspace

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}
EXIT_CANCELLED = 130  # a resumable stop (Ctrl-C), like an interrupted run


def command(name: str):
    def register(fn):
        COMMANDS[name] = fn
        return fn
    return register


class StderrProgress:
    """Render progress events as one tqdm bar per step on stderr."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.bars: dict[str, Any] = {}

    def __call__(self, event: ProgressEvent) -> None:
        if event.step == "repair":  # a notice, not a bar: say what reconciliation repaired (even with --quiet)
            print(event.message, file=sys.stderr)
            return
        if not self.enabled or event.step != "index":
            return
        from tqdm import tqdm

        bar = self.bars.get(event.step)
        if bar is None:
            bar = self.bars[event.step] = tqdm(total=max(event.total, 1), desc=event.step, unit="doc",
                                               file=sys.stderr, leave=True, dynamic_ncols=True)
        bar.total = max(event.total, 1)
        bar.n = event.done
        if event.message:
            bar.set_postfix_str(event.message[:40])
        bar.refresh()

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()


def cli_settings(args: argparse.Namespace) -> Any:
    """The workspace's settings with the environment over them and the command's flags over both
    (--chroma-url, --embedding-base-url, --embedding-model)."""
    from core.settings import Settings, apply_environment, check_embedding_server, load_settings, with_embedding_server

    path = Path(args.workspace)
    settings = load_settings(path) if path.exists() else apply_environment(Settings())
    if getattr(args, "chroma_url", None):
        settings = settings.with_overrides({"chroma_url": args.chroma_url})
    settings = with_embedding_server(settings, getattr(args, "embedding_base_url", None),
                                     getattr(args, "embedding_model", None))
    check_embedding_server(settings)
    return settings


def open_workspace(args: argparse.Namespace) -> Workspace:
    return Workspace(Path(args.workspace), settings=cli_settings(args))


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


@contextmanager
def graceful_interrupts(cancel: threading.Event) -> Iterator[None]:
    """The first Ctrl-C (or SIGTERM) sets ``cancel``: LLM calls in flight finish (and are cached), no
    new call starts, and the batch's documents go back to 'pending'. A second Ctrl-C stops at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.getsignal(sig) for sig in signals}

    def handler(signum: int, _frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        print("cancelling: waiting for the LLM calls in flight (Ctrl-C again to stop at once)…", file=sys.stderr)

    for sig in signals:
        signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def run_indexing(ws: Workspace, args: argparse.Namespace, work: Callable[..., Any]) -> tuple[Any, bool]:
    """Run ``work(progress, cancel=…, **components)`` under the write lock with the LLM of the flags,
    environment or settings (offline when none or ``--offline``). Returns (report, cancelled)."""
    from core.cli_query import _providers
    from core.types import Cancelled

    cancel = threading.Event()  # shared with the LLM client: Ctrl-C reaches its cancellation
    llm, _keywords = _providers(ws, args, cancel)  # None unless an LLM is configured (flags > env > settings)
    components: dict[str, Any] = {}
    if llm is not None:
        from core.llm.provider import index_components

        components = index_components(ws, llm)
    progress = StderrProgress(enabled=not args.quiet)
    report, cancelled = None, False
    try:
        with graceful_interrupts(cancel), ws.writer(wait=args.wait):
            report = work(progress, cancel=cancel, **components)
    except Cancelled:
        cancelled = True
    finally:
        progress.close()
        if llm is not None:
            llm.flush()  # LLM cache entries and usage counted during the batch transaction
    return report, cancelled


CANCELLED_MESSAGE = "cancelled; run {command} again to resume (finished LLM work is cached)"


@command("index")
def cmd_index(args: argparse.Namespace) -> int:
    from core.loaders import load_paths
    from core.pipeline import IndexReport, process_pending, register_documents

    started = time.perf_counter()
    ws = open_workspace(args)
    sources, failures = load_paths([Path(p) for p in args.paths], max_bytes=int(ws.settings.max_document_mb * 2**20))
    report = IndexReport()

    def work(progress: StderrProgress, **options: Any) -> IndexReport:
        register_documents(ws, sources, failures, report)
        return process_pending(ws, progress, report=report, **options)

    _, cancelled = run_indexing(ws, args, work)
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


@command("status")
def cmd_status(args: argparse.Namespace) -> int:
    status = open_workspace(args).status()
    if args.json:
        emit_json(status)
    else:
        for key, value in status.items():
            print(f"{key:>14}: {value}")
    return 0


@command("docs")
def cmd_docs(args: argparse.Namespace) -> int:
    rows = open_workspace(args).documents_table()
    if args.json:
        emit_json([{k: r[k] for k in ("doc_id", "name", "status", "chunks", "error")} for r in rows])
    else:
        for r in rows:
            print(f"{r['doc_id']:<24} {r['status']:<10} {r['chunks']:>4} chunks  {r['name']}  {r['error']}")
    return 0


@command("delete")
def cmd_delete(args: argparse.Namespace) -> int:
    from core.deletion import delete_documents

    ws = open_workspace(args)
    unknown = [d for d in args.doc_ids if ws.store.document(d) is None]
    with ws.writer(wait=args.wait):
        removed = delete_documents(ws, [d for d in args.doc_ids if d not in unknown])
    for doc_id in unknown:
        print(f"unknown document id: {doc_id}", file=sys.stderr)
    print(f"deleted {removed['documents']} document(s), {removed['chunks']} chunk(s)", file=sys.stderr)
    return 1 if unknown else 0


@command("retry")
def cmd_retry(args: argparse.Namespace) -> int:
    from core.pipeline import IndexReport, process_pending, retry_failed

    ws = open_workspace(args)
    report = IndexReport()
    retried = 0

    def work(progress: StderrProgress, **options: Any) -> IndexReport:
        nonlocal retried
        retried = retry_failed(ws)
        return process_pending(ws, progress, report=report, **options)

    _, cancelled = run_indexing(ws, args, work)
    print(f"retried {retried} document(s); {report.processed} indexed, {len(report.failed)} failed", file=sys.stderr)
    if cancelled:
        print(CANCELLED_MESSAGE.format(command="retry"), file=sys.stderr)
        return EXIT_CANCELLED
    return 1 if report.failed else 0


@command("repair")
def cmd_repair(args: argparse.Namespace) -> int:
    from core.reconcile import reconcile

    if args.reembed:
        from core.reembed import reembed

        emit_json({"reembedded": reembed(Path(args.workspace), cli_settings(args), wait=args.wait)})
        return 0
    ws = open_workspace(args)
    with ws.writer(wait=args.wait):
        ws.record_embedder()
        repaired = reconcile(ws)
    emit_json({"repaired": repaired})
    return 0


@command("export")
def cmd_export(args: argparse.Namespace) -> int:
    from core.export import export_graph

    ws = open_workspace(args)
    path = export_graph(ws, args.format, Path(args.out))
    print(f"wrote {path}", file=sys.stderr)
    return 0


@command("graph-quality")
def cmd_graph_quality(args: argparse.Namespace) -> int:
    from core.graph_quality import graph_quality, render

    report = graph_quality(open_workspace(args))
    if args.json:
        emit_json(report)
    else:
        print(render(report))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="RAGScope: graph-based RAG indexes and retrieval modes.")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", default=str(DEFAULT_WORKSPACE), help="workspace folder (default: %(default)s)")
    common.add_argument("--chroma-url", default=None, help="use a ChromaDB server (http://HOST:PORT) instead of the embedded store")
    common.add_argument("--json", action="store_true", help="print JSON on stdout")
    common.add_argument("--quiet", action="store_true", help="no progress bars")
    common.add_argument("--wait", action="store_true", help="wait for another writer instead of failing")
    sub = parser.add_subparsers(dest="command", required=True)
    from core.cli_query import add_embedding_flags, add_provider_flags

    p = sub.add_parser("index", parents=[common], help="index files, folders or .jsonl corpora")
    p.add_argument("paths", nargs="+")
    add_provider_flags(p)
    add_embedding_flags(p)
    sub.add_parser("status", parents=[common], help="workspace counts")
    sub.add_parser("docs", parents=[common], help="list documents")
    p = sub.add_parser("delete", parents=[common], help="delete documents by id")
    p.add_argument("doc_ids", nargs="+")
    p = sub.add_parser("retry", parents=[common], help="re-index failed (and resume pending) documents")
    add_provider_flags(p)
    add_embedding_flags(p)
    p = sub.add_parser("repair", parents=[common], help="reconcile vectors with the database")
    p.add_argument("--reembed", action="store_true",
                   help="embed every vector again with the configured embedder and switch the workspace to it")
    add_embedding_flags(p)
    sub.add_parser("graph-quality", parents=[common],
                   help="entity names by suspicious rule, alias merges, type conflicts, relations per entity")
    p = sub.add_parser("export", parents=[common], help="export the knowledge graph")
    p.add_argument("--format", choices=["graphml", "json"], default="json")
    p.add_argument("out")
    try:
        from core import cli_query

        cli_query.add_commands(sub, common, command)
    except ImportError:
        pass
    return parser


def main(argv: list[str] | None = None) -> int:
    from core.embeddings import EmbedderMismatchError
    from core.settings import SettingsError
    from core.storage.schema import CorruptWorkspaceError
    from core.workspace import WorkspaceBusyError

    from core.remote_embeddings import EmbeddingServerError

    known: tuple = (WorkspaceBusyError, EmbedderMismatchError, SettingsError, CorruptWorkspaceError, ValueError,
                    EmbeddingServerError)
    try:
        from core.llm.client import LLMError

        known = known + (LLMError,)
    except ImportError:
        pass
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except known as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return 130
