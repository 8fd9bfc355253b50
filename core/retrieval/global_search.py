"""global mode (LightRAG high-level retrieval): the high-level keywords, joined with ", ", are embedded
and matched against the relation vectors (top_k = 40, cosine >= 0.2), ranked by cosine, edge degree and
weight; their endpoint entities follow in order of appearance; each relation brings its source chunks
most similar to the question. With no high-level keywords the low-level ones are used (traced).

RAGScope (``paper_strict`` off): the relations are anchored to the question's entities
(``core.retrieval.anchoring``: cosine + a bonus for touching a question entity or a neighbour of
one), and the evidence chunks are ordered by their relation's score + their own cosine to the question.
"""
from __future__ import annotations

from typing import Any

from core.retrieval.anchoring import ANCHOR_BONUS, anchored_relations
from core.retrieval.base import QueryContext, Stopwatch, edge_count
from core.retrieval.lightrag_context import Gathered, global_expand
from core.retrieval.lightrag_retrieval import (LightRAGRetriever, search_terms, seeds_for, trace_hits,
                                               vector_hits, with_chunks)
from core.types import RetrievalResult


class GlobalRetriever(LightRAGRetriever):
    name = "global"

    def gather(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, prefix: str = "") -> Gathered:
        """Relations, their endpoint entities and their chunks, ranked, before any token budget."""
        s = ctx.settings
        if s.paper_strict:
            hits, graph, label = vector_hits(ctx, result, clock, "high", "relations", prefix)
            if graph is None:
                return Gathered()
            triples = [(str(h.metadata.get("source", "")), str(h.metadata.get("target", "")), h.score) for h in hits]
            reasons = None
        else:
            triples, reasons, graph, label = anchored_hits(ctx, result, clock, prefix)
            if graph is None:
                return Gathered()
        with clock.stage("graph_walk"):
            entities, relations = global_expand(graph, triples, top_k=s.lightrag_top_k,
                                                threshold=s.cosine_threshold, query_label=label, reasons=reasons)
        if not trace_hits(result, ctx, prefix, "relation", edge_count(graph), [t[2] for t in triples],
                          len(relations)):
            return Gathered()
        result.trace.append(f"{prefix}{len(entities)} endpoint entities of {len(relations)} relations "
                            f"(in order of appearance)")
        owners = [(f"relation {r.source} — {r.target}", r.source_chunk_ids) for r in relations]
        return with_chunks(ctx, result, clock, prefix, entities, relations, owners, "relation",
                           [r.score for r in relations])


def anchored_hits(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, prefix: str = ""
                  ) -> tuple[list[tuple[str, str, float]], dict[tuple[str, str], str], Any, str]:
    """RAGScope's relation search: high-level keywords (or the low-level ones) anchored to the
    question's seed entities. Returns (hits, reasons by pair, graph or None, label)."""
    terms, label = search_terms(ctx, result, clock, "high", prefix)
    if not terms:
        return [], {}, None, ""
    with clock.stage("graph_walk"):
        graph = ctx.graph
    if edge_count(graph) == 0:
        result.trace.append(f"{prefix}the knowledge graph has no relations: index some documents first")
        return [], {}, None, ""
    low, _ = ctx.keywords()
    seeds = seeds_for(ctx, result, clock, low or terms, prefix)
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
    result.trace.append(f"{prefix}relation search anchored to {len(seeds)} seed entities: {len(anchored)} relations "
                        f"(cosine >= {ctx.settings.cosine_threshold}), {anchored_count} touching a question entity "
                        f"or a neighbour of one (+{ANCHOR_BONUS:g})")
    return ([(r.pair[0], r.pair[1], r.score) for r in anchored], {r.pair: r.reason(label) for r in anchored},
            graph, label)
