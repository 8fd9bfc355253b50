"""local mode (LightRAG low-level retrieval): the low-level keywords, joined with ", ", are embedded
and matched against the entity vectors (top_k = 40, cosine >= 0.2); the relations incident to those
entities are ranked by edge degree then weight; each entity brings its source chunks most similar to
the question (``chunks_per_entity``). Everything is then cut to LightRAG's token budgets.

The steps every LightRAG mode shares are in ``core.retrieval.lightrag_retrieval``.
"""
from __future__ import annotations

from core.retrieval.lightrag_context import Gathered, local_expand
from core.retrieval.lightrag_retrieval import LightRAGRetriever, with_chunks
from core.retrieval.lightrag_search import search_terms, seeds_for
from core.retrieval.query import QueryContext, Stopwatch
from core.types import RetrievalResult


class LocalRetriever(LightRAGRetriever):
    name = "local"

    @staticmethod
    def unread_query_texts(ctx: QueryContext) -> set[str]:
        """The high-level keywords joined: local searches with the low-level ones (the names, or the
        low-level keywords joined); only with no low-level keyword does it fall back to the high ones."""
        low, high = ctx.keywords()
        if not low:
            return set()
        names = ctx.link_names()
        return {", ".join(high)} - {ctx.question, *names, ", ".join(names), ", ".join(low)}

    def gather(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch) -> Gathered:
        """Entities, their incident relations and their chunks, ranked, before any token budget."""
        terms, label = search_terms(ctx, result, clock, "low")
        if not terms:
            return Gathered()
        with clock.stage("graph_walk"):
            graph = ctx.graph
        if len(graph) == 0:
            result.log("graph", "graph_empty")
            return Gathered()
        s = ctx.settings
        seeds = seeds_for(ctx, result, clock, terms, fill=True)
        with clock.stage("graph_walk"):
            pairs = [(seed.key, seed.score) for seed in seeds]
            entities, relations = local_expand(graph, pairs, top_k=s.lightrag_top_k, threshold=s.cosine_threshold,
                                               query_label=label, reasons={x.key: x.reason() for x in seeds})
        if not entities:
            result.log("vector_search", "nothing_above", noun="entity", threshold=s.cosine_threshold)
            return Gathered()
        result.log("graph_walk", "local_expand", relations=len(relations), entities=len(entities))
        owners = [(f"entity {e.name}", e.source_chunk_ids) for e in entities]
        return with_chunks(ctx, result, clock, entities, relations, owners, "entity",
                           [e.score for e in entities])
