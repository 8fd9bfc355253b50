"""Every storage access of the LightRAG import, in one module, all through the storage ports: the workspace's
``RecordStore`` (``ws.records``) and ``VectorIndex``, the functions native indexing uses (``remerge``,
``vector_writes``, ``deletion``), and the import port ``core.storage.import_writes`` for the bulk writes of
fragment rows with keys the importer chose. The caller holds the write lock; ``transaction`` is the
workspace's one transaction. Imported documents have the source ``IMPORT_SOURCE``: that is how the origin of
each graph part (imported, or added by RAGScope's own indexing later) is told apart.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Optional, Sequence

import numpy as np

from core.importers.lightrag.mapping import EntityRow, PlannedDocument, RelationRow
from core.indexing.remerge import merge_touched, new_tree
from core.indexing.profiles import MergedEntity, MergedRelation
from core.indexing.vector_writes import delete_vectors, upsert_chunk_vectors, upsert_graph_vectors
from core.storage.import_writes import ImportWrites, import_writes
from core.storage.records import TreeNode
from core.types import Chunk, ChunkExtraction
from core.workspace import Workspace

IMPORT_META = "lightrag_import"
IMPORT_SOURCE = "lightrag"  # documents.source of every imported document


def _port(ws: Workspace) -> ImportWrites:
    return import_writes(ws.records)


@contextmanager
def transaction(ws: Workspace) -> Iterator[None]:
    """The import's one transaction. The vector client is opened first: opening it the first time records the
    workspace's collection namespace and commits, which inside the transaction would commit half an import."""
    ws.vectors  # noqa: B018 - opened (and its namespace committed) before BEGIN
    with ws.records.unit_of_work():
        yield


def previous_import(ws: Workspace) -> Optional[dict[str, Any]]:
    """The record of the last LightRAG import into this workspace (None: never imported)."""
    raw = ws.records.get_meta(IMPORT_META)
    return json.loads(raw) if raw else None


def save_import(ws: Workspace, record: dict[str, Any]) -> None:
    ws.records.set_meta(IMPORT_META, json.dumps(record, ensure_ascii=False, sort_keys=True))
    ws.records.set_meta("graph_source", record["provenance"])
    ws.records.set_meta("graph_source_model", record["source_model"])
    ws.records.set_meta("extractor", "lightrag-import")


def document_ids(ws: Workspace) -> dict[str, str]:
    """doc id -> content hash of every document in the workspace."""
    return {d.doc_id: d.content_hash for d in ws.records.documents()}


def delete_documents(ws: Workspace, doc_ids: list[str]) -> dict[str, int]:
    """RAGScope's own deletion path (each document in its own transaction, vectors included)."""
    from core.indexing.deletion import delete_documents as delete

    return delete(ws, doc_ids)


def insert_document(ws: Workspace, doc: PlannedDocument) -> None:
    store = ws.records
    store.insert_document(doc.doc_id, doc.name, IMPORT_SOURCE, doc.content_hash, doc.text, doc.tokens)
    if doc.imported:
        store.set_status(doc.doc_id, "processed")
    elif doc.lightrag_status == "processed":
        store.set_status(doc.doc_id, "failed", "LightRAG stored no chunks for this document, so nothing was imported")
    else:
        store.set_status(doc.doc_id, "failed", f"LightRAG status '{doc.lightrag_status}': LightRAG did not index "
                                               "this document, so it was not imported")


def insert_chunks(ws: Workspace, chunks: Sequence[Chunk], nlp: Sequence[ChunkExtraction]) -> None:
    """Chunks and their spaCy sentences and mentions (the E2GraphRAG mention graph); no graph fragments."""
    ws.records.insert_chunks(chunks)
    for chunk, ex in zip(chunks, nlp):
        ws.records.insert_chunk_extraction(chunk.doc_id, chunk.chunk_id,
                                           ChunkExtraction(mentions=ex.mentions, sentences=ex.sentences))


def stored_entities(ws: Workspace) -> dict[str, tuple]:
    """key -> (name, type, description, source chunk ids, vector id) of every merged entity."""
    return _port(ws).stored_entities()


def stored_relations(ws: Workspace) -> dict[tuple[str, str], tuple]:
    return _port(ws).stored_relations()


