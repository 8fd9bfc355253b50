"""Overlap extraction with embedding: prepare the next indexing batch while the current one is written.

With an embeddings server, a batch's embedding is network waiting for the indexing process: while the
main thread merges, builds the tree, waits for its entity/relation/tree vectors and commits batch N, one
worker thread chunks and extracts batch N+1 (``BatchIndexer.prepare``), and that batch's chunk windows
are already sent to the server. Preparation touches no database (the main thread reads the texts first),
so the result is the same as indexing batch after batch; a preparation that fails is simply done again
on the main thread, where a failing document is isolated as usual.

Used by ``core.indexing.pipeline.process_pending`` when the embedder is remote (``embedder.remote``), and
with a local embedder when spaCy extracts on two or more cores (``overlap_by_default``): spaCy's parse of
batch N+1 holds one core while batch N's merge, tree and embedding (onnxruntime releases the interpreter
lock while it runs) use the other, instead of one core idling through each parse.
"""
from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Optional

from core.indexing.batch import BatchIndexer, PreparedBatch
from core.indexing.common import Extractor, IndexReport
from core.storage.records import DocumentRow
from core.types import no_progress
from core.workspace import Workspace

log = logging.getLogger("core.indexing.pipeline")


class Prefetcher:
    """One batch prepared ahead on a worker thread."""

    def __init__(self, ws: Workspace, extractor: Extractor, report: IndexReport,
                 cancel: Optional[threading.Event] = None) -> None:
        self._indexer = BatchIndexer(ws, extractor, report, no_progress, cancel=cancel)
        self._ws = ws
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="ragscope-prefetch")
        self._ids: Optional[list[str]] = None
        self._future: Optional[Future] = None
        self._stop = threading.Event()

    def start(self, docs: list[DocumentRow]) -> None:
        """Begin preparing ``docs`` (their texts are read here, on the caller's thread)."""
        texts = {d.doc_id: self._ws.records.document_text(d.doc_id) for d in docs}
        self._ids = [d.doc_id for d in docs]
        self._future = self._pool.submit(self._indexer.prepare, docs, texts, self._stop)

    def take(self, docs: list[DocumentRow]) -> Optional[PreparedBatch]:
        """The prepared batch for ``docs`` (waits for it), or None when it was not started or failed."""
        future, ids = self._future, self._ids
        self._future, self._ids = None, None
        if future is None or ids != [d.doc_id for d in docs]:
            return None
        try:
            return future.result()
        except Exception as exc:  # noqa: BLE001 - prepared again on the main thread, which reports it
            log.warning("preparing the next batch ahead failed (%s: %s); preparing it again", type(exc).__name__, exc)
            return None

    def close(self) -> None:
        """Stop: a batch prepared but not taken is dropped (its documents are still pending)."""
        self._stop.set()  # a preparation still running drops its chunk requests when its extraction ends
        future, self._future = self._future, None
        if future is not None and not future.cancel() and future.done() and future.exception() is None:
            future.result().chunk_vectors.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)
