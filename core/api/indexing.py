"""``core.api`` functions that put documents into a workspace and take them out: upload, index, delete,
retry, resume, the sample corpus, and loading the embedding model as an indexing step of its own.

Every indexing action (app and CLI) goes through ``index_pending``, which takes the workspace's write
lock. Upload, index, cancel, delete, retry, resume and re-index are editor functions; ``sample_paths`` and
``load_embedder`` are viewer functions (they change no data). Re-exported by ``core.api``.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from core.auth import Principal, Role, requires
from core.fairness import slots
from core.indexing.pipeline import IndexReport, process_pending, register_documents, retry_failed
from core.indexing.running import cancel_runs, registered
from core.loaders import ParseLimits, load_uploads
from core.types import LoadFailure, ProgressCallback, SourceDocument, cancel_scope, no_progress
from core.workspace import Workspace

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "data" / "samples"


@requires(Role.editor)
def index_pending(principal: Principal, ws: Workspace, progress: ProgressCallback = no_progress, report: Optional[IndexReport] = None,
                  llm: Any = None, cancel: Optional[threading.Event] = None, wait: bool = False,
                  before: Optional[Callable[[IndexReport], Any]] = None) -> IndexReport:
    """Run ``before(report)`` then ``process_pending`` under the write lock, with the LLM's extractor
    and summarizers when ``llm`` is given (its cache and usage rows are flushed afterwards). Every
    indexing action (app and CLI) goes through here."""
    report = report if report is not None else IndexReport()
    event = cancel if cancel is not None else getattr(llm, "cancel_event", None)
    options: dict[str, Any] = {"cancel": event if event is not None else threading.Event()}
    if llm is not None:
        from core.llm.provider import index_components

        options.update(index_components(ws, llm))
    try:
        # core.fairness: a heavy slot (never the last one), taken before the write lock; cancel_indexing reaches the run
        with slots().slot(heavy=True), ws.writer(wait=wait), registered(_workspace_key(ws), options["cancel"]):
            if before is not None:
                before(report)
            return process_pending(ws, progress, report=report, **options)
    finally:
        if llm is not None:
            llm.flush()


def _workspace_key(ws: Workspace) -> str:
    """The key under which indexing runs on ``ws`` are registered (its folder)."""
    return str(Path(ws.path).resolve())


@requires(Role.editor)
def cancel_indexing(principal: Principal, ws: Workspace) -> int:
    """Ask the indexing runs on ``ws`` in this process to stop at their next safe point (editor or above:
    a viewer who watches a run's progress cannot stop it). Unfinished documents stay pending; returns the
    number of runs reached (0: nothing was running)."""
    return cancel_runs(_workspace_key(ws))


@requires(Role.editor)
def index_sources(principal: Principal, ws: Workspace, sources: list[SourceDocument], failures: list[LoadFailure],
                  progress: ProgressCallback = no_progress, wait: bool = False, llm: Any = None,
                  cancel: Optional[threading.Event] = None, report: Optional[IndexReport] = None) -> IndexReport:
    """Register then index documents under the workspace write lock.

    ``llm`` (a chat model, see ``core.llm.provider.chat_from_settings``) switches extraction and the
    profile and tree summaries to the LLM, as the CLI does. ``cancel`` (default: the LLM client's
    cancel event) stops the run with ``core.types.Cancelled``: unfinished documents stay pending and
    ``report`` (when given) holds what was done before the stop."""
    event = cancel if cancel is not None else getattr(llm, "cancel_event", None)
    event = event if event is not None else threading.Event()  # registration checks it between batches
    return index_pending(principal, ws, progress, report, llm, event, wait,
                         lambda rep: register_documents(ws, sources, failures, rep, progress, event))


@requires(Role.editor)
def index_uploads(principal: Principal, ws: Workspace, files: Iterable[tuple[str, bytes]], progress: ProgressCallback = no_progress,
                  **options: Any) -> IndexReport:
    """Index uploaded files (name, bytes); bad files become failed documents with a reason.
    ``options``: ``llm``, ``cancel``, ``report`` and ``wait`` of ``index_sources``. Parsing is part of the
    run: ``cancel_indexing`` reaches it (between files, and a file in the parsing worker is stopped)."""
    event = options.get("cancel") or getattr(options.get("llm"), "cancel_event", None) or threading.Event()
    with registered(_workspace_key(ws), event), cancel_scope(event):
        sources, failures = load_uploads(files, int(ws.settings.max_document_mb * 2**20),
                                         ParseLimits.from_settings(ws.settings))  # bounded: core.parsing
    return index_sources(principal, ws, sources, failures, progress, **dict(options, cancel=event))


@requires(Role.editor)
def index_text(principal: Principal, ws: Workspace, name: str, text: str, progress: ProgressCallback = no_progress,
               **options: Any) -> IndexReport:
    """Index pasted text as one document (``options`` as for ``index_sources``)."""
    return index_uploads(principal, ws, [(name if name.endswith((".txt", ".md")) else name + ".txt", text.encode("utf-8"))],
                         progress, **options)


@requires(Role.viewer)
def sample_paths(principal: Principal) -> list[Path]:
    """The sample corpus's articles (``data/samples``; ``data/README.md`` describes them)."""
    return sorted(p for p in SAMPLES_DIR.glob("*.md") if p.name.lower() != "readme.md")


@requires(Role.editor)
def delete(principal: Principal, ws: Workspace, doc_ids: list[str], wait: bool = False) -> dict[str, int]:
    """Delete documents (and everything derived from them) under the write lock; counts removed."""
    from core.indexing.deletion import delete_documents

    with ws.writer(wait=wait):
        return delete_documents(ws, doc_ids)


@requires(Role.editor)
def retry(principal: Principal, ws: Workspace, progress: ProgressCallback = no_progress, llm: Any = None,
          cancel: Optional[threading.Event] = None, report: Optional[IndexReport] = None) -> IndexReport:
    """Set failed documents back to pending and index every pending one (with ``llm`` if given)."""
    return index_pending(principal, ws, progress, report, llm, cancel, False, lambda _rep: retry_failed(ws))


@requires(Role.editor)
def resume(principal: Principal, ws: Workspace, progress: ProgressCallback = no_progress, llm: Any = None,
           cancel: Optional[threading.Event] = None, report: Optional[IndexReport] = None) -> IndexReport:
    """Index the pending documents (those a cancelled or interrupted run left)."""
    return index_pending(principal, ws, progress, report, llm, cancel, False)


@requires(Role.editor)
def reindex(principal: Principal, ws: Workspace, progress: ProgressCallback = no_progress, llm: Any = None,
            cancel: Optional[threading.Event] = None, report: Optional[IndexReport] = None) -> IndexReport:
    """Index every processed document again from its stored text with the workspace's current settings (a
    new chunk size): under the write lock each is set back to pending (its chunks, vectors, graph share and
    subtree removed), then indexed; until this runs the documents keep what they were indexed with. A
    cancelled run leaves the rest pending (``resume`` finishes it)."""
    from core.indexing.deletion import reset_documents

    return index_pending(principal, ws, progress, report, llm, cancel, False, lambda _rep: reset_documents(ws))


@requires(Role.viewer)
def load_embedder(principal: Principal, ws: Workspace) -> None:
    """Load ``ws``'s embedding model now (an indexing job shows this as its own step)."""
    ws.embedder  # noqa: B018 - the property loads the model