def write_entities(ws: Workspace, entities: Sequence[MergedEntity], fragments: dict[str, list[EntityRow]]) -> None:
    """Replace the imported fragments of these entities and write their merged rows as LightRAG has them."""
    _port(ws).replace_entities(
        [(e.key, e.name, e.type, e.description, e.source_chunk_ids, e.vector_id) for e in entities],
        [(r.key, r.chunk_id, r.doc_id, r.name, r.type, r.description) for e in entities for r in fragments[e.key]],
        IMPORT_SOURCE)


def write_relations(ws: Workspace, relations: Sequence[MergedRelation],
                    fragments: dict[tuple[str, str], list[RelationRow]]) -> None:
    _port(ws).replace_relations(
        [(r.source, r.target, r.keywords, r.description, r.weight, r.source_chunk_ids, r.vector_id)
         for r in relations],
        [(f.source, f.target, f.chunk_id, f.doc_id, f.keywords, f.description, f.weight)
         for r in relations for f in fragments[(r.source, r.target)]], IMPORT_SOURCE)


def drop_vanished(ws: Workspace, entity_keys: set[str], relation_keys: set[tuple[str, str]]) -> list[str]:
    """Remove the imported fragments of entities/relations LightRAG no longer has; re-merge what other
    (RAGScope-indexed) fragments remain, delete the rest. Returns vector ids to delete."""
    _port(ws).drop_fragments(entity_keys, relation_keys, IMPORT_SOURCE)
    changed_e, changed_r, removed = merge_touched(ws, set(entity_keys), set(relation_keys))
    upsert_graph_vectors(ws, changed_e, changed_r, [])
    return removed


def origins(ws: Workspace, entity_keys: Iterable[str] = (), relation_keys: Iterable[tuple[str, str]] = ()
            ) -> dict[Any, str]:
    """"imported", "added" (by RAGScope's own indexing) or "both", per given entity key / relation pair."""
    return _port(ws).origin_of(IMPORT_SOURCE, entity_keys, relation_keys)


def origin_counts(ws: Workspace) -> dict[str, dict[str, int]]:
    return _port(ws).origin_counts(IMPORT_SOURCE)


def build_tree(ws: Workspace, docs: Sequence[tuple[str, list[Chunk]]]) -> list[TreeNode]:
    """Summary subtrees of the new documents and the corpus levels above them (extractive summaries)."""
    tree = new_tree(ws, {})
    for doc_id, chunks in docs:
        tree.append_document(doc_id, tree.build_document(doc_id, chunks))
    nodes = tree.flush()
    return nodes


def chunk_vector_ids(ws: Workspace) -> set[str]:
    return ws.vectors.all_ids("chunks")


def graph_vector_ids(ws: Workspace) -> dict[str, set[str]]:
    return {c: ws.vectors.all_ids(c) for c in ("entities", "relations", "tree")}


def upsert_vectors(ws: Workspace, chunks: Sequence[Chunk], per_chunk: Sequence[np.ndarray],
                   entities: Sequence[MergedEntity], relations: Sequence[MergedRelation], nodes: Sequence[TreeNode],
                   vectors: Optional[np.ndarray]) -> None:
    if chunks:
        upsert_chunk_vectors(ws, chunks, per_chunk)
    if vectors is not None and len(vectors):
        upsert_graph_vectors(ws, entities, relations, nodes, vectors)


def remove_orphan_vectors(ws: Workspace) -> int:
    """Delete vectors no committed row refers to (after the import's commit; a failed earlier run may have
    left some)."""
    expected = ws.records.expected_vector_ids()
    orphans: list[str] = []
    for collection in ("entities", "relations", "tree"):
        orphans += sorted(ws.vectors.all_ids(collection) - expected[collection])
    delete_vectors(ws, orphans)
    chunk_orphans = sorted(ws.vectors.all_ids("chunks") - expected["chunks"])
    if chunk_orphans:
        ws.vectors.delete("chunks", chunk_orphans)
    return len(orphans) + len(chunk_orphans)


def finish(ws: Workspace, event: str, detail: dict[str, Any]) -> None:
    ws.records.log(event, detail)
    ws.bump_generation()


def counts(ws: Workspace) -> dict[str, int]:
    s = ws.records
    return {"documents": s.status_counts().get("processed", 0), "chunks": s.count("chunks"),
            "entities": s.count("entities"), "relations": s.count("relations"),
            "mention_nodes": s.mention_node_count(), "mention_edges": s.count("mention_edges"),
            "tree_nodes": s.count("tree_nodes")}
