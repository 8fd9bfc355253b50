"""global mode (LightRAG high-level retrieval): the high-level keywords, joined with ", ", are embedded
and matched against the relation vectors (top_k = 40, cosine >= 0.2), ranked by cosine, edge degree and
weight; their endpoint entities follow in order of appearance; each relation brings its source chunks
most similar to the question. With no high-level keywords the low-level ones are used (traced)."""
from __future__ import annotations

from core.retrieval.base import QueryContext, Stopwatch, edge_count
from core.retrieval.lightrag_context import Gathered, global_expand
from core.retrieval.local_search import LightRAGRetriever, trace_hits, vector_hits, with_chunks
from core.types import RetrievalResult


class GlobalRetriever(LightRAGRetriever):
    name = "global"

    def gather(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, prefix: str = "") -> Gathered:
        """Relations, their endpoint entities and their chunks, ranked, before any token budget."""
        hits, graph, label = vector_hits(ctx, result, clock, "high", "relations", prefix)
        if graph is None:
            return Gathered()
        s = ctx.settings
        with clock.stage("graph_walk"):
            triples = [(str(h.metadata.get("source", "")), str(h.metadata.get("target", "")), h.score) for h in hits]
            entities, relations = global_expand(graph, triples, top_k=s.lightrag_top_k,
                                                threshold=s.cosine_threshold, query_label=label)
        if not trace_hits(result, ctx, prefix, "relation", edge_count(graph), [t[2] for t in triples],
                          len(relations)):
            return Gathered()
        result.trace.append(f"{prefix}{len(entities)} endpoint entities of {len(relations)} relations "
                            f"(in order of appearance)")
        owners = [(f"relation {r['source']} — {r['target']}", r["source_chunk_ids"]) for r in relations]
        return with_chunks(ctx, result, clock, prefix, entities, relations, owners, "relation")
