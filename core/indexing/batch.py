"""Index one batch of pending documents in a single SQLite transaction (see ``core.indexing.pipeline``).

The run's ``cancel`` event reaches every wait of the batch: the extraction checks it after each
paragraph, and the embeddings server's requests (chunk windows, then entity, relation and tree texts)
carry it into their retry waits, so a Cancel during a ``Retry-After`` stops within the retry policy's
poll interval (``core.retry.CANCEL_POLL_S``) and the batch's documents go back to pending."""
from __future__ import annotations

import inspect
import os
import re
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence, cast

import numpy as np

from core.embeddings import chunk_windows
from core.extraction.aliases import resolve_document
from core.indexing.common import Extractor, IndexReport, chunk_document, progress_event
from core.indexing.remerge import merge_touched, new_tree
from core.indexing.vector_writes import (delete_vectors, graph_texts, live_vector_ids, upsert_chunk_vectors,
                                         upsert_graph_vectors)
from core.sentence_vectors import WindowStatesAhead, can_pool, pool_windows_and_sentences, stored_rows, window_states
from core.storage.records import DocumentRow
from core.types import Cancelled, Chunk, ProgressCallback, cancel_scope
from core.workspace import Workspace

EMBED_PROGRESS_SLICE = 256  # texts per embedding call while indexing (progress after each)


def progress_slices(n: int, size: int = EMBED_PROGRESS_SLICE) -> list[tuple[int, int]]:
    """[start, end) slices of ``size`` texts; a short tail joins the previous slice, so every call
    stays a batch (the embedder encodes small calls differently, as queries)."""
    bounds = [(start, min(start + size, n)) for start in range(0, n, size)]
    if len(bounds) > 1 and bounds[-1][1] - bounds[-1][0] < size // 2:
        bounds[-2:] = [(bounds[-2][0], n)]
    return bounds


_LABEL = re.compile(r"^(?:extraction|gleaning \d+):\s*")
MAX_DROPPED_EXAMPLES = 5


def dropped_reason(item: str) -> str:
    """The reason part of a ``ChunkExtraction.dropped`` item ('gleaning 1: not a record: …' → 'not a record')."""
    return _LABEL.sub("", item).split(":", 1)[0].strip()[:100]


def dropped_by_document(chunks: list[Chunk], extractions: list, extractor: str) -> dict[str, dict]:
    """Per document: what the extraction parser dropped (count, reasons with counts, a few examples)."""
    out: dict[str, dict] = {}
    for chunk, ex in zip(chunks, extractions):
        record = out.setdefault(chunk.doc_id, {"doc_id": chunk.doc_id, "extractor": extractor, "chunks": 0,
                                               "dropped": 0, "reasons": {}, "examples": []})
        record["chunks"] += 1
        for item in getattr(ex, "dropped", None) or []:
            record["dropped"] += 1
            reason = dropped_reason(item)
            record["reasons"][reason] = record["reasons"].get(reason, 0) + 1
            if len(record["examples"]) < MAX_DROPPED_EXAMPLES:
                record["examples"].append(item[:300])
    return out


def embed_texts(embedder: Any, texts: list[str], cancel: Optional[threading.Event]) -> np.ndarray:
    """``embedder.embed(texts)``, with the run's ``cancel`` for an embedder that takes one (a server's
    retry waits end when it is set); a local embedder is checked before the call."""
    if cancel is not None and cancel.is_set():
        raise Cancelled("indexing cancelled while embedding")
    if getattr(embedder, "submit", None) is not None and cancel is not None:
        return embedder.embed(texts, cancel=cancel)
    return embedder.embed(texts)


