"""naive mode: the question's embedding against the chunk vectors, top-k chunks (k = 10)."""
from __future__ import annotations

from core.retrieval.query import QueryContext, Stopwatch
from core.retrieval.results import fill_chunk_texts, finish, new_result
from core.retrieval.context_blocks import prefix_within, sources_text
from core.retrieval.funnel import set_funnel
from core.retrieval.token_counts import context_counter
from core.types import ChunkHit, RetrievalResult


class NaiveRetriever:
    name = "naive"
    params = ("naive_top_k", "max_total_tokens")
    embeds_question_first = True  # nothing to overlap the question's embedding with (no parse first)

    def retrieve(self, ctx: QueryContext) -> RetrievalResult:
        result = new_result(ctx, self.name, self.params)
        clock = Stopwatch(result)
        with clock.stage("embed_query"):
            vector = ctx.embed(ctx.question)
        with clock.stage("vector_search"):
            hits = ctx.search_chunks(vector, ctx.settings.naive_top_k)
        with clock.stage("context"):
            records = [ChunkHit.make(h.id, h.score, f"cosine {h.score:.3f} to the question") for h in hits]
            records = fill_chunk_texts(ctx.ws, records)
            set_funnel(result, [r.chunk_id for r in records])
            count = context_counter(ctx.ws).count  # exact, from the generation's segment table
            records, _ = prefix_within(records, lambda c: count(c.text), ctx.settings.max_total_tokens)
            result.chunks = records
            exact = ctx.settings.vector_search != "approximate"  # exact: the in-memory matrix, no store round trip
            total = ctx.ws.views.vectors.size("chunks") if exact else ctx.ws.vectors.count("chunks")
            result.log("vector_search", "dense_chunks", k=ctx.settings.naive_top_k, total=total, kept=len(records))
            finish(result, sources_text(records), [c.chunk_id for c in records], count)
        return result
