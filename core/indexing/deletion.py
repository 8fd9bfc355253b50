"""Delete documents: their chunks, vectors, subtree, and their contributions to the graphs.

Entities and relations left without any source are deleted; the others are re-merged from their
remaining fragments (and re-embedded when their profile changed). Re-adding a deleted document
afterwards indexes it again from scratch. The analyst's marks on its chunks are dropped in the same
transaction (``core.annotations``). The caller holds the workspace write lock.
"""
from __future__ import annotations

from core.indexing.remerge import merge_touched, new_tree
from core.indexing.vector_writes import delete_vectors, live_vector_ids, upsert_graph_vectors
from core.workspace import Workspace


def delete_documents(ws: Workspace, doc_ids: list[str], keep_documents: bool = False) -> dict[str, int]:
    """Delete each document in its own transaction; return counts of what was removed. ``keep_documents``:
    remove only what indexing derived from each (chunks, vectors, graph share, subtree, marks) and set it
    back to 'pending' with its stored text, for the next run to index again (``reset_documents``)."""
    removed = {"documents": 0, "chunks": 0, "vectors": 0}
    for doc_id in doc_ids:
        doc = ws.records.document(doc_id)
        if doc is None:
            continue
        store = ws.records
        with store.unit_of_work():
            chunk_ids = [c.chunk_id for c in store.chunks_of(doc_id)]
            entities, relations = store.remove_chunks(chunk_ids)
            store.delete_chunks_of(doc_id)
            stale: list[str] = []
            if chunk_ids:
                changed_e, changed_r, gone = merge_touched(ws, entities, relations)
                stale += gone
                tree = new_tree(ws, {})
                tree.delete_document_nodes(doc_id)
                tree.remove_document(doc_id)
                nodes = tree.flush()
                stale += tree.removed_vector_ids
                upsert_graph_vectors(ws, changed_e, changed_r, nodes)
                live = live_vector_ids(changed_e, changed_r, nodes)
                stale = [v for v in stale if v and v not in live]
            if keep_documents:
                store.set_status(doc_id, "pending", "")
            else:
                store.delete_document_row(doc_id)
            store.drop_document_annotations(doc_id)
            store.log("document_reset" if keep_documents else "document_deleted",
                      {"doc_id": doc_id, "name": doc.name, "chunks": len(chunk_ids)})
            ws.bump_generation()
        if chunk_ids:
            ws.vectors.delete_chunks(chunk_ids)
        delete_vectors(ws, stale)
        removed["documents"] += 1
        removed["chunks"] += len(chunk_ids)
        removed["vectors"] += len(chunk_ids) + len(stale)
    return removed


def reset_documents(ws: Workspace) -> list[str]:
    """Set every processed document back to 'pending' for indexing again from its stored text under the
    current settings (a new chunk size): its chunks, vectors, graph share and subtree are removed here,
    document by document, right before the run indexes them again. Returns the documents reset."""
    doc_ids = [d.doc_id for d in ws.records.documents() if d.status == "processed"]
    delete_documents(ws, doc_ids, keep_documents=True)
    return doc_ids