def extract_with_titles(extractor: Extractor, chunks: list[Chunk], names: dict[str, str],
                        on_parsed: Optional[Callable[[int, int], None]] = None) -> list:
    """Run the extractor, telling it which texts start with their document's title (a JSONL corpus
    indexes "title\ntext"; the title names the document's main entity) when it accepts ``titles``,
    and handing it ``on_parsed(characters done, total)`` when it accepts that (the progress bar)."""
    texts = [c.text for c in chunks]
    accepted = inspect.signature(extractor.extract).parameters
    extra = {"on_parsed": on_parsed} if on_parsed is not None and "on_parsed" in accepted else {}
    if "titles" not in accepted:
        return extractor.extract(texts, **extra)
    titles = [names.get(c.doc_id) if c.order == 0 and names.get(c.doc_id)
              and c.text.lstrip().startswith(names[c.doc_id].strip() + "\n") else None for c in chunks]
    return cast(Any, extractor).extract(texts, titles=titles, **extra)  # it accepts titles (checked above)


@dataclass
class PreparedBatch:
    """A batch chunked and extracted (``BatchIndexer.prepare``); ``chunk_vectors()`` gives the chunk vectors."""

    doc_chunks: dict[str, list[Chunk]]
    all_chunks: list[Chunk]
    extractions: list
    # .result() -> the chunk vectors, or with an embedder that pools (``can_pool``) on two or more cores, the
    # windows' token outputs, computed while the batch was parsed (``WindowStatesAhead``); .cancel() drops
    # requests not yet sent (stops the windows' pass)
    chunk_vectors: Any
    timings: dict[str, float] = field(default_factory=dict)


