"""global mode (LightRAG high-level retrieval): the high-level keywords, joined with ", ", are embedded
and matched against the relation vectors (top_k = 40, cosine >= 0.2), ranked by cosine, edge degree and
weight; their endpoint entities follow in order of appearance; each relation brings its source chunks
most similar to the question. With no high-level keywords the low-level ones are used (traced).

RAGScope's relation ranking (``core.retrieval.strategies.AnchoredRelations``): the relations are anchored to the question's entities
(``core.retrieval.anchoring``: cosine + a bonus for touching a question entity or a neighbour of
one), and the evidence chunks are ordered by their relation's score + their own cosine to the question.
"""
from __future__ import annotations

from core.retrieval.lightrag_context import Gathered, global_expand
from core.retrieval.lightrag_retrieval import LightRAGRetriever, with_chunks
from core.retrieval.lightrag_search import edge_count, trace_hits
from core.retrieval.query import QueryContext, Stopwatch
from core.types import RetrievalResult


class GlobalRetriever(LightRAGRetriever):
    name = "global"

    @staticmethod
    def unread_query_texts(ctx: QueryContext) -> set[str]:
        """The question's names joined, when its names are linked one by one (RAGScope's seeds): only
        local mode's joined top-up search reads that string. The low-level keywords joined (often the
        same string: the names are the low-level keywords) are read only when there is no high-level
        keyword to fall back from, so with high-level keywords that string is unread too."""
        if not ctx.strategies.seeds.shares_mode_seeds:
            return set()
        names = ctx.link_names()
        if len(names) < 2:
            return set()
        low, high = ctx.keywords()
        read = {ctx.question, *names, ", ".join(high)} | (set() if high else {", ".join(low)})
        return {", ".join(names)} - read

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
        result.log("graph_walk", "endpoints", entities=len(entities), relations=len(relations))
        owners = [(f"relation {r.source} — {r.target}", r.source_chunk_ids) for r in relations]
        return with_chunks(ctx, result, clock, entities, relations, owners, "relation",
                           [r.score for r in relations])
