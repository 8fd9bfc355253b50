"""Reconcile ChromaDB with SQLite: SQLite is the system of record, vectors are derived data.

Vectors no committed row refers to (left by a crash between the Chroma upsert and the SQLite
commit) are removed; rows whose vector is missing (a deleted Chroma folder, a new server) are
re-embedded from their stored text (an entity: the text its vector id was made from). The quick check of a no-op run compares counts only, and reads
an embedded store's counts from its file (``core.storage.chroma_counts``) without opening ChromaDB.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

from core.embeddings import chunk_of_window, embed_chunk_windows
from core.indexing.profiles import embedded_aliases, entity_text_of_id, relation_vector_text, tree_vector_text
from core.indexing.vector_writes import entity_meta, relation_meta, tree_meta, upsert_chunk_vectors
from core.storage.chroma_counts import embedded_counts
from core.workspace import Workspace


def quick_counts(ws: Workspace, collections: list[str]) -> Optional[dict[str, int]]:
    """The vector counts of an embedded ChromaDB store read from its file (None: a server, another
    backend, or a file that could not be read: ask the vector index itself)."""
    backend = ws.backend
    namespace = ws.records.get_meta("namespace")
    if getattr(backend, "name", "") != "sqlite" or ws.settings.chroma_url or not namespace:
        return None
    return embedded_counts(Path(ws.path) / "chroma", namespace, collections)  # the backend's folder is the workspace's


def reconcile(ws: Workspace, quick: bool = False) -> dict[str, dict[str, int]]:
    """Repair the vector collections; return {collection: {"removed": n, "added": n}}."""
    expected = ws.records.expected_vector_ids()
    report: dict[str, dict[str, int]] = {}
    counts = quick_counts(ws, list(expected)) if quick else None
    for collection, want in expected.items():
        if quick and (counts[collection] if counts is not None else ws.vectors.count(collection)) == len(want):
            continue
        have = ws.vectors.all_ids(collection)
        orphans = sorted(have - want)
        missing = sorted(want - have)
        if orphans:
            ws.vectors.delete(collection, orphans)
        if missing:
            _reembed(ws, collection, missing)
        if orphans or missing:
            report[collection] = {"removed": len(orphans), "added": len(missing)}
    if report:
        with ws.records.unit_of_work():
            ws.records.log("reconciled", report)
    return report


def _reembed(ws: Workspace, collection: str, ids: list[str]) -> None:
    records = ws.records
    wanted = set(ids)
    rows: list[tuple[str, str, dict]] = []
    if collection == "chunks":  # re-embed every window of a chunk missing any (upserts are idempotent)
        chunks = ws.records.chunks_by_id(chunk_of_window(i) for i in ids)
        per_chunk = embed_chunk_windows(ws.embedder, [c.text for c in chunks.values()],
                                        any(c.windows > 1 for c in chunks.values()) or ws.settings.chunk_vector_windows)
        for start in range(0, len(chunks), 512):
            keys = list(chunks)[start : start + 512]
            upsert_chunk_vectors(ws, [chunks[k] for k in keys], per_chunk[start : start + 512])
        return
    elif collection == "entities":
        found = [(key, name, desc, vid) for key, name, desc, vid in records.entity_vector_rows()
                 if vid in wanted]
        # the embedded text names only some aliases (merge.embedded_aliases): the same text as at indexing,
        # under the rule the id was made with (an id from before the profile cut, or a reused LightRAG vector)
        fragments = records.entity_fragments(sorted(key for key, *_ in found))
        for key, name, desc, vid in found:
            text = entity_text_of_id(key, vid, name, desc, embedded_aliases(key, name, fragments.get(key, [])))
            rows.append((vid, text, entity_meta(key)))
    elif collection == "relations":
        names = records.entity_names()
        for src, tgt, kws, desc, vid in records.relation_vector_rows():
            if vid in wanted:
                text = relation_vector_text(kws, names.get(src, src), names.get(tgt, tgt), desc)
                rows.append((vid, text, relation_meta(src, tgt)))
    else:
        for node in ws.records.tree_nodes():
            if node.vector_id in wanted:
                rows.append((node.vector_id, tree_vector_text(node.text), tree_meta(node)))
    for start in range(0, len(rows), 512):
        part = rows[start : start + 512]
        vectors = ws.embedder.embed([r[1] for r in part])
        ws.vectors.upsert(collection, [r[0] for r in part], vectors, [r[2] for r in part])


BACKFILL_CHUNKS = 256  # chunks per back-fill transaction


def backfill_sentence_vectors(ws: Workspace, progress: Optional[Callable[[int, int], None]] = None) -> dict[str, int]:
    """Sentence vectors for the chunks that have none (a workspace indexed before they were stored):
    each chunk's windows run through the embedder once more, as indexing runs them, and its stored
    sentences are pooled from the token outputs (``core.sentence_vectors``); chunk vectors are not
    touched. An embedder without token outputs (a remote server) back-fills nothing."""
    from core.sentence_vectors import can_pool, embed_windows_and_sentences, stored_rows

    if not can_pool(ws.embedder):
        return {"chunks": 0, "sentences": 0, "skipped": len(ws.records.all_chunk_ids())}
    records = ws.records
    done = records.chunks_with_sentence_vectors()
    todo = [c for c in records.all_chunk_ids() if c not in done]
    chunks_done = sentences = 0
    for start in range(0, len(todo), BACKFILL_CHUNKS):
        part = todo[start:start + BACKFILL_CHUNKS]
        chunks = records.chunks_by_id(part)
        stored = records.chunk_sentences(part)
        ids = [c for c in part if c in chunks]
        windows = any(chunks[c].windows > 1 for c in ids) or ws.settings.chunk_vector_windows
        _, vectors = embed_windows_and_sentences(ws.embedder, [chunks[c].text for c in ids],
                                                 [[text for text, _ in stored.get(c, [])] for c in ids], windows)
        with records.unit_of_work():
            sentences += records.write_sentence_vectors(stored_rows(ids, vectors))
        chunks_done += len(ids)
        if progress is not None:
            progress(chunks_done, len(todo))
    if chunks_done:
        with records.unit_of_work():
            ws.bump_generation()
    return {"chunks": chunks_done, "sentences": sentences, "skipped": 0}
