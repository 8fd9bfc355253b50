"""naive mode: the question's embedding against the chunk vectors, top-k chunks (k = 10)."""
from __future__ import annotations

from core.retrieval.base import QueryContext, Stopwatch, chunk_record, fill_chunk_texts, finish, new_result, take_within_budget
from core.retrieval.funnel import set_funnel
from core.types import RetrievalResult


def render_chunks(chunks: list[dict]) -> str:
    """Source chunks as the answer model sees them, numbered in rank order."""
    return "\n\n".join(f"[{i + 1}] ({c['doc_name']}, chunk {c['order'] + 1})\n{c['text']}" for i, c in enumerate(chunks))


class NaiveRetriever:
    name = "naive"
    params = ("naive_top_k", "max_total_tokens")

    def retrieve(self, ctx: QueryContext) -> RetrievalResult:
        result = new_result(ctx, self.name, self.params)
        clock = Stopwatch(result)
        with clock.stage("embed_query"):
            vector = ctx.embed(ctx.question)
        with clock.stage("vector_search"):
            hits = ctx.ws.vectors.query_chunks(vector, ctx.settings.naive_top_k)
        with clock.stage("context"):
            records = [chunk_record(ctx.ws, h.id, h.score, f"cosine {h.score:.3f} to the question") for h in hits]
            records = fill_chunk_texts(ctx.ws, records)
            set_funnel(result, [r["chunk_id"] for r in records])
            records, _ = take_within_budget(records, lambda c: c["text"], ctx.settings.max_total_tokens)
            result.chunks = records
            result.trace.append(f"dense top-{ctx.settings.naive_top_k} over {ctx.ws.vectors.count('chunks')} chunks: "
                                f"{len(records)} kept")
            finish(result, render_chunks(records), [c["chunk_id"] for c in records])
        return result
