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

import hashlib
import os
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Optional, Protocol

from core.chunking import chunk_text
from core.extraction.markup import plain_text
from core.merge import MergedEntity, MergedRelation, merge_entity, merge_relation
from core.storage import graph_store
from core.summarize import extractive_summary
from core.tokens import count_tokens
from core.tree import SummaryTree
from core.types import (Cancelled, ChunkExtraction, LoadFailure, ProgressCallback, ServiceUnavailable, SourceDocument,
                        no_progress)
from core.workspace import Workspace


class Extractor(Protocol):
    """Turns chunk texts into extraction records; ``titles`` (optional keyword) gives, per text, the
    document title it starts with (None otherwise)."""

    name: str

    def extract(self, texts: list[str]) -> list[ChunkExtraction]:
        ...


class SpacyExtractor:
    """Offline extraction: one spaCy parse per chunk gives both graphs."""

    name = "spacy"

    def __init__(self, entity_types: list[str]) -> None:
        self.entity_types = entity_types

    def extract(self, texts: list[str], titles: Optional[list[Optional[str]]] = None) -> list[ChunkExtraction]:
        from core.extraction.spacy_extract import extract_chunks

        return extract_chunks(texts, self.entity_types, batch_size=64, titles=titles)


@dataclass
class IndexReport:
    new_documents: int = 0
    unchanged: int = 0
    replaced: int = 0
    processed: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    tokens: int = 0
    chunks_embedded: int = 0
    entities_embedded: int = 0
    relations_embedded: int = 0
    summaries_recomputed: int = 0
    dropped_records: int = 0  # extraction records the parser could not use (see Workspace.dropped_records)
    timings_s: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def as_dict(self) -> dict:
        data = dict(self.__dict__)
        data["timings_s"] = {k: round(v, 3) for k, v in self.timings_s.items()}
        return data


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def register_documents(ws: Workspace, sources: Iterable[SourceDocument], failures: Iterable[LoadFailure] = (),
                       report: Optional[IndexReport] = None) -> IndexReport:
    """Add new documents as 'pending'. Identical content is a no-op; a changed file with the same
    name (or a JSONL doc_id with new text) replaces the old version; load failures are recorded as
    failed documents with their reason. The caller holds the workspace write lock."""
    from core.deletion import delete_documents

    report = report or IndexReport()
    inserts: list[tuple[str, SourceDocument, str]] = []
    to_delete: list[str] = []
    reset: list[str] = []
    seen: set[str] = set()
    for src in sources:
        digest = content_hash(src.text)
        doc_id = src.doc_id or ("doc-" + digest[:16])
        if doc_id in seen:
            report.unchanged += 1
            continue
        seen.add(doc_id)
        existing = ws.store.document(doc_id)
        if existing is not None and existing.content_hash == digest:
            if existing.status == "failed":
                reset.append(doc_id)
            else:
                report.unchanged += 1
            continue
        olds = [existing.doc_id] if existing is not None else []
        if src.doc_id is None:
            olds += [d.doc_id for d in ws.store.documents_named(src.name)
                     if d.doc_id != doc_id and not d.source.lower().endswith(".jsonl") and d.status != "failed"]
        if olds:
            report.replaced += 1
            to_delete.extend(olds)
        inserts.append((doc_id, src, digest))
    if to_delete:
        delete_documents(ws, sorted(set(to_delete)))
    with ws.store.transaction():
        for doc_id in reset:
            ws.store.set_status(doc_id, "pending")
        for doc_id, src, digest in inserts:
            ws.store.conn.execute("DELETE FROM documents WHERE name=? AND status='failed' AND content_hash=''",
                                  (src.name,))
            ws.store.insert_document(doc_id, src.name, src.source, digest, src.text, count_tokens(src.text))
            report.new_documents += 1
        for fail in failures:
            doc_id = "failed-" + content_hash(fail.name)[:16]
            if ws.store.document(doc_id) is None:
                ws.store.insert_document(doc_id, fail.name, "", "", "", 0)
            ws.store.set_status(doc_id, "failed", fail.reason)
            report.failed.append({"name": fail.name, "reason": fail.reason})
        ws.bump_generation()
    return report


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
    ``overlap`` prepares the next batch while the current one embeds (``core.prefetch``); None = when the
    embedder is remote.
    """
    from core.reconcile import reconcile

    report = report or IndexReport()
    batch_tokens = batch_tokens or int(os.environ.get("RAGSCOPE_BATCH_TOKENS") or 24000)  # tokens per batch
    pending = [d for d in ws.store.documents() if d.status in ("pending", "processing")]
    total = len(pending)
    summarizers = (profile_summarizer, tree_summarizer)
    if not pending:
        # a no-op run still notices vectors lost since the last run (a deleted chroma/ folder, a new
        # server): the quick check compares counts and only then lists ids and re-embeds
        has_chunks = ws.store.conn.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None
        repaired = reconcile(ws, quick=True) if has_chunks else {}
        if repaired:
            progress_event(progress, "repair", 1, 1, f"repaired vectors: {repaired}")
        progress_event(progress, "index", 0, 0, "nothing to index")
        return report
    extractor = extractor or SpacyExtractor(ws.settings.entity_types)
    ws.record_embedder()
    repaired = reconcile(ws)
    if repaired:
        progress_event(progress, "repair", 1, 1, f"repaired vectors: {repaired}")
    done = 0
    progress_event(progress, "index", 0, total, f"{total} document(s) to index")
    batches = split_batches(pending, batch_tokens)
    if overlap is None:
        overlap = bool(getattr(ws.embedder, "remote", False))
    prefetch = None
    if overlap and len(batches) > 1:
        from core.prefetch import Prefetcher

        prefetch = Prefetcher(ws, extractor, report)
    try:
        for i, batch in enumerate(batches):
            _check_cancel(cancel, done, total)
            prepared = prefetch.take(batch) if prefetch else None
            if prefetch and i + 1 < len(batches):
                prefetch.start(batches[i + 1])  # extracted while this batch is embedded and written
            done = _process_batch(ws, batch, extractor, report, progress, done, total, summarizers, prepared)
    finally:
        if prefetch:
            prefetch.close()
    progress_event(progress, "index", done, total, "done")
    return report


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


def progress_event(progress: ProgressCallback, step: str, done: int, total: int, message: str = "") -> None:
    from core.types import ProgressEvent

    progress(ProgressEvent(step, done, total, message))


def _check_cancel(cancel: Optional[threading.Event], done: int, total: int) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled(f"indexing cancelled after {done} of {total} document(s)")


def back_to_pending(ws: Workspace, doc_ids: list[str], reason: str) -> int:
    """Put interrupted documents ('processing') back to 'pending'; return how many (run-log entry)."""
    conn = ws.store.conn
    if conn.in_transaction:  # an interrupted batch transaction must not be committed
        conn.rollback()
    with ws.store.transaction():
        marks = ",".join("?" * len(doc_ids))
        rows = conn.execute(f"UPDATE documents SET status='pending', error='' WHERE status='processing' "
                            f"AND doc_id IN ({marks})", tuple(doc_ids)).rowcount
        ws.store.log("indexing_cancelled", {"documents": list(doc_ids), "reason": reason[:300]})
        ws.bump_generation()
    return rows


def _process_batch(ws: Workspace, docs: list, extractor: Extractor, report: IndexReport,
                   progress: ProgressCallback, done: int, total: int, summarizers: tuple = (None, None),
                   prepared=None) -> int:
    from core.batch import BatchIndexer

    indexer = BatchIndexer(ws, extractor, report, progress, *summarizers)
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
                single = BatchIndexer(ws, extractor, report, progress, *summarizers)
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


def merge_touched(ws: Workspace, entity_keys: set[str], relation_keys: set[tuple[str, str]], summarizer=None
                  ) -> tuple[list[MergedEntity], list[MergedRelation], list[str], list[str]]:
    """Re-merge touched entities/relations from all their remaining fragments.

    Returns (changed entities, changed relations, vector ids to delete, keys deleted). Rows are
    written to the caller's transaction; only items whose embedded text changed are returned.
    """
    conn = ws.store.conn
    settings = ws.settings
    old_entity_vectors = graph_store.existing_vector_ids(conn, "entities", sorted(entity_keys))
    changed_entities: list[MergedEntity] = []
    changed_relations: list[MergedRelation] = []
    removed: list[str] = []
    names: dict[str, str] = {}
    renamed: list[str] = []
    for key, fragments in graph_store.entity_fragments(conn, sorted(entity_keys)).items():
        if not fragments:
            conn.execute("DELETE FROM entities WHERE entity_key=?", (key,))
            if key in old_entity_vectors:
                removed.append(old_entity_vectors[key])
            continue
        merged = merge_entity(key, fragments, settings, summarizer)
        names[key] = merged.name
        old = conn.execute("SELECT name FROM entities WHERE entity_key=?", (key,)).fetchone()
        if old is not None and old[0] != merged.name:
            renamed.append(key)
        conn.execute("INSERT OR REPLACE INTO entities(entity_key, name, type, description, source_chunk_ids, "
                     "vector_id, aliases) VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (key, merged.name, merged.type, merged.description, _json(merged.source_chunk_ids),
                      merged.vector_id, _json(merged.aliases)))
        if old_entity_vectors.get(key) != merged.vector_id:
            changed_entities.append(merged)
            if key in old_entity_vectors:
                removed.append(old_entity_vectors[key])
    # a relation's embedded text names its endpoints: when an entity's display name changes, its other
    # relations are re-merged too, so the result never depends on which batch brought the new name
    relation_keys = set(relation_keys)
    for key in renamed:
        relation_keys.update((a, b) for a, b in conn.execute(
            "SELECT source_key, target_key FROM relations WHERE source_key=? OR target_key=?", (key, key)))
    old_relation_vectors = graph_store.existing_vector_ids(conn, "relations", sorted(relation_keys))
    for pair, fragments in graph_store.relation_fragments(conn, sorted(relation_keys)).items():
        if not fragments:
            conn.execute("DELETE FROM relations WHERE source_key=? AND target_key=?", pair)
            if pair in old_relation_vectors:
                removed.append(old_relation_vectors[pair])
            continue
        for key in pair:
            if key not in names:
                row = conn.execute("SELECT name FROM entities WHERE entity_key=?", (key,)).fetchone()
                names[key] = row[0] if row else key
        merged = merge_relation(pair, fragments, names, settings, summarizer)
        conn.execute("INSERT OR REPLACE INTO relations VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (pair[0], pair[1], _json(merged.keywords), merged.description, merged.weight,
                      _json(merged.source_chunk_ids), merged.vector_id))
        if old_relation_vectors.get(pair) != merged.vector_id:
            changed_relations.append(merged)
            if pair in old_relation_vectors:
                removed.append(old_relation_vectors[pair])
    return changed_entities, changed_relations, removed, []


def _json(value) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def make_tree_summarizer(ws: Workspace, cache: dict):
    """Extractive LexRank summaries (TF-IDF similarity by default; embedder vectors when the
    ``tree_summary_similarity`` setting says so, cached so upper levels reuse them)."""
    import numpy as np

    from core.summarize import tfidf_vectors

    def embed_cached(sentences: list[str]):
        missing = [s for s in dict.fromkeys(sentences) if s not in cache]
        if missing:
            cache.update(zip(missing, ws.embedder.embed(missing)))
        return np.stack([cache[s] for s in sentences])

    similarity = embed_cached if ws.settings.tree_summary_similarity == "embedder" else tfidf_vectors

    def summarize(texts: list[str]) -> str:
        # summaries never quote markup ("## Foundation", list bullets): they read the plain text
        return extractive_summary([plain_text(t) for t in texts], similarity, ws.settings.summary_tokens)

    return summarize


def new_tree(ws: Workspace, cache: dict, summarizer=None) -> SummaryTree:
    return SummaryTree(ws.store, ws.settings.tree_group_size, summarizer or make_tree_summarizer(ws, cache))


def chunk_document(ws: Workspace, doc_id: str, text: str):
    return chunk_text(doc_id, text, ws.settings.chunk_tokens, ws.settings.chunk_overlap)


def now() -> float:
    return time.perf_counter()


def retry_failed(ws: Workspace) -> int:
    """Set failed documents that still have their text back to pending; return how many."""
    with ws.store.transaction():
        rows = ws.store.conn.execute(
            "UPDATE documents SET status='pending', error='' WHERE status='failed' AND content_hash != ''")
        ws.bump_generation()
    return rows.rowcount
