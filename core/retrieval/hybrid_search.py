"""hybrid and mix modes (LightRAG): local and global run on the same question, and their entities,
relations and chunks are merged round-robin (1st local, 1st global, 2nd local, …) without duplicates,
then cut to the token budgets. mix adds the naive mode's dense chunk search to the chunk merge."""
from __future__ import annotations

from typing import Callable, Hashable, Sequence, TypeVar

from core.retrieval.query import QueryContext, Stopwatch
from core.retrieval.global_search import GlobalRetriever
from core.retrieval.lightrag_context import Gathered, chunk_key, entity_key, relation_key, round_robin
from core.retrieval.lightrag_retrieval import LIGHTRAG_PARAMS, LightRAGRetriever, assemble
from core.retrieval.local_search import LocalRetriever
from core.retrieval.results import new_result
from core.types import ChunkHit, EntityHit, RelationHit, RetrievalResult


Merged = TypeVar("Merged", EntityHit, RelationHit, ChunkHit)


def merge_labelled(labelled: Sequence[tuple[str, list[Merged]]], key: Callable[[Merged], Hashable]) -> list[Merged]:
    """``round_robin`` over the lists; a kept record that another list also found says so in its
    reason and in ``also_found_by`` (the labels of the other lists)."""
    merged = round_robin(*(records for _, records in labelled), key=key)
    kept = {key(record): record for record in merged}
    for label, records in labelled:
        for record in records:
            first = kept[key(record)]
            if first is record:
                continue
            if first.also_found_by is None:
                first.also_found_by = []
            if label not in first.also_found_by:
                first.also_found_by.append(label)
                first.reason += f"; also found by {label}"
    return merged


def merge(local: Gathered, global_: Gathered, result: RetrievalResult) -> Gathered:
    """Round-robin merge of the local and global lists (local first), traced."""
    merged = Gathered(merge_labelled([("local", local.entities), ("global", global_.entities)], entity_key),
                      merge_labelled([("local", local.relations), ("global", global_.relations)], relation_key),
                      merge_labelled([("local", local.chunks), ("global", global_.chunks)], chunk_key))
    for what, a, b, m in (("entities", local.entities, global_.entities, merged.entities),
                          ("relations", local.relations, global_.relations, merged.relations),
                          ("chunks", local.chunks, global_.chunks, merged.chunks)):
        result.log("merge", "merge", what=what, local=len(a), global_=len(b), merged=len(m))
    return merged


def branch(result: RetrievalResult, name: str, run: Callable[[], Gathered]) -> Gathered:
    """Run one branch (local or global) and mark the trace events it added with the branch's name."""
    start = len(result.trace)
    gathered = run()
    for event in result.trace[start:]:
        event.branch = name
    return gathered


class HybridRetriever(LightRAGRetriever):
    name = "hybrid"

    def gather(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch) -> Gathered:
        local = branch(result, "local", lambda: LocalRetriever().gathered(ctx, result, clock))
        global_ = branch(result, "global", lambda: GlobalRetriever().gathered(ctx, result, clock))
        return merge(local, global_, result)


class MixRetriever:
    name = "mix"
    params = (*LIGHTRAG_PARAMS, "naive_top_k")
    searches_each_name = True  # its seeds (``lightrag_search.seeds_for``) search each name's vector

    def retrieve(self, ctx: QueryContext) -> RetrievalResult:
        result = new_result(ctx, self.name, self.params)
        clock = Stopwatch(result)
        gathered = HybridRetriever().gathered(ctx, result, clock)
        k = ctx.settings.naive_top_k
        with clock.stage("embed_query"):
            vector = ctx.embed(ctx.question)
        with clock.stage("vector_search"):
            hits = ctx.search_chunks(vector, k)
        naive = []
        for hit in hits:
            record = ChunkHit.make(hit.id, hit.score, f"naive: cosine {hit.score:.3f} to the question")
            record.via, record.brought_by = "naive", []
            naive.append(record)
        chunks = merge_labelled([("graph", gathered.chunks), ("naive", naive)], chunk_key)
        result.log("merge", "mix_chunks", graph=len(gathered.chunks), naive=len(naive), k=k, merged=len(chunks))
        return assemble(ctx, result, clock, Gathered(gathered.entities, gathered.relations, chunks))
