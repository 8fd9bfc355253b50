"""Writing derived vectors: the one place that embeds and upserts merged entities, relations and
summary-tree nodes (a batch, a deletion and reconciliation all go through here), upserts chunk
windows, and deletes vectors by id. Vector metadata has one shape per collection."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from core.embeddings import window_records
from core.indexing.profiles import MergedEntity, MergedRelation, tree_vector_text
from core.storage.records import TreeNode
from core.types import Chunk
from core.workspace import Workspace

BY_PREFIX = {"ent-": "entities", "rel-": "relations", "tree-": "tree"}


def entity_meta(key: str) -> dict[str, Any]:
    return {"key": key}


def relation_meta(source: str, target: str) -> dict[str, Any]:
    return {"source": source, "target": target}


def tree_meta(node: TreeNode) -> dict[str, Any]:
    return {"node_id": node.node_id, "level": node.level, "scope": node.scope}


def graph_texts(entities: Sequence[MergedEntity], relations: Sequence[MergedRelation],
                nodes: Sequence[TreeNode]) -> list[str]:
    """The texts to embed, in the order ``upsert_graph_vectors`` expects their vectors."""
    return [e.vector_text for e in entities] + [r.vector_text for r in relations] + [tree_vector_text(n.text) for n in nodes]


def upsert_graph_vectors(ws: Workspace, entities: Sequence[MergedEntity], relations: Sequence[MergedRelation],
                         nodes: Sequence[TreeNode], vectors: Optional[np.ndarray] = None) -> None:
    """Upsert the vectors of changed entities, relations and tree nodes (``vectors`` of ``graph_texts``;
    embedded here when not given)."""
    if vectors is None:
        texts = graph_texts(entities, relations, nodes)
        if not texts:
            return
        vectors = ws.embedder.embed(texts)
    a, b = len(entities), len(entities) + len(relations)
    vs = ws.vectors
    vs.upsert("entities", [e.vector_id for e in entities], vectors[:a], [entity_meta(e.key) for e in entities])
    vs.upsert("relations", [r.vector_id for r in relations], vectors[a:b],
              [relation_meta(r.source, r.target) for r in relations])
    vs.upsert("tree", [n.vector_id for n in nodes], vectors[b:], [tree_meta(n) for n in nodes])


def upsert_chunk_vectors(ws: Workspace, chunks: Sequence[Chunk], per_chunk: Sequence[np.ndarray]) -> None:
    """Upsert every window vector of each chunk (``per_chunk[i]``: the windows of ``chunks[i]``)."""
    ws.vectors.upsert("chunks", *window_records([c.chunk_id for c in chunks], list(per_chunk),
                                                [{"doc_id": c.doc_id, "order": c.order} for c in chunks]))


def live_vector_ids(entities: Sequence[MergedEntity], relations: Sequence[MergedRelation],
                    nodes: Sequence[TreeNode]) -> set[str]:
    return {e.vector_id for e in entities} | {r.vector_id for r in relations} | {n.vector_id for n in nodes}


def delete_vectors(ws: Workspace, vector_ids: Sequence[str]) -> None:
    """Delete entity, relation and tree vectors by id (the id's prefix names the collection)."""
    for prefix, collection in BY_PREFIX.items():
        ids = [v for v in vector_ids if v.startswith(prefix)]
        if ids:
            ws.vectors.delete(collection, ids)
