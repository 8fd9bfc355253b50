"""local mode (LightRAG low-level retrieval): the low-level keywords, joined with ", ", are embedded
and matched against the entity vectors (top_k = 40, cosine >= 0.2); the relations incident to those
entities are ranked by edge degree then weight; each entity brings its source chunks most similar to
the question (``chunks_per_entity``). Everything is then cut to LightRAG's token budgets."""
from __future__ import annotations

from core.retrieval.base import QueryContext, Stopwatch, new_result
from core.retrieval.lightrag_context import LIGHTRAG_PARAMS, Gathered, assemble, chunk_records, local_expand, search_terms
from core.types import RetrievalResult


class LocalRetriever:
    name = "local"

    def gather(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, prefix: str = "") -> Gathered:
        """Entities, their incident relations and their chunks, ranked, before any token budget."""
        terms, label = search_terms(ctx, result, clock, "low", prefix)
        if not terms:
            return Gathered()
        s = ctx.settings
        with clock.stage("embed_query"):
            vector = ctx.embed(", ".join(terms))
        with clock.stage("vector_search"):
            hits = ctx.ws.vectors.query("entities", vector, s.lightrag_top_k)
        with clock.stage("graph_walk"):
            graph = ctx.ws.knowledge_graph()
            if graph.number_of_nodes() == 0:
                result.trace.append(f"{prefix}the knowledge graph is empty: index some documents first")
                return Gathered()
            pairs = [(str(h.metadata.get("key", "")), h.score) for h in hits]
            entities, relations = local_expand(graph, pairs, top_k=s.lightrag_top_k, threshold=s.cosine_threshold,
                                               query_label=label)
        above = sum(1 for _, score in pairs if score >= s.cosine_threshold)
        missing = above - len(entities)
        result.trace.append(
            f"{prefix}entity search: top-{s.lightrag_top_k} of {graph.number_of_nodes()} entities, {above} above "
            f"cosine {s.cosine_threshold}" + (f", {missing} not in the graph (stale vectors)" if missing else ""))
        if not entities:
            result.trace.append(f"{prefix}no entity reached cosine {s.cosine_threshold}: nothing retrieved")
            return Gathered()
        result.trace.append(f"{prefix}expanded to {len(relations)} relations (1-hop neighbourhood of "
                            f"{len(entities)} entities, ranked by edge degree, then weight)")
        owners = [(f"entity {e['name']}", e["source_chunk_ids"]) for e in entities]
        chunks = chunk_records(ctx, clock, owners, via="entity")
        result.trace.append(f"{prefix}{len(chunks)} source chunks ({ctx.settings.chunks_per_entity} per entity at "
                            f"most, by cosine to the question)")
        return Gathered(entities, relations, chunks)

    def retrieve(self, ctx: QueryContext) -> RetrievalResult:
        result = new_result(ctx, self.name, LIGHTRAG_PARAMS)
        clock = Stopwatch(result)
        return assemble(ctx, result, clock, self.gather(ctx, result, clock))
