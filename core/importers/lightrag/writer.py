"""Every storage access of the LightRAG import, in one module (to re-point when the storage ports land).

It calls the highest-level storage functions native indexing uses (``Store`` methods, ``graph_store``,
``graph_merge.new_tree``, ``vector_writes``) and ``core.storage.imported_graph`` for the fragment rows with keys
the importer chose. The caller holds the write lock; ``transaction`` is the workspace's one transaction.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Optional, Sequence, cast

import numpy as np

from core.importers.lightrag.mapping import EntityRow, PlannedDocument, RelationRow
from core.indexing.graph_merge import merge_touched, new_tree
from core.indexing.merge import MergedEntity, MergedRelation
from core.indexing.vector_writes import delete_vectors, upsert_chunk_vectors, upsert_graph_vectors
from core.storage import graph_store, imported_graph
from core.storage.store import Store, TreeNode
from core.types import Chunk, ChunkExtraction
from core.workspace import Workspace

IMPORT_META = "lightrag_import"


def _store(ws: Workspace) -> Store:
    """The workspace's record store as the SQL store the fragment rows are written through."""
    return cast(Store, ws.store)


@contextmanager
def transaction(ws: Workspace) -> Iterator[None]:
    """The import's one transaction. The vector client is opened first: opening it the first time records the
    workspace's collection namespace and commits, which inside the transaction would commit half an import."""
    ws.vectors  # noqa: B018 - opened (and its namespace committed) before BEGIN
    with ws.store.unit_of_work():
        yield


def previous_import(ws: Workspace) -> Optional[dict[str, Any]]:
    """The record of the last LightRAG import into this workspace (None: never imported)."""
    raw = ws.store.get_meta(IMPORT_META)
    return json.loads(raw) if raw else None


def save_import(ws: Workspace, record: dict[str, Any]) -> None:
    ws.store.set_meta(IMPORT_META, json.dumps(record, ensure_ascii=False, sort_keys=True))
    ws.store.set_meta("graph_source", record["provenance"])
    ws.store.set_meta("graph_source_model", record["source_model"])
    ws.store.set_meta("extractor", "lightrag-import")


def document_ids(ws: Workspace) -> dict[str, str]:
    """doc id -> content hash of every document in the workspace."""
    return {d.doc_id: d.content_hash for d in ws.store.documents()}


def delete_documents(ws: Workspace, doc_ids: list[str]) -> dict[str, int]:
    """RAGScope's own deletion path (each document in its own transaction, vectors included)."""
    from core.indexing.deletion import delete_documents as delete

    return delete(ws, doc_ids)


def insert_document(ws: Workspace, doc: PlannedDocument) -> None:
    store = ws.store
    store.insert_document(doc.doc_id, doc.name, "lightrag", doc.content_hash, doc.text, doc.tokens)
    if doc.imported:
        store.set_status(doc.doc_id, "processed")
    elif doc.lightrag_status == "processed":
        store.set_status(doc.doc_id, "failed", "LightRAG stored no chunks for this document, so nothing was imported")
    else:
        store.set_status(doc.doc_id, "failed", f"LightRAG status '{doc.lightrag_status}': LightRAG did not index "
                                               "this document, so it was not imported")


def insert_chunks(ws: Workspace, chunks: Sequence[Chunk], nlp: Sequence[ChunkExtraction]) -> None:
    """Chunks and their spaCy sentences and mentions (the E2GraphRAG mention graph); no graph fragments."""
    ws.store.insert_chunks(chunks)
    for chunk, ex in zip(chunks, nlp):
        graph_store.insert_chunk_extraction(_store(ws).conn, chunk.doc_id, chunk.chunk_id,
                                            ChunkExtraction(mentions=ex.mentions, sentences=ex.sentences))


def stored_entities(ws: Workspace) -> dict[str, tuple]:
    """key -> (name, type, description, source chunk ids, vector id) of every merged entity."""
    return imported_graph.stored_entities(_store(ws).conn)


def stored_relations(ws: Workspace) -> dict[tuple[str, str], tuple]:
    return imported_graph.stored_relations(_store(ws).conn)


def write_entity(ws: Workspace, entity: MergedEntity, rows: Iterable[EntityRow], imported_docs: set[str]) -> None:
    """Replace the imported fragments of one entity and write its merged row as LightRAG has it."""
    conn = _store(ws).conn
    imported_graph.drop_fragments_of_documents(conn, entity.key, None, imported_docs)
    imported_graph.insert_entity_fragments(conn, [(r.key, r.chunk_id, r.doc_id, r.name, r.type, r.description)
                                                  for r in rows])
    graph_store.write_entity(conn, entity.key, entity.name, entity.type, entity.description, entity.source_chunk_ids,
                             entity.vector_id, [])


def write_relation(ws: Workspace, relation: MergedRelation, rows: Iterable[RelationRow], imported_docs: set[str]) -> None:
    conn = _store(ws).conn
    pair = (relation.source, relation.target)
    imported_graph.drop_fragments_of_documents(conn, None, pair, imported_docs)
    imported_graph.insert_relation_fragments(conn, [(r.source, r.target, r.chunk_id, r.doc_id, r.keywords,
                                                     r.description, r.weight) for r in rows])
    graph_store.write_relation(conn, pair, relation.keywords, relation.description, relation.weight,
                               relation.source_chunk_ids, relation.vector_id)


def drop_vanished(ws: Workspace, entity_keys: set[str], relation_keys: set[tuple[str, str]],
                  imported_docs: set[str]) -> list[str]:
    """Remove the imported fragments of entities/relations LightRAG no longer has; re-merge what other
    (RAGScope-indexed) fragments remain, delete the rest. Returns vector ids to delete."""
    conn = _store(ws).conn
    for key in entity_keys:
        imported_graph.drop_fragments_of_documents(conn, key, None, imported_docs)
    for pair in relation_keys:
        imported_graph.drop_fragments_of_documents(conn, None, pair, imported_docs)
    changed_e, changed_r, removed = merge_touched(ws, set(entity_keys), set(relation_keys))
    upsert_graph_vectors(ws, changed_e, changed_r, [])
    return removed


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
    expected = ws.store.expected_vector_ids()
    orphans: list[str] = []
    for collection in ("entities", "relations", "tree"):
        orphans += sorted(ws.vectors.all_ids(collection) - expected[collection])
    delete_vectors(ws, orphans)
    chunk_orphans = sorted(ws.vectors.all_ids("chunks") - expected["chunks"])
    if chunk_orphans:
        ws.vectors.delete("chunks", chunk_orphans)
    return len(orphans) + len(chunk_orphans)


def finish(ws: Workspace, event: str, detail: dict[str, Any]) -> None:
    ws.store.log(event, detail)
    ws.bump_generation()


def counts(ws: Workspace) -> dict[str, int]:
    s = ws.store
    return {"documents": s.count("documents", "WHERE status='processed'"), "chunks": s.count("chunks"),
            "entities": s.count("entities"), "relations": s.count("relations"),
            "mention_nodes": s.mention_node_count(), "mention_edges": s.count("mention_edges"),
            "tree_nodes": s.count("tree_nodes")}
