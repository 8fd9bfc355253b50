"""The retrieval machinery the four LightRAG modes (local, global, hybrid, mix) share once a
``QueryContext`` is involved: chunk records with their similarity to the question and ``assemble`` (budgets, rendering, funnel, keyword
usage); ``LightRAGRetriever`` is their common base. The pure pieces (expansion, budgets, CSV context)
are in ``core.retrieval.lightrag_context``; the searches they start from (keywords of a level, vector
hits, seeds, the anchored relation search) in ``core.retrieval.lightrag_search``.
"""
from __future__ import annotations

from typing import Optional, Sequence

from core.retrieval.context_blocks import add_keyword_usage
from core.retrieval.context_dedup import render_compact_within
from core.retrieval.funnel import lightrag_funnel
from core.retrieval.lightrag_context import (Budgeted, Gathered, apply_budgets, pick_reason, render_within, renumber,
                                             select_chunks)
from core.retrieval.query import QueryContext, Stopwatch
from core.retrieval.results import fill_chunk_texts, finish, new_result
from core.retrieval.token_counts import context_counter, corpus_tokens, graph_row_costs
from core.types import ChunkHit, EntityHit, RelationHit, RetrievalResult

LIGHTRAG_PARAMS = ["lightrag_top_k", "cosine_threshold", "chunks_per_entity", "max_entity_tokens",
                   "max_relation_tokens", "max_total_tokens"]


def chunk_records(ctx: QueryContext, clock: Stopwatch, owners: Sequence[tuple[str, Sequence[str]]], via: str,
                  owner_scores: Optional[Sequence[float]] = None) -> list[ChunkHit]:
    """Source chunks of ranked owners, ``chunks_per_entity`` each, ranked by cosine to the question
    (paper) or by owner score + cosine (``owner_scores`` given, see ``select_chunks``)."""
    candidate_ids = list(dict.fromkeys(c for _, ids in owners for c in ids))
    if not candidate_ids:
        return []
    with clock.stage("embed_query"):
        question = ctx.embed(ctx.question)
    with clock.stage("vector_search"):
        search = ctx.ws.views.vectors
        search.size("chunks")  # loads the chunk vectors once per generation
    with clock.stage("ranking"):
        similarity = search.cosines("chunks", question, candidate_ids)  # a chunk's best window
        records = []
        for pick in select_chunks(owners, similarity, ctx.settings.chunks_per_entity, owner_scores):
            record = ChunkHit.make(pick.chunk_id, pick.score, pick_reason(pick))
            record.via, record.brought_by = via, list(pick.brought_by)
            records.append(record)
    return records


# How far the sum of a budgeted context's parts (``apply_budgets``: rows, blocks, section headers) may
# miss the exact count of the rendered context: cl100k never merges across a line break followed by
# text, so only section edges can differ, by a token or two (0 on all 204 dev_musique LightRAG-mode
# contexts, whose headroom under the total was >= 9,256 tokens). A context this far under the total
# keeps every record, so the full rendering that would check it is skipped.
EDGE_TOKENS = 16


def surely_within(fit: Budgeted, max_total_tokens: int) -> bool:
    """True when the budgeted lists fit ``max_total_tokens`` whatever the section edges cost, so
    ``render_within`` would drop nothing."""
    return sum(fit.tokens.values()) + EDGE_TOKENS <= max_total_tokens


def assemble(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, gathered: Gathered) -> RetrievalResult:
    """Fill chunk texts, apply the token budgets, render the context, finish the result and add the
    keyword extraction's LLM usage."""
    s = ctx.settings
    with clock.stage("context"):
        chunks = fill_chunk_texts(ctx.ws, gathered.chunks)
        count = context_counter(ctx.ws).count  # exact counts from the generation's segment table
        fit = apply_budgets(gathered.entities, gathered.relations, chunks, max_entity_tokens=s.max_entity_tokens,
                            max_relation_tokens=s.max_relation_tokens, max_total_tokens=s.max_total_tokens,
                            row_costs=ctx.ws.views.derived(graph_row_costs), counter=count)
        t = fit.tokens
        result.log("budgets", "budgets", entities=len(fit.entities), entities_before=len(gathered.entities),
                   entity_tokens=t["entities"], max_entity_tokens=s.max_entity_tokens,
                   relations=len(fit.relations), relations_before=len(gathered.relations),
                   relation_tokens=t["relations"], max_relation_tokens=s.max_relation_tokens,
                   chunks=len(fit.chunks), chunks_before=len(chunks), chunk_tokens=t["chunks"],
                   max_total_tokens=s.max_total_tokens)
        if fit.entities or fit.relations or fit.chunks:
            # The selection: the budgets over the full rows, exactly as before compacting. The full
            # context is rendered and counted only when the budgets' own sum comes near the total.
            dropped = 0 if surely_within(fit, s.max_total_tokens) else \
                render_within(fit, s.max_total_tokens, counter=count)[2]
            if dropped:
                result.log("budgets", "trailing_dropped", dropped=dropped, max_total_tokens=s.max_total_tokens)
            # What is rendered: each piece of text once, at most the corpus's size.
            corpus = ctx.ws.views.derived(corpus_tokens)
            cap = min(s.max_total_tokens, corpus) if corpus > 0 else s.max_total_tokens
            context, tokens, done = render_compact_within(fit, cap, count)
            finish(result, context, [c.chunk_id for c in fit.chunks], lambda _text: tokens)
            if done["pointers"]:
                result.log("budgets", "compacted", pointers=done["pointers"], tokens=tokens)
            if done["dropped"]:
                result.log("budgets", "corpus_cap", dropped=done["dropped"], corpus_tokens=corpus)
        else:
            finish(result, "", [])
        result.entities, result.relations = renumber(fit.entities), renumber(fit.relations)
        result.chunks = renumber(fit.chunks)
        lightrag_funnel(result, gathered.entities, gathered.relations, chunks)
    add_keyword_usage(result, ctx.keyword_usage)
    return result


def with_chunks(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch,
                entities: list[EntityHit], relations: list[RelationHit],
                owners: Sequence[tuple[str, Sequence[str]]], via: str,
                owner_scores: Optional[Sequence[float]] = None) -> Gathered:
    """Add the owners' source chunks (``chunks_per_entity`` each, the closest to the question),
    ranked by cosine (paper) or by the owner's score + cosine (RAGScope)."""
    evidence = ctx.strategies.evidence
    scores = evidence.owner_scores(owner_scores)
    chunks = chunk_records(ctx, clock, owners, via=via, owner_scores=scores)
    order = evidence.describe(via, scores)
    result.log("chunks", "source_chunks", chunks=len(chunks), per_owner=ctx.settings.chunks_per_entity, via=via,
               order=order)
    return Gathered(entities, relations, chunks)


class LightRAGRetriever:
    """A LightRAG mode: ``gather`` ranks entities, relations and chunks; ``retrieve`` budgets them."""

    name = ""
    params = tuple(LIGHTRAG_PARAMS)

    def gather(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch) -> Gathered:
        raise NotImplementedError

    def retrieve(self, ctx: QueryContext) -> RetrievalResult:
        result = new_result(ctx, self.name, self.params)
        clock = Stopwatch(result)
        return assemble(ctx, result, clock, self.gather(ctx, result, clock))
