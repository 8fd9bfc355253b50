"""What each retrieval mode reached and selected before its token budgets, for the evidence-loss funnel.

Every mode fills two lists of its ``RetrievalResult`` (``core.evaluation.loss`` reads them):

* ``candidate_chunk_ids`` — the chunks the mode *selected* for its context before any token budget
  cut it: LightRAG modes' chunk picks (``chunks_per_entity`` per entity or relation, plus mix's dense
  hits), naive's dense top-k, path's source chunks of every kept path (or, with no path, of the
  retrieved nodes), tree's chosen chunks and summary leaves.
* ``reached_chunk_ids`` — every chunk the mode's search *reached*: the selected ones plus the source
  chunks of every retrieved entity and relation (LightRAG), of every retrieved path node (PathRAG),
  and tree's collapsed-tree candidates and the chunks that hold a query entity (E2GraphRAG's
  entity-to-chunk index).

A gold chunk in the evidence is ``found`` or ``below_k``; selected but not in the evidence is
``over_budget``; reached but not selected is ``not_selected``; anything else is ``not_reached``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

from core.types import ChunkHit, EntityHit, RelationHit, RetrievalResult

if TYPE_CHECKING:
    from core.workspace import Workspace
    from core.storage.ports import GraphView


def _unique(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(c for c in ids if c))


def _sources(records: Iterable[EntityHit | RelationHit]) -> list[str]:
    return [c for record in records for c in record.source_chunk_ids]


def set_funnel(result: RetrievalResult, selected: Iterable[str], reached: Iterable[str] = ()) -> RetrievalResult:
    """Record the selected chunks (rank order) and the reached ones (always including the selected)."""
    result.candidate_chunk_ids = _unique(selected)
    result.reached_chunk_ids = _unique([*result.candidate_chunk_ids, *reached])
    return result


def lightrag_funnel(result: RetrievalResult, entities: Sequence[EntityHit],
                    relations: Sequence[RelationHit], chunks: Sequence[ChunkHit]) -> RetrievalResult:
    """LightRAG modes: the chunk picks are selected; every gathered entity's and relation's source
    chunks were reached (before the entity and relation budgets)."""
    return set_funnel(result, (c.chunk_id for c in chunks), [*_sources(entities), *_sources(relations)])


def path_funnel(result: RetrievalResult, kg: GraphView, paths: Sequence[Any], retrieved: Sequence[tuple[str, float]]
                ) -> RetrievalResult:
    """PathRAG: the source chunks of every kept path's edges and nodes are selected (the context
    quotes them and describes their entities and relations); with no path, those of the retrieved
    nodes. Every retrieved node's source chunks were reached."""
    node_sources = [c for key, _ in retrieved if key in kg for c in kg.attributes(key).get("source_chunk_ids") or []]
    if not paths:
        return set_funnel(result, node_sources)
    selected: list[str] = []
    for path in paths:
        nodes = list(path.nodes)
        for a, b in zip(nodes, nodes[1:]):
            selected += kg.relation_attributes(a, b).get("source_chunk_ids") or []
        for key in nodes:
            selected += kg.attributes(key).get("source_chunk_ids") or []
    return set_funnel(result, selected, node_sources)


def tree_reached(ws: Workspace, considered: Iterable[str], query_terms: Sequence[str]) -> list[str]:
    """E2GraphRAG: the collapsed-tree candidates' leaves plus every chunk that holds a query entity."""
    index = ws.mention_index()
    return _unique([*considered, *(c for term in query_terms for c in index.get(term, {}))])
