"""The searches the LightRAG modes start from, given a ``QueryContext``: which keywords a level
searches with, a level's vector hits, the question's seed entities (traced per mode) and RAGScope's
anchored relation search. Below the modes and ``core.retrieval.strategies`` (which picks between
these searches), so it imports neither."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from core.retrieval.anchoring import ANCHOR_BONUS, question_anchored
from core.retrieval.query import QueryContext, RelationSearch, Seed, Stopwatch
from core.storage.ports import GraphView
from core.storage.records import VectorHit
from core.types import RetrievalResult

LEVEL_NAMES = {"low": "low-level", "high": "high-level"}
SHOWN_SEEDS = 8  # seeds named in the trace line


def edge_count(graph: GraphView) -> int:
    """Number of relations of a graph view (counted once per view)."""
    return int(graph.relation_count())


def search_terms(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, level: str
                 ) -> tuple[list[str], str]:
    """The keywords one level searches with ('low' or 'high'), falling back to the other level when
    empty; records both keyword lists in the result. Returns (terms, a label used in reasons)."""
    with clock.stage("keywords"):
        low, high = ctx.keywords()
    result.keywords = {"low": list(low), "high": list(high)}
    extractor = getattr(ctx.keyword_extractor, "name", "keywords")
    result.log("keywords", "keywords", extractor=extractor, low=list(low), high=list(high))
    other = "high" if level == "low" else "low"
    terms, used = list(low if level == "low" else high), level
    if not terms:
        terms, used = list(high if level == "low" else low), other
        if terms:
            result.log("keywords", "keyword_fallback", level=LEVEL_NAMES[level], other=LEVEL_NAMES[other])
    if not terms:
        result.log("keywords", "no_keywords")
        return [], ""
    joined = ", ".join(terms)
    result.log("keywords", "keywords_searched", level=LEVEL_NAMES[used], terms=list(terms))
    return terms, f"{LEVEL_NAMES[used]} keywords '{joined}'"


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
        # with the question (used to rank chunks) and every other query string in one call
        ctx.prefetch([", ".join(terms), ctx.question])
        vector = ctx.embed(", ".join(terms))
    with clock.stage("vector_search"):
        hits = ctx.search(collection, vector, ctx.settings.lightrag_top_k)
    with clock.stage("graph_walk"):
        graph = ctx.graph
    size = len(graph) if collection == "entities" else edge_count(graph)
    if size == 0:
        result.log("graph", "graph_empty" if collection == "entities" else "no_relations")
        return None
    return VectorHits(list(hits), graph, label)


def trace_hits(result: RetrievalResult, ctx: QueryContext, noun: str, total: int,
               scores: Sequence[float], kept: int) -> bool:
    """Trace one vector search (how many hits passed the threshold, stale ones); False when none did."""
    s = ctx.settings
    above = sum(1 for score in scores if score >= s.cosine_threshold)
    missing = above - kept
    result.log("vector_search", "vector_search", noun=noun, top_k=s.lightrag_top_k, total=total, above=above,
               threshold=s.cosine_threshold, stale=missing)
    if not kept:
        result.log("vector_search", "nothing_above", noun=noun, threshold=s.cosine_threshold)
    return bool(kept)


def seeds_for(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, terms: Sequence[str],
              fill: bool = False) -> list[Seed]:
    """The question's entities linked to the graph (``QueryContext.seeds``: computed once per question,
    traced per mode); ``fill`` tops them up with the paper's joined search (local mode)."""
    with clock.stage("vector_search"):
        seeds = ctx.seeds(terms, fill)
    graph = ctx.graph
    how = ctx.strategies.seeds.describe(bool(ctx.state.seed_names), fill)
    result.log("seeds", "seeds", how=how, count=len(seeds),
               shown=[f"{graph.name(s.key)} ({s.reason()})" for s in seeds[:SHOWN_SEEDS]], keys=[s.key for s in seeds])
    return seeds


def anchored_hits(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch) -> Optional[RelationSearch]:
    """RAGScope's relation search: high-level keywords (or the low-level ones) anchored to the
    question's seed entities; None when there is nothing to search."""
    terms, label = search_terms(ctx, result, clock, "high")
    if not terms:
        return None
    with clock.stage("graph_walk"):
        graph = ctx.graph
    if edge_count(graph) == 0:
        result.log("graph", "no_relations")
        return None
    low, _ = ctx.keywords()
    seeds = seeds_for(ctx, result, clock, low or terms)
    with clock.stage("embed_query"):
        ctx.prefetch([", ".join(terms), ctx.question])  # the keywords' vector, used below
    with clock.stage("vector_search"):
        anchored = question_anchored(ctx, ", ".join(terms), seeds)
    anchored_count = sum(1 for r in anchored if r.anchor)
    result.log("relations", "anchored_relations", seeds=len(seeds), relations=len(anchored),
               threshold=ctx.settings.cosine_threshold, anchored=anchored_count, bonus=ANCHOR_BONUS)
    return RelationSearch([(r.pair[0], r.pair[1], r.score) for r in anchored],
                          {r.pair: r.reason(label) for r in anchored}, graph, label)

