"""The retrieval machinery the four LightRAG modes (local, global, hybrid, mix) share once a
``QueryContext`` is involved: which keywords a level searches with, vector hits and seeds, chunk
records with their similarity to the question, and ``assemble`` (budgets, rendering, funnel, keyword
usage); ``LightRAGRetriever`` is their common base. The pure pieces (expansion, budgets, CSV context)
are in ``core.retrieval.lightrag_context``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from core.extraction.query_terms import name_spans
from core.retrieval.base import (QueryContext, Stopwatch, edge_count, fill_chunk_texts, finish,
                                 new_result)
from core.retrieval.context import add_keyword_usage
from core.retrieval.entity_linking import Seed, question_seeds
from core.retrieval.funnel import lightrag_funnel
from core.retrieval.lightrag_context import (Gathered, apply_budgets, pick_reason, render_within, renumber,
                                             select_chunks)
from core.storage.ports import GraphView, VectorHit
from core.types import ChunkHit, EntityHit, RelationHit, RetrievalResult

LIGHTRAG_PARAMS = ["lightrag_top_k", "cosine_threshold", "chunks_per_entity", "max_entity_tokens",
                   "max_relation_tokens", "max_total_tokens"]
LEVEL_NAMES = {"low": "low-level", "high": "high-level"}


def search_terms(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, level: str
                 ) -> tuple[list[str], str]:
    """The keywords one level searches with ('low' or 'high'), falling back to the other level when
    empty; records both keyword lists in the result. Returns (terms, a label used in reasons)."""
    with clock.stage("keywords"):
        low, high = ctx.keywords()
    result.keywords = {"low": list(low), "high": list(high)}
    extractor = getattr(ctx.keyword_extractor, "name", "keywords")
    result.trace.append(f"keywords ({extractor}): low-level {list(low)}, high-level {list(high)}")
    other = "high" if level == "low" else "low"
    terms, used = list(low if level == "low" else high), level
    if not terms:
        terms, used = list(high if level == "low" else low), other
        if terms:
            result.trace.append(f"no {LEVEL_NAMES[level]} keywords: falling back to the "
                                f"{LEVEL_NAMES[other]} ones")
    if not terms:
        result.trace.append(f"no keywords at all: nothing to search with")
        return [], ""
    joined = ", ".join(terms)
    result.trace.append(f"{LEVEL_NAMES[used]} keywords searched: {joined}")
    return terms, f"{LEVEL_NAMES[used]} keywords '{joined}'"


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


def assemble(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, gathered: Gathered) -> RetrievalResult:
    """Fill chunk texts, apply the token budgets, render the context, finish the result and add the
    keyword extraction's LLM usage."""
    s = ctx.settings
    with clock.stage("context"):
        chunks = fill_chunk_texts(ctx.ws, gathered.chunks)
        fit = apply_budgets(gathered.entities, gathered.relations, chunks, max_entity_tokens=s.max_entity_tokens,
                            max_relation_tokens=s.max_relation_tokens, max_total_tokens=s.max_total_tokens)
        t = fit.tokens
        result.trace.append(
            f"budgets: {len(fit.entities)}/{len(gathered.entities)} entities in {t['entities']} tokens "
            f"(max {s.max_entity_tokens}); {len(fit.relations)}/{len(gathered.relations)} relations in "
            f"{t['relations']} tokens (max {s.max_relation_tokens}); {len(fit.chunks)}/{len(chunks)} chunks in "
            f"{t['chunks']} tokens (what is left of {s.max_total_tokens})")
        if fit.entities or fit.relations or fit.chunks:
            # finish() counts the context's tokens; using it as the counter avoids counting twice.
            context, _, dropped = render_within(
                fit, s.max_total_tokens,
                counter=lambda text: finish(result, text, [c.chunk_id for c in fit.chunks]).context_tokens)
            if dropped:
                result.trace.append(f"dropped {dropped} trailing record(s) so that the context fits in "
                                    f"{s.max_total_tokens} tokens exactly")
        else:
            finish(result, "", [])
        result.entities, result.relations = renumber(fit.entities), renumber(fit.relations)
        result.chunks = renumber(fit.chunks)
        lightrag_funnel(result, gathered.entities, gathered.relations, chunks)
    add_keyword_usage(result, ctx.keyword_usage)
    return result


