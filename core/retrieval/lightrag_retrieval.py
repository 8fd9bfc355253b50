"""The retrieval machinery the four LightRAG modes (local, global, hybrid, mix) share once a
``QueryContext`` is involved: chunk records with their similarity to the question and ``assemble`` (budgets, rendering, funnel, keyword
usage); ``LightRAGRetriever`` is their common base. The pure pieces (expansion, budgets, CSV context)
are in ``core.retrieval.lightrag_context``; the searches they start from (keywords of a level, vector
hits, seeds, the anchored relation search) in ``core.retrieval.lightrag_search``.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from core.retrieval.context_blocks import add_keyword_usage
from core.retrieval.context_dedup import render_compact_within
from core.retrieval.funnel import lightrag_funnel
from core.retrieval.lightrag_context import (Budgeted, Gathered, apply_budgets, pick_reason, render_within, renumber,
                                             select_chunks)
from core.retrieval.query import QueryContext, Stopwatch
from core.retrieval.results import fill_chunk_texts, finish, new_result
from core.retrieval.token_counts import context_counter, corpus_tokens, graph_row_costs
from core.trace import TraceEvent
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
        counts = context_counter(ctx.ws)  # exact counts from the generation's segment table
        count = counts.count
        fit = apply_budgets(gathered.entities, gathered.relations, chunks, max_entity_tokens=s.max_entity_tokens,
                            max_relation_tokens=s.max_relation_tokens, max_total_tokens=s.max_total_tokens,
                            row_costs=ctx.ws.views.derived(graph_row_costs), counter=count,
                            block_cost=counts.block_cost)
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
            context, tokens, done = render_compact_within(fit, cap, count, ctx.ws.views.derived(graph_row_costs),
                                                         counts.pieces)
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


@dataclass
class GatheredOnce:
    """What one gather left: its records, the trace events it logged and the keywords it recorded."""

    gathered: Gathered
    trace: list[TraceEvent]
    keywords: dict[str, list[str]]


@dataclass
class GathersByQuestion:
    """A question's LightRAG gathers (local, global, hybrid) by name and workspace generation, kept in
    ``QuestionState.attached``: in one Compare, hybrid and mix repeat local's and global's gathers, which
    depend only on the question's state, so each runs once and the others replay it. ``used`` counts
    the replays."""

    done: dict[tuple[str, int], GatheredOnce] = field(default_factory=dict)
    used: int = 0


def _fresh(gathered: Gathered) -> Gathered:
    """Copies of the records that a later step may change (hybrid's merge adds ``also_found_by`` and a
    reason; the budgets set positions, the store fills chunk texts): the kept records stay as gathered."""

    def each(records: list) -> list:
        out = []
        for record in records:
            twin = object.__new__(type(record))  # a shallow copy (copy.copy's reduce protocol costs 5x more)
            twin.__dict__.update(record.__dict__)
            if twin.also_found_by is not None:
                twin.also_found_by = list(twin.also_found_by)
            out.append(twin)
        return out

    return Gathered(each(gathered.entities), each(gathered.relations), each(gathered.chunks))


def _replay(once: GatheredOnce, result: RetrievalResult) -> Gathered:
    result.trace.extend(copy.copy(event) for event in once.trace)
    if once.keywords:
        result.keywords = {level: list(terms) for level, terms in once.keywords.items()}
    return _fresh(once.gathered)


def gathered_once(ctx: QueryContext, result: RetrievalResult, name: str, run: Callable[[], Gathered]) -> Gathered:
    """``run()`` (a LightRAG gather named ``name``) the first time the question asks for it; after that
    its records, trace events and keywords replayed into ``result`` (identical results, tested)."""
    memo = ctx.state.attached(GathersByQuestion)
    key = (name, ctx.ws.views.generation)
    found = memo.done.get(key)
    if found is not None:
        memo.used += 1
        return _replay(found, result)
    start, keywords_before = len(result.trace), result.keywords
    gathered = run()
    keywords = result.keywords if result.keywords is not keywords_before else {}
    memo.done[key] = GatheredOnce(_fresh(gathered), [copy.copy(e) for e in result.trace[start:]],
                                  {level: list(terms) for level, terms in (keywords or {}).items()})
    return gathered


class LightRAGRetriever:
    """A LightRAG mode: ``gather`` ranks entities, relations and chunks; ``retrieve`` budgets them."""

    name = ""
    params = tuple(LIGHTRAG_PARAMS)
    searches_each_name = True  # its seeds: each name's own vector search (``registry.retrieve`` starts them early)

    def gather(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch) -> Gathered:
        raise NotImplementedError

    def retrieve(self, ctx: QueryContext) -> RetrievalResult:
        result = new_result(ctx, self.name, self.params)
        clock = Stopwatch(result)
        return assemble(ctx, result, clock, self.gathered(ctx, result, clock))

    def gathered(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch) -> Gathered:
        """``gather``, once per question (``gathered_once``): the other modes of a Compare replay it."""
        return gathered_once(ctx, result, self.name, lambda: self.gather(ctx, result, clock))
