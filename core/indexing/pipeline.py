"""The incremental indexing pipeline: register documents, then process pending ones in batches.

Per batch: chunk → one spaCy (or LLM) extraction per chunk → store fragments → re-merge only the
touched entities/relations → summary subtrees + right-most corpus path → embed only new or changed
items → upsert vectors → commit everything in ONE SQLite transaction → mark documents processed.
A crash leaves documents 'pending'/'processing'; the next run resumes them, and reconciliation
removes vectors that no committed row refers to. A failing document is marked failed with its reason
and the rest of the batch goes on. A cancellation (``core.types.Cancelled``, e.g. ``LLMCancelled``
from the app's Cancel button, or the ``cancel`` event checked between batches) is not a failure:
the batch's documents go back to 'pending' and the exception propagates to the caller.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Iterable, Optional

from core.citations import source_positions
from core.indexing.batch import BatchIndexer
from core.indexing.common import (Extractor, IndexReport, SpacyExtractor, check_cancel, content_hash,
                                  progress_event)
from core.indexing.deletion import delete_documents
from core.indexing.overall import OverallProgress
from core.indexing.prefetch import Prefetcher
from core.indexing.reconcile import reconcile
from core.tokens import count_tokens
from core.types import (Cancelled, LoadFailure, ProgressCallback, ServiceUnavailable, SourceDocument, cancel_scope,
                        no_progress)
from core.workspace import Workspace

__all__ = ["Extractor", "IndexReport", "SpacyExtractor", "nothing_to_index", "process_pending", "register_documents",
           "retry_failed"]


def nothing_to_index(ws: Workspace, sources: Iterable[SourceDocument]) -> bool:
    """True when registering ``sources`` would change nothing and no document waits: every source is
    stored under its id with the same content hash and is not failed, and none is pending or
    processing, and every one that has positions (pages, sections, lines) has them stored. The hash
    check a no-op re-index makes before it loads any model or LLM client."""
    counts = ws.records.status_counts()
    if counts.get("pending", 0) or counts.get("processing", 0):
        return False
    for src in sources:
        digest = content_hash(src.text)
        existing = ws.records.document(src.doc_id or ("doc-" + digest[:16]))
        if existing is None or existing.content_hash != digest or existing.status == "failed":
            return False
        if source_positions(existing.doc_id, src) and not ws.records.positions([existing.doc_id]):
            return False  # indexed before positions were kept: registering records them
    return True


REGISTER_BATCH = 1000  # documents per registration transaction (lookups, deletes and one executemany)


def register_documents(ws: Workspace, sources: Iterable[SourceDocument], failures: Iterable[LoadFailure] = (),
                       report: Optional[IndexReport] = None, progress: ProgressCallback = no_progress,
                       cancel: Optional[threading.Event] = None) -> IndexReport:
    """Add new documents as 'pending'. Identical content is a no-op; a changed file with the same
    name (or a JSONL doc_id with new text) replaces the old version; load failures are recorded as
    failed documents with their reason. The caller holds the workspace write lock.

    Time is linear in the number of sources: they go in batches of ``REGISTER_BATCH``, each looked up by
    primary key in one query, inserted in one ``executemany`` (the sequence number read once, through
    its index) and committed on its own, with a 'register' progress event after each and ``cancel``
    checked before each. A cancelled registration raises ``Cancelled``: the batches before it stay
    registered as pending (Resume indexes them), the rest were never registered."""
    report = report or IndexReport()
    items = list(sources)
    total = len(items)
    seen: set[str] = set()
    for start in range(0, total, REGISTER_BATCH):
        try:
            check_cancel(cancel, start, total)
            with cancel_scope(cancel):  # counting one huge document's tokens checks it too
                _register_batch(ws, items[start:start + REGISTER_BATCH], seen, report)
        except Cancelled:  # nothing of this batch was written (it is counted before its one commit)
            ws.records.rollback()
            with ws.records.unit_of_work():
                ws.records.log("registration_cancelled", {"registered": start, "total": total,
                                                          "note": "the registered documents are pending: Resume indexes them"})
            raise
        done = min(start + REGISTER_BATCH, total)
        progress_event(progress, "register", done, total, f"registered {done:,} of {total:,} document(s)")
    failed = list(failures)
    if failed:
        with ws.records.unit_of_work():
            for fail in failed:
                doc_id = "failed-" + content_hash(fail.name)[:16]
                if ws.records.document(doc_id) is None:
                    ws.records.insert_document(doc_id, fail.name, "", "", "", 0)
                ws.records.set_status(doc_id, "failed", fail.reason)
                report.failed.append({"name": fail.name, "reason": fail.reason})
            ws.bump_generation()
    return report


def _register_batch(ws: Workspace, batch: list[SourceDocument], seen: set[str], report: IndexReport) -> None:
    """One batch of ``register_documents``; ``seen`` holds the ids registered earlier in the same call
    (a repeated id is unchanged, and an earlier batch's document is never replaced by a same-named one)."""
    hashed = [(src, content_hash(src.text)) for src in batch]
    ids = [src.doc_id or ("doc-" + digest[:16]) for src, digest in hashed]
    existing_rows = ws.records.documents_by_ids(ids)
    inserts: list[tuple[str, str, str, str, str, int]] = []
    places: list[tuple[str, str, list[int]]] = []  # where each page, section or line starts (core.citations)
    originals: list[tuple[str, str, bytes]] = []  # a PDF's uploaded file, for the source viewer
    to_delete: list[str] = []
    reset: list[str] = []
    for (src, digest), doc_id in zip(hashed, ids):
        if doc_id in seen:
            report.unchanged += 1
            continue
        seen.add(doc_id)
        existing = existing_rows.get(doc_id)
        if existing is not None and existing.content_hash == digest:
            if existing.status == "failed":
                reset.append(doc_id)
            else:
                report.unchanged += 1
                if not ws.records.positions([doc_id]):  # indexed before positions were kept: the re-parse
                    places.extend(source_positions(doc_id, src))  # gives them, nothing re-embedded
                if src.original and ws.records.original(doc_id) is None:
                    originals.append((doc_id, src.name, src.original))
            continue
        olds = [existing.doc_id] if existing is not None else []
        if src.doc_id is None:
            olds += [d.doc_id for d in ws.records.documents_named(src.name)
                     if d.doc_id != doc_id and d.doc_id not in seen and not d.source.lower().endswith(".jsonl")
                     and d.status != "failed"]
        if olds:
            report.replaced += 1
            to_delete.extend(olds)
        inserts.append((doc_id, src.name, src.source, digest, src.text, count_tokens(src.text)))
        places.extend(source_positions(doc_id, src))
        if src.original:
            originals.append((doc_id, src.name, src.original))
    if to_delete:
        delete_documents(ws, sorted(set(to_delete)))
    with ws.records.unit_of_work():
        for doc_id in reset:
            ws.records.set_status(doc_id, "pending")
        ws.records.delete_load_failures(row[1] for row in inserts)
        ws.records.insert_documents(inserts)
        for doc_id, kind, starts in places:
            ws.records.set_positions(doc_id, kind, starts)
        for doc_id, name, data in originals:
            ws.records.set_original(doc_id, name, data)
        report.new_documents += len(inserts)
        ws.bump_generation()


def process_pending(ws: Workspace, progress: ProgressCallback = no_progress, extractor: Optional[Extractor] = None,
                    batch_tokens: Optional[int] = None, report: Optional[IndexReport] = None,
                    profile_summarizer=None, tree_summarizer=None,
                    cancel: Optional[threading.Event] = None, overlap: Optional[bool] = None) -> IndexReport:
    """Index every pending (or interrupted) document, batch by batch.

    ``extractor`` defaults to spaCy; ``profile_summarizer(kind, name, fragments)`` and
    ``tree_summarizer(texts)`` default to the extractive summaries (LLM ones plug in here).
    ``cancel`` is checked before every batch; when it is set (or the LLM client raises
    ``LLMCancelled``) the run stops with ``Cancelled`` and the unfinished documents stay 'pending'; so do
    they when the embeddings server fails (``ServiceUnavailable``, re-raised).
    ``overlap`` prepares the next batch while the current one embeds (``core.indexing.prefetch``); None =
    ``overlap_by_default``.
    """
    report = report or IndexReport()
    batch_tokens = batch_tokens or int(os.environ.get("RAGSCOPE_BATCH_TOKENS") or 24000)  # tokens per batch
    pending = [d for d in ws.records.documents() if d.status in ("pending", "processing")]
    total = len(pending)
    summarizers = (profile_summarizer, tree_summarizer)
    if not pending:
        # a no-op run still notices vectors lost since the last run (a deleted chroma/ folder, a new
        # server): the quick check compares counts and only then lists ids and re-embeds
        repaired = reconcile(ws, quick=True) if ws.records.has_chunks() else {}
        if repaired:
            progress_event(progress, "repair", 1, 1, f"repaired vectors: {repaired}")
        progress_event(progress, "index", 0, 0, "nothing to index")
        return report
    extractor = extractor or SpacyExtractor(ws.settings.entity_types)
    with cancel_scope(cancel):  # loading the embedding model honours Cancel (core.cancellable)
        ws.record_embedder()
    repaired = reconcile(ws)
    if repaired:
        progress_event(progress, "repair", 1, 1, f"repaired vectors: {repaired}")
    done = 0
    batches = split_batches(pending, batch_tokens)
    # every event below also says the whole run's fraction, time left and batch (core.indexing.overall)
    progress = overall = OverallProgress(progress, [sum(d.tokens for d in b) for b in batches], report.timings_s)
    progress_event(progress, "index", 0, total, f"{total} document(s) to index in {len(batches)} batch(es)")
    if overlap is None:
        overlap = overlap_by_default(ws.embedder, extractor)
    prefetch = None
    if overlap and len(batches) > 1:
        prefetch = Prefetcher(ws, extractor, report, cancel)
    try:
        for i, batch in enumerate(batches):
            check_cancel(cancel, done, total)
            overall.start_batch(i)
            prepared = prefetch.take(batch) if prefetch else None
            if prefetch and i + 1 < len(batches):
                prefetch.start(batches[i + 1])  # extracted while this batch is embedded and written
            done = _process_batch(ws, batch, extractor, report, progress, done, total, summarizers, prepared, cancel)
    finally:
        if prefetch:
            prefetch.close()
    progress_event(progress, "index", done, total, "done")
    return report


def overlap_by_default(embedder: Any, extractor: Extractor) -> bool:
    """Prepare the next batch ahead (``core.indexing.prefetch``) when the embedder is remote (its wait is
    the network's), or when spaCy extracts on a machine of two or more cores: then the next batch's parse
    (one core) runs while this batch's merge, tree and local embedding run, and both cores are busy. Not
    with an LLM extractor beside a local embedder: its requests would then overlap the profile
    summaries' and exceed the configured LLM concurrency."""
    if getattr(embedder, "remote", False):
        return True
    return getattr(extractor, "name", "") == "spacy" and (os.cpu_count() or 1) >= 2


def split_batches(docs: list, batch_tokens: int) -> list[list]:
    """Consecutive documents grouped until a group reaches ``batch_tokens`` tokens (the last may be smaller)."""
    batches: list[list] = [[]]
    size = 0
    for doc in docs:
        batches[-1].append(doc)
        size += doc.tokens
        if size >= batch_tokens:
            batches.append([])
            size = 0
    return [b for b in batches if b]


def back_to_pending(ws: Workspace, doc_ids: list[str], reason: str) -> int:
    """Put interrupted documents ('processing') back to 'pending'; return how many (run-log entry)."""
    ws.records.rollback()  # an interrupted batch's unit of work must not be committed
    with ws.records.unit_of_work():
        rows = ws.records.processing_to_pending(doc_ids)
        ws.records.log("indexing_cancelled", {"documents": list(doc_ids), "reason": reason[:300]})
        ws.bump_generation()
    return rows


def _process_batch(ws: Workspace, docs: list, extractor: Extractor, report: IndexReport,
                   progress: ProgressCallback, done: int, total: int, summarizers: tuple[Any, Any] = (None, None),
                   prepared=None, cancel: Optional[threading.Event] = None) -> int:
    indexer = BatchIndexer(ws, extractor, report, progress, *summarizers, cancel=cancel)
    try:
        indexer.run(docs, prepared)
    except (Cancelled, KeyboardInterrupt, ServiceUnavailable) as exc:  # a resumable stop, not a document failure
        back_to_pending(ws, [d.doc_id for d in docs], str(exc) or type(exc).__name__)
        raise
    except Exception:  # noqa: BLE001 - isolate the failing document by retrying one at a time
        if len(docs) == 1:
            indexer.fail(docs[0])
        else:
            for i, doc in enumerate(docs):
                single = BatchIndexer(ws, extractor, report, progress, *summarizers, cancel=cancel)
                try:
                    single.run([doc])
                except (Cancelled, KeyboardInterrupt, ServiceUnavailable) as exc:
                    back_to_pending(ws, [d.doc_id for d in docs[i:]], str(exc) or type(exc).__name__)
                    raise
                except Exception:  # noqa: BLE001
                    single.fail(doc)
    done += len(docs)
    progress_event(progress, "index", done, total, f"{docs[-1].name}")
    return done


def retry_failed(ws: Workspace) -> int:
    """Set failed documents that still have their text back to pending; return how many."""
    with ws.records.unit_of_work():
        rows = ws.records.failed_to_pending()
        ws.bump_generation()
    return rows