@dataclass
class VectorHits:
    """A keyword level's vector search over one collection: the hits, the graph and the label reasons quote."""

    hits: list[VectorHit]
    graph: GraphView
    label: str


def vector_hits(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, level: str, collection: str
                ) -> Optional[VectorHits]:
    """Keywords of one level embedded (joined with ", ") and matched against one collection.

    None when there is nothing to search with or the graph has no items of that kind (the trace
    says which)."""
    terms, label = search_terms(ctx, result, clock, level)
    if not terms:
        return None
    with clock.stage("embed_query"):
        # both keyword levels and the question (used to rank chunks) in one call: hybrid and mix
        # need all three, and a batch of three costs little more than one
        ctx.prefetch([", ".join(terms)] + [", ".join(level_terms) for level_terms in ctx.keywords()] + [ctx.question])
        vector = ctx.embed(", ".join(terms))
    with clock.stage("vector_search"):
        hits = ctx.search(collection, vector, ctx.settings.lightrag_top_k)
    with clock.stage("graph_walk"):
        graph = ctx.graph
    size = len(graph) if collection == "entities" else edge_count(graph)
    if size == 0:
        what = "is empty" if collection == "entities" else "has no relations"
        result.trace.append(f"the knowledge graph {what}: index some documents first")
        return None
    return VectorHits(list(hits), graph, label)


def trace_hits(result: RetrievalResult, ctx: QueryContext, noun: str, total: int,
               scores: Sequence[float], kept: int) -> bool:
    """Trace one vector search (how many hits passed the threshold, stale ones); False when none did."""
    s = ctx.settings
    above = sum(1 for score in scores if score >= s.cosine_threshold)
    missing = above - kept
    result.trace.append(
        f"{noun} search: top-{s.lightrag_top_k} of {total} {noun}s, {above} above cosine "
        f"{s.cosine_threshold}" + (f", {missing} not in the graph (stale vectors)" if missing else ""))
    if not kept:
        result.trace.append(f"no {noun} reached cosine {s.cosine_threshold}: nothing retrieved")
    return bool(kept)


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
    result.trace.append(f"{len(chunks)} source chunks (at most {ctx.settings.chunks_per_entity} per {via}, "
                        f"{order})")
    return Gathered(entities, relations, chunks)


def seeds_for(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, terms: Sequence[str],
              fill: bool = False) -> list[Seed]:
    """The question's entities linked to the graph (computed once per question, traced per mode);
    ``fill`` tops them up with the paper's joined search (local mode)."""
    state = ctx.state
    with clock.stage("vector_search"):
        seeds = state.seeds_filled if fill else state.seeds
        if seeds is None:
            names = link_names_of(ctx)
            seeds = question_seeds(ctx, names, terms, fill=fill)
            if fill:
                state.seeds_filled = seeds
            else:
                state.seeds = seeds
            state.seed_names = names
    graph = ctx.graph
    how = ctx.strategies.seeds.describe(bool(state.seed_names), fill)
    shown = ", ".join(f"{graph.name(s.key)} ({s.reason()})" for s in seeds[:8])
    result.trace.append(f"seed entities ({how}): {len(seeds)}" + (f" — {shown}" if shown else "")
                        + (" …" if len(seeds) > 8 else ""))
    return seeds


def link_names_of(ctx: QueryContext) -> list[str]:
    """The names entity linking looks up: the graph's own names found verbatim in the question
    (``dictionary_names``), then, offline, the question's name spans (no dates or amounts) or, with
    LLM keywords, the low-level keywords."""
    low, _ = ctx.keywords()
    spans = name_spans(ctx.question) if getattr(ctx.keyword_extractor, "name", "") == "spacy" else list(low)
    return ctx.strategies.seeds.names(ctx.ws, ctx.question, spans)


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