class BatchIndexer:
    """Runs the pipeline steps for a list of documents; ``run`` is all-or-nothing."""

    def __init__(self, ws: Workspace, extractor: Extractor, report: IndexReport, progress: ProgressCallback,
                 profile_summarizer=None, tree_summarizer=None, cancel: Optional[threading.Event] = None) -> None:
        self.ws = ws
        self.cancel = cancel  # the run's Cancel: reaches extraction and the embeddings' retry waits
        self.extractor = extractor
        self.report = report
        self.progress = progress
        self.profile_summarizer = profile_summarizer
        self.tree_summarizer = tree_summarizer
        self.sentence_cache: dict = {}

    def _timed(self, stage: str, started: float) -> float:
        now = time.perf_counter()
        self.report.timings_s[stage] += now - started
        return now

    def _emit(self, step: str, done: int, total: int, message: str = "") -> None:
        progress_event(self.progress, step, done, total, message)

    def fail(self, doc: DocumentRow, reason: str = "") -> None:
        """Mark one document failed with a readable reason (the rest of the workspace is untouched)."""
        details = traceback.format_exc() if not reason else ""
        if not reason:
            reason = "indexing failed: " + details.strip().splitlines()[-1]
        records = self.ws.records
        records.rollback()  # whatever the failed attempt left open is not committed with the mark
        with records.unit_of_work():
            records.set_status(doc.doc_id, "failed", reason[:500])
            records.log("document_failed", {"doc_id": doc.doc_id, "reason": reason[:500], "traceback": details})
            self.ws.bump_generation()
        self.report.failed.append({"name": doc.name, "reason": reason[:500]})

    def prepare(self, docs: list[DocumentRow], texts: dict[str, str],
                stop: Optional[threading.Event] = None) -> PreparedBatch:
        """Chunk, start the chunk embeddings (a remote embedder sends them now), extract, merge aliases.
        No database access: ``core.indexing.prefetch`` runs this for the next batch while this one is written
        (and sets ``stop`` when that batch will not be used)."""
        with cancel_scope(self.cancel, stop):  # chunking one huge document checks for Cancel inside
            return self._prepare(docs, texts, stop)

    def _prepare(self, docs: list[DocumentRow], texts: dict[str, str], stop: Optional[threading.Event]) -> PreparedBatch:
        from core.remote_embeddings import submit_chunk_texts  # the openai client loads only when indexing

        t = time.perf_counter()
        doc_chunks: dict[str, list[Chunk]] = {}
        for doc in docs:
            chunks = chunk_document(self.ws, doc.doc_id, texts[doc.doc_id])
            if chunks:
                doc_chunks[doc.doc_id] = chunks
        all_chunks = [c for d in docs for c in doc_chunks.get(d.doc_id, [])]
        if stop is not None and stop.is_set():
            raise Cancelled("batch preparation stopped")
        windows = self.ws.settings.chunk_vector_windows
        if windows:
            for chunk in all_chunks:
                chunk.windows = len(chunk_windows(chunk.text))
        if all_chunks and can_pool(self.ws.embedder) and (os.cpu_count() or 1) >= 2:
            chunk_vectors: Any = WindowStatesAhead(self.ws.embedder, [c.text for c in all_chunks], windows)
        else:
            chunk_vectors = submit_chunk_texts(self.ws.embedder, [c.text for c in all_chunks], windows, self.cancel)
        timings = {"chunk": time.perf_counter() - t}
        t = time.perf_counter()
        try:
            def parsed(done: int, total: int) -> None:
                if (self.cancel is not None and self.cancel.is_set()) or (stop is not None and stop.is_set()):
                    raise Cancelled("indexing cancelled during extraction")
                self._emit("extract", done, total, "characters parsed")

            extractions = extract_with_titles(self.extractor, all_chunks, {d.doc_id: d.name for d in docs},
                                              parsed) if all_chunks else []
        except BaseException:
            chunk_vectors.cancel()
            raise
        if stop is not None and stop.is_set():
            chunk_vectors.cancel()
            raise Cancelled("batch preparation stopped")
        for doc_id in doc_chunks:  # alias merging sees a whole document (a document never spans two batches)
            positions = [i for i, c in enumerate(all_chunks) if c.doc_id == doc_id]
            resolve_document([extractions[i] for i in positions])
        timings["extract"] = time.perf_counter() - t
        return PreparedBatch(doc_chunks, all_chunks, extractions, chunk_vectors, timings)

    def run(self, docs: list[DocumentRow], prepared: Optional[PreparedBatch] = None) -> None:
        """Index ``docs`` in one transaction (``prepared``: their chunks and extractions made beforehand)."""
        ws, store = self.ws, self.ws.records
        started = time.perf_counter()
        with store.unit_of_work():
            for doc in docs:
                store.set_status(doc.doc_id, "processing")
        prefetched = prepared is not None  # prepared beforehand: its chunking and extraction time is not in run()'s
        if prepared is None:
            self._emit("extract", 0, len(docs), f"extracting {len(docs)} document(s)")
            prepared = self.prepare(docs, {d.doc_id: store.document_text(d.doc_id) for d in docs})
        for stage, seconds in prepared.timings.items():
            self.report.timings_s[stage] += seconds
        for doc in docs:
            if doc.doc_id not in prepared.doc_chunks:
                self.fail(doc, "the document is empty after loading")
        live = [d for d in docs if d.doc_id in prepared.doc_chunks]
        if not live:
            return
        doc_chunks, all_chunks, extractions = prepared.doc_chunks, prepared.all_chunks, prepared.extractions
        t = time.perf_counter()
        self._emit("extract", len(all_chunks), len(all_chunks))

        with store.unit_of_work():
            for doc in live:  # leftovers of an interrupted or failed earlier attempt
                self._clear_document(doc.doc_id)
            touched_entities: set[str] = set()
            touched_relations: set[tuple[str, str]] = set()
            store.insert_chunks(all_chunks)
            for chunk, ex in zip(all_chunks, extractions):
                ents, rels = store.insert_chunk_extraction(chunk.doc_id, chunk.chunk_id, ex)
                touched_entities |= ents
                touched_relations |= rels
            t = self._timed("write", t)
            self._emit("merge", 0, len(touched_entities), f"merging {len(touched_entities)} entities")
            entities, relations, stale = merge_touched(ws, touched_entities, touched_relations,
                                                          self.profile_summarizer)
            t = self._timed("merge", t)
            self._emit("tree", 0, len(live), "summary tree")
            tree = new_tree(ws, self.sentence_cache, self.tree_summarizer)
            with cancel_scope(self.cancel):  # a long tree build checks for Cancel at every summary node
                for doc in live:
                    root = tree.build_document(doc.doc_id, doc_chunks[doc.doc_id])
                    tree.append_document(doc.doc_id, root)
                nodes = tree.flush()
            stale += tree.removed_vector_ids
            t = self._timed("tree", t)
            texts = graph_texts(entities, relations, nodes)
            total = len(all_chunks) + len(texts)
            self._emit("embed", len(all_chunks), total, "embedding")  # chunk vectors come with the extraction
            try:
                parts = []
                for start, end in progress_slices(len(texts)):  # slices: the bar moves while embedding
                    parts.append(embed_texts(ws.embedder, texts[start:end], self.cancel))
                    self._emit("embed", len(all_chunks) + end, total, "embedding")
                vectors = np.concatenate(parts) if parts else None
                sentence_vectors: list = []
                with cancel_scope(self.cancel):  # a local embedder embeds the chunks here, checking between slices
                    if can_pool(ws.embedder):  # one window pass gives the window and the sentence vectors
                        texts_of_chunks = [c.text for c in all_chunks]
                        computed = (prepared.chunk_vectors.result()
                                    if isinstance(prepared.chunk_vectors, WindowStatesAhead) else
                                    window_states(ws.embedder, texts_of_chunks, ws.settings.chunk_vector_windows))
                        per_chunk, sentence_vectors = pool_windows_and_sentences(
                            ws.embedder, texts_of_chunks, computed, [[s.text for s in ex.sentences] for ex in extractions])
                        prepared.chunk_vectors.cancel()
                    else:
                        per_chunk = prepared.chunk_vectors.result()  # sent before extraction when the embedder is remote
            except BaseException:
                prepared.chunk_vectors.cancel()  # a failed server: drop the requests not yet sent
                raise
            if vectors is None:
                vectors = np.zeros((0, per_chunk[0].shape[1] if per_chunk else 1), dtype=np.float32)
            t = self._timed("embed", t)
            upsert_chunk_vectors(ws, all_chunks, per_chunk)
            store.write_sentence_vectors(stored_rows([c.chunk_id for c in all_chunks], sentence_vectors))
            upsert_graph_vectors(ws, entities, relations, nodes, vectors)
            self._emit("embed", total, total, "vectors stored")
            elapsed = time.perf_counter() - started + (sum(prepared.timings.values()) if prefetched else 0.0)
            shares = document_seconds(elapsed, {d.doc_id: doc_chunks[d.doc_id] for d in live})
            for doc in live:
                store.set_status(doc.doc_id, "processed", "", elapsed_s=shares[doc.doc_id])
            store.set_meta("extractor", self.extractor.name)
            for doc_id, record in dropped_by_document(all_chunks, extractions, self.extractor.name).items():
                store.log("extraction_dropped", record)  # Workspace.dropped_records() reads the latest per document
                self.report.dropped_records += record["dropped"]
            ws.bump_generation()
            store.log("batch_indexed", {"documents": len(live), "chunks": len(all_chunks)})
            t = self._timed("write", t)
        live_ids = live_vector_ids(entities, relations, nodes)
        delete_vectors(ws, [v for v in stale if v and v not in live_ids])
        self._timed("write", t)
        self.report.processed += len(live)
        self.report.tokens += sum(d.tokens for d in live)
        self.report.chunks_embedded += len(all_chunks)
        self.report.entities_embedded += len(entities)
        self.report.relations_embedded += len(relations)
        self.report.summaries_recomputed += len(nodes)

    def _clear_document(self, doc_id: str) -> None:
        """Remove any rows a previous attempt of this document left (normally none)."""
        store = self.ws.records
        chunk_ids = [c.chunk_id for c in store.chunks_of(doc_id)]
        if chunk_ids:
            store.remove_chunks(chunk_ids)
            store.delete_chunks_of(doc_id)


def document_seconds(batch_s: float, doc_chunks: Mapping[str, Sequence[Any]]) -> dict[str, float]:
    """A batch's seconds shared out among its documents by the characters of their chunks (the
    batch's work — extraction, embedding, the tree — grows with the text), so a long document shows
    more seconds than a short one instead of every document showing the batch average."""
    sizes = {doc_id: sum(len(getattr(c, "text", "") or "") for c in chunks) for doc_id, chunks in doc_chunks.items()}
    total = sum(sizes.values())
    if total <= 0:
        return {doc_id: batch_s / max(len(sizes), 1) for doc_id in sizes}
    return {doc_id: batch_s * size / total for doc_id, size in sizes.items()}
