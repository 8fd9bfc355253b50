"""ppr mode (HippoRAG-style personalised PageRank): the question's linked entities (each weighted by
its link score) and the dense chunk hits (weight ``PASSAGE_WEIGHT`` times their cosine) seed a
random walk with restart (``DAMPING``) over the entity+chunk graph of ``core.retrieval.ppr_graph``;
chunks are ranked by their PageRank score, top-k kept within the token budget."""
from __future__ import annotations

from core.retrieval.context_blocks import prefix_within, sources_text
from core.retrieval.funnel import set_funnel
from core.retrieval.lightrag_search import seeds_for
from core.retrieval.ppr_graph import CHUNK_PREFIX, graph_matrix, personalized_pagerank
from core.retrieval.query import QueryContext, Stopwatch
from core.retrieval.results import fill_chunk_texts, finish, new_result
from core.retrieval.token_counts import context_counter
from core.types import ChunkHit, RetrievalResult

PASSAGE_WEIGHT = 0.05  # the dense chunk scores' share of the restart vector (HippoRAG 2)
DAMPING = 0.5  # probability of following an edge at each step
DENSE_SEEDS = 20  # dense chunk hits that join the restart vector


class PPRRetriever:
    name = "ppr"
    params = ("naive_top_k", "max_total_tokens")

    def retrieve(self, ctx: QueryContext) -> RetrievalResult:
        result = new_result(ctx, self.name, self.params)
        clock = Stopwatch(result)
        low, high = ctx.keywords()
        seeds = seeds_for(ctx, result, clock, low or high) if (low or high) else []
        with clock.stage("embed_query"):
            vector = ctx.embed(ctx.question)
        with clock.stage("vector_search"):
            dense = ctx.search_chunks(vector, max(DENSE_SEEDS, ctx.settings.naive_top_k))
        with clock.stage("graph_walk"):
            matrix = graph_matrix(ctx.graph)
            restart: dict[str, float] = {}
            for seed in seeds:
                restart[seed.key] = restart.get(seed.key, 0.0) + max(float(seed.score), 1e-6)
            for hit in dense:
                restart[CHUNK_PREFIX + hit.id] = PASSAGE_WEIGHT * max(float(hit.score), 0.0)
            scores = personalized_pagerank(matrix, restart, alpha=DAMPING)
            ranked = sorted(((float(scores[i]), k[len(CHUNK_PREFIX):]) for k, i in matrix.index.items()
                             if k.startswith(CHUNK_PREFIX) and scores[i] > 0), key=lambda t: (-t[0], t[1]))
            result.log("graph_walk", "ppr", seeds=len(seeds), dense=len(dense), nodes=len(matrix.keys),
                       damping=DAMPING)
        if not ranked:  # no graph or nothing reachable: the dense ranking
            ranked = [(float(h.score), h.id) for h in dense]
        with clock.stage("context"):
            k = ctx.settings.naive_top_k
            records = [ChunkHit.make(cid, score, f"personalised PageRank {score:.4f}") for score, cid in ranked[:k]]
            records = fill_chunk_texts(ctx.ws, records)
            set_funnel(result, [r.chunk_id for r in records])
            count = context_counter(ctx.ws).count
            records, _ = prefix_within(records, lambda c: count(c.text), ctx.settings.max_total_tokens)
            result.chunks = records
            finish(result, sources_text(records), [c.chunk_id for c in records], count)
        return result
