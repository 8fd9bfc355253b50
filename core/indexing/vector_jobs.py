"""A committed batch's vectors embedded and written behind the next batch (local embedder, two or more cores).

Without it, a batch's main thread runs its Python steps (write the rows, merge, summary tree: one core,
the interpreter lock) and then embeds its entity, relation and tree texts (onnxruntime, both cores)
before it commits; the next batch's parse runs meanwhile on the prefetch thread
(``core.indexing.prefetch``), but when the Python steps run, the model has nothing to do and one core
idles. With ``VectorJobs``, a batch commits its rows first and hands its vector work to one worker
thread: embed the texts (the same calls in the same slices, so the same vectors, bit for bit), upsert
the chunk windows' and the graph's vectors, delete the vectors it replaced. The main thread meanwhile
writes, merges and builds the tree of the next batch; it waits for the job only before its own commit,
so at most one committed batch is without its vectors, and each commit (and the run's end) follows the
previous batch's vector writes. The worker touches ChromaDB only, never SQLite; jobs run one at a time
in batch order, so a vector a later batch replaces is upserted before it is deleted.

A crash after a batch's commit and before its job ends leaves rows whose vectors are missing: the next
run's reconciliation (``core.indexing.reconcile``) re-embeds them from the stored rows, as after a lost
ChromaDB folder. A job that fails raises ``VectorWritesFailed`` at the next wait: the batch then being
indexed goes back to pending and the run stops; the missing vectors are repaired by the next run.
"""
from __future__ import annotations

import contextvars
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Optional

log = logging.getLogger("core.indexing.pipeline")


class VectorWritesFailed(RuntimeError):
    """A committed batch's vectors could not be embedded or written (the next run repairs them)."""


class VectorJobs:
    """One batch's vector writes at a time on a worker thread (see the module docstring)."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="ragscope-vector-writes")
        self._future: Optional[Future] = None

    def submit(self, job: Callable[..., Any], *args: Any) -> None:
        """Start ``job(*args)`` once the previous job is done (the caller waited for it before committing)."""
        self.wait()
        context = contextvars.copy_context()  # the run's cancel scope and settings reach the worker
        self._future = self._pool.submit(context.run, job, *args)

    def wait(self) -> None:
        """Wait for the job in flight; raise ``VectorWritesFailed`` when it failed."""
        future, self._future = self._future, None
        if future is None:
            return
        try:
            future.result()
        except BaseException as exc:  # noqa: BLE001 - any failure of the worker stops the run, resumably
            raise VectorWritesFailed(f"writing a committed batch's vectors failed ({type(exc).__name__}: {exc}); "
                                     "the next indexing run re-embeds them") from exc

    def close(self) -> None:
        """Finish the job in flight (a committed batch's vectors), then stop the worker. A failure here is
        logged, not raised: the caller is already leaving with its own result or exception."""
        try:
            self.wait()
        except VectorWritesFailed as exc:
            log.warning("%s", exc)
        finally:
            self._pool.shutdown(wait=True)
