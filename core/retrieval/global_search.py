"""global mode (LightRAG high-level retrieval): the high-level keywords, joined with ", ", are embedded
and matched against the relation vectors (top_k = 40, cosine >= 0.2), ranked by cosine, edge degree and
weight; their endpoint entities follow in order of appearance; each relation brings its source chunks
most similar to the question. With no high-level keywords the low-level ones are used (traced).

RAGScope's relation ranking (``core.retrieval.strategies.AnchoredRelations``): the relations are anchored to the question's entities
(``core.retrieval.anchoring``: cosine + a bonus for touching a question entity or a neighbour of
one), and the evidence chunks are ordered by their relation's score + their own cosine to the question.
"""
from __future__ import annotations

from typing import Optional

from core.retrieval.anchoring import ANCHOR_BONUS, anchored_relations
from core.retrieval.base import QueryContext, Stopwatch, edge_count
from core.retrieval.lightrag_context import Gathered, global_expand
from core.retrieval.lightrag_retrieval import LightRAGRetriever, search_terms, seeds_for, trace_hits, with_chunks
from core.retrieval.strategies import RelationSearch
from core.types import RetrievalResult


class GlobalRetriever(LightRAGRetriever):
    name = "global"

    def gather(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch) -> Gathered:
        """Relations, their endpoint entities and their chunks, ranked, before any token budget."""
        s = ctx.settings
        found = ctx.strategies.relations.search(ctx, result, clock)
        if found is None:
            return Gathered()
        triples, reasons, graph, label = found.triples, found.reasons, found.graph, found.label
        with clock.stage("graph_walk"):
            entities, relations = global_expand(graph, triples, top_k=s.lightrag_top_k,
                                                threshold=s.cosine_threshold, query_label=label, reasons=reasons)
        if not trace_hits(result, ctx, "relation", edge_count(graph), [t[2] for t in triples],
                          len(relations)):
            return Gathered()
        result.trace.append(f"{len(entities)} endpoint entities of {len(relations)} relations "
                            f"(in order of appearance)")
        owners = [(f"relation {r.source} — {r.target}", r.source_chunk_ids) for r in relations]
        return with_chunks(ctx, result, clock, entities, relations, owners, "relation",
                           [r.score for r in relations])


def anchored_hits(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch) -> Optional[RelationSearch]:
    """RAGScope's relation search: high-level keywords (or the low-level ones) anchored to the
    question's seed entities; None when there is nothing to search."""
    terms, label = search_terms(ctx, result, clock, "high")
    if not terms:
        return None
    with clock.stage("graph_walk"):
        graph = ctx.graph
    if edge_count(graph) == 0:
        result.trace.append(f"the knowledge graph has no relations: index some documents first")
        return None
    low, _ = ctx.keywords()
    seeds = seeds_for(ctx, result, clock, low or terms)
    with clock.stage("embed_query"):
        ctx.prefetch([", ".join(terms)] + [", ".join(level) for level in ctx.keywords()] + [ctx.question])
        vector = ctx.embed(", ".join(terms))
    with clock.stage("vector_search"):
        key = ", ".join(terms)
        if key not in ctx.state.anchored:
            ctx.state.anchored[key] = anchored_relations(ctx.ws, vector, seeds, ctx.settings.lightrag_top_k,
                                                         ctx.settings.cosine_threshold)
        anchored = ctx.state.anchored[key]
    anchored_count = sum(1 for r in anchored if r.anchor)
    result.trace.append(f"relation search anchored to {len(seeds)} seed entities: {len(anchored)} relations "
                        f"(cosine >= {ctx.settings.cosine_threshold}), {anchored_count} touching a question entity "
                        f"or a neighbour of one (+{ANCHOR_BONUS:g})")
    return RelationSearch([(r.pair[0], r.pair[1], r.score) for r in anchored],
                          {r.pair: r.reason(label) for r in anchored}, graph, label)
