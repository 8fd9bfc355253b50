"""The library's front door for the app, the CLI and scripts: one call per user action.

Every public function takes the caller's ``core.auth.Principal`` first and declares its minimum role
with ``@requires`` (``core.auth``): viewer functions browse, query, compare, inspect, evaluate and export;
editor functions upload, index, delete documents and annotate; admin functions change settings and
create or delete workspaces. A caller below the role gets ``PermissionDeniedError`` before anything
runs; a function with a ``ws`` parameter also checks that the caller may open that workspace. The CLI
and the local single-user app pass ``core.auth.LOCAL_ADMIN``. Workspace administration, read-only
views and annotations are in ``core.api_views``, the read views of an index and the evaluation runs in
``core.api_reads`` (both re-exported here), so that this module stays small.
The pages and ``ui/`` read and write only through these functions (tests/test_architecture.py)."""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from core.auth import Principal, Role, requires
from core.indexing.pipeline import IndexReport, process_pending, register_documents, retry_failed
from core.loaders import ParseLimits, load_uploads
from core.settings import Settings
from core.types import LoadFailure, ProgressCallback, RetrievalResult, SourceDocument, no_progress
from core.workspace import Workspace

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "data" / "samples"


@requires(Role.editor)
def index_pending(principal: Principal, ws: Workspace, progress: ProgressCallback = no_progress, report: Optional[IndexReport] = None,
                  llm: Any = None, cancel: Optional[threading.Event] = None, wait: bool = False,
                  before: Optional[Callable[[IndexReport], Any]] = None) -> IndexReport:
    """Run ``before(report)`` then ``process_pending`` under the write lock, with the LLM's extractor
    and summarizers when ``llm`` is given (its cache and usage rows are flushed afterwards). Every
    indexing action (app and CLI) goes through here."""
    report = report if report is not None else IndexReport()
    options: dict[str, Any] = {"cancel": cancel if cancel is not None else getattr(llm, "cancel_event", None)}
    if llm is not None:
        from core.llm.provider import index_components

        options.update(index_components(ws, llm))
    try:
        with ws.writer(wait=wait):
            if before is not None:
                before(report)
            return process_pending(ws, progress, report=report, **options)
    finally:
        if llm is not None:
            llm.flush()


@requires(Role.editor)
def index_sources(principal: Principal, ws: Workspace, sources: list[SourceDocument], failures: list[LoadFailure],
                  progress: ProgressCallback = no_progress, wait: bool = False, llm: Any = None,
                  cancel: Optional[threading.Event] = None, report: Optional[IndexReport] = None) -> IndexReport:
    """Register then index documents under the workspace write lock.

    ``llm`` (a chat model, see ``core.llm.provider.chat_from_settings``) switches extraction and the
    profile and tree summaries to the LLM, as the CLI does. ``cancel`` (default: the LLM client's
    cancel event) stops the run with ``core.types.Cancelled``: unfinished documents stay pending and
    ``report`` (when given) holds what was done before the stop."""
    return index_pending(principal, ws, progress, report, llm, cancel, wait,
                         lambda rep: register_documents(ws, sources, failures, rep))


@requires(Role.editor)
def index_uploads(principal: Principal, ws: Workspace, files: Iterable[tuple[str, bytes]], progress: ProgressCallback = no_progress,
                  **options: Any) -> IndexReport:
    """Index uploaded files (name, bytes); bad files become failed documents with a reason.
    ``options``: ``llm``, ``cancel``, ``report`` and ``wait`` of ``index_sources``."""
    sources, failures = load_uploads(files, int(ws.settings.max_document_mb * 2**20),
                                     ParseLimits.from_settings(ws.settings))  # bounded: core.parsing
    return index_sources(principal, ws, sources, failures, progress, **options)


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


@requires(Role.viewer)
def run_modes(principal: Principal, ws: Workspace, question: str, modes: list[str] | str = "all", settings: Optional[Settings] = None,
              with_answers: bool = True, llm=None, keywords=None, concurrent: bool = True
              ) -> dict[str, RetrievalResult]:
    """Run several modes on one question (sharing the query embedding and keywords) and answer each."""
    from core.retrieval.base import QueryContext  # here: indexing and the read-only calls load no retrieval
    from core.retrieval.registry import parse_modes, retrieve

    from core.answers import answer

    mode_list = parse_modes(modes) if isinstance(modes, str) else list(modes)
    ctx = QueryContext(ws, question, settings=settings, keywords=keywords)
    ws.vectors  # open the vector client once, before any worker thread needs it
    ctx.keywords()
    # the question and its names in one embedding batch: the modes that link names (local, hybrid,
    # mix, path) and the extractive answers (question entities) need them
    from core.answers.inputs import question_names

    ctx.prefetch([question] + question_names(ws, question, ctx.strategies.seeds, ctx))
    def one(mode: str) -> RetrievalResult:
        result = retrieve(ctx, mode)
        if with_answers:
            started = time.perf_counter()
            result.answer = answer(result, ws, llm, ctx.state, ctx)  # ctx.state: shared by all modes
            result.timings_ms["answer"] = round((time.perf_counter() - started) * 1000, 3)
        return result

    if concurrent and len(mode_list) > 1 and llm is not None:
        workers = max(1, min((settings or ws.settings).llm_concurrency, len(mode_list)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(one, mode_list))
    else:
        results = [one(m) for m in mode_list]
    return dict(zip(mode_list, results))


@requires(Role.editor)
def import_lightrag(principal: Principal, ws: Workspace, directory: Path | str, source_model: Optional[str] = None,
                    lightrag_workspace: Optional[str] = None, progress: ProgressCallback = no_progress,
                    reuse_vectors: bool = False, wait: bool = False, vectors_model: Optional[str] = None) -> Any:
    """Import (or re-import: only the difference) a LightRAG working directory into ``ws``
    (``core.importers.lightrag``); returns its ``ImportReport``."""
    from core.importers.lightrag import import_lightrag as run_import

    return run_import(ws, directory, source_model=source_model, lightrag_workspace=lightrag_workspace,
                      progress=progress, reuse_vectors=reuse_vectors, wait=wait, vectors_model=vectors_model)


from core.api_views import *  # noqa: E402,F401,F403 - the admin, read-only and annotation functions
from core.api_views import __all__ as _views  # noqa: E402
from core.api_import import *  # noqa: E402,F401,F403 - server-side LightRAG import (admin)
from core.api_import import __all__ as _imports  # noqa: E402
from core.api_reads import *  # noqa: E402,F401,F403 - the read views of an index and the evaluation runs
from core.api_reads import __all__ as _reads  # noqa: E402

__all__ = ["index_pending", "index_sources", "index_uploads", "index_text", "sample_paths", "delete", "retry",
           "resume", "run_modes", "import_lightrag", *_views, *_imports, *_reads]
