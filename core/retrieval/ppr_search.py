"""ppr mode (HippoRAG-style personalised PageRank): the restart vector of ``core.retrieval.ppr_seeds``
(the question's linked entities, the endpoints of its best-matching facts, the dense chunk hits at a
small weight) seeds a random walk with restart (``PPRRecipe.damping``) over the entity+chunk graph
of ``core.retrieval.ppr_graph``; chunks are ranked by their PageRank mass, top-k kept within the
token budget. The recipe is RAGScope's, or the papers' when the strategies are (``ctx.strategies.paper``).

Trace: ``ppr_seeds`` (every seed with its weight, kind and why), ``ppr`` (the walk, the top entities
by PageRank mass); each chunk's reason gives its mass, rank, its own restart weight and the entities
next to it that carried the most mass."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from core.retrieval.context_blocks import add_keyword_usage, prefix_within, sources_text
from core.retrieval.funnel import set_funnel
from core.retrieval.lightrag_search import seeds_for
from core.retrieval.ppr_graph import CHUNK_PREFIX, GraphMatrix, graph_matrix, personalized_pagerank
from core.retrieval.ppr_seeds import PAPER, RAGSCOPE, PPRRecipe, PPRSeed, fact_scores, question_facts, restart_seeds
from core.retrieval.query import QueryContext, Stopwatch
from core.retrieval.results import fill_chunk_texts, finish, new_result
from core.retrieval.token_counts import context_counter
from core.types import ChunkHit, RetrievalResult

PASSAGE_WEIGHT = RAGSCOPE.passage_weight  # the dense chunk scores' share of the restart vector (HippoRAG 2)
DAMPING = RAGSCOPE.damping  # probability of following an edge at each step
DENSE_SEEDS = RAGSCOPE.dense_seeds  # dense chunk hits that join the restart vector
TOP_ENTITIES = 10  # entities by PageRank mass named in the trace
CARRIERS = 2  # neighbouring entities named in a chunk's reason


def recipe_for(ctx: QueryContext) -> PPRRecipe:
    """The papers' recipe when the question's strategies are the papers', else RAGScope's."""
    return PAPER if ctx.strategies.paper else RAGSCOPE


def _ranked(matrix: GraphMatrix, scores: np.ndarray, entities: bool, limit: int) -> list[tuple[float, str]]:
    """The ``limit`` entity (or chunk) nodes with the most mass, as (mass, key without the chunk prefix),
    ties by key; nodes without mass are left out. Exact: every node tied at the cut is sorted too."""
    split = len(matrix.passages)  # entity nodes come first, then the chunk nodes
    start, stop = (0, split) if entities else (split, len(matrix.keys))
    part = scores[start:stop]
    rows = np.flatnonzero(part > 0)
    if limit <= 0 or not len(rows):
        return []
    if len(rows) > limit:
        cut = np.partition(part[rows], len(rows) - limit)[len(rows) - limit]
        rows = rows[part[rows] >= cut]
    cut_prefix = 0 if entities else len(CHUNK_PREFIX)
    found = [(float(part[r]), matrix.keys[start + r][cut_prefix:]) for r in rows.tolist()]
    return sorted(found, key=lambda t: (-t[0], t[1]))[:limit]


def _carriers(matrix: GraphMatrix, scores: np.ndarray, node: int, name: Callable[[str], str]) -> list[str]:
    """The entities next to chunk ``node`` with the most PageRank mass, named, best first."""
    column = matrix.transition.getcol(node)
    near = sorted(((float(scores[i]), matrix.keys[i]) for i in column.indices.tolist()
                   if not matrix.keys[i].startswith(CHUNK_PREFIX)), key=lambda t: (-t[0], t[1]))
    return [f"{name(k)} {s:.4f}" for s, k in near[:CARRIERS]]


def _reason(rank: int, mass: float, seed: PPRSeed | None, carriers: Sequence[str]) -> str:
    parts = [f"personalised PageRank {mass:.4f} (rank {rank})"]
    if seed is not None:
        parts.append(f"restart weight {seed.weight:.4f} from its {seed.why}")
    if carriers:
        parts.append("mass from " + ", ".join(carriers))
    return "; ".join(parts)


class PPRRetriever:
    name = "ppr"
    params = ("naive_top_k", "max_total_tokens")

    def retrieve(self, ctx: QueryContext) -> RetrievalResult:
        result = new_result(ctx, self.name, self.params)
        clock = Stopwatch(result)
        recipe = recipe_for(ctx)
        low, high = ctx.keywords()
        seeds = seeds_for(ctx, result, clock, low or high) if (low or high) else []
        with clock.stage("embed_query"):
            vector = ctx.embed(ctx.question)
        with clock.stage("vector_search"):
            dense = ctx.search_chunks(vector, max(recipe.dense_seeds, ctx.settings.naive_top_k))
            passages = ctx.search_chunks(vector, ctx.ws.views.vectors.size("chunks")) if recipe.all_passages else dense
            choice = question_facts(ctx, vector, recipe, {s.key for s in seeds})
            facts = choice.facts
            scored = fact_scores(ctx, vector, recipe, facts)
            add_keyword_usage(result, choice.usage)
        with clock.stage("graph_walk"):
            matrix = graph_matrix(ctx.graph, ctx.ws.views.vectors, recipe.synonym_threshold, recipe.synonym_neighbours)
            restart = restart_seeds(ctx, recipe, seeds, scored, passages, matrix.passages)
            restart = [s for s in restart if s.key in matrix.index] or restart
            scores = personalized_pagerank(matrix, {s.key: s.weight for s in restart}, alpha=recipe.damping)
            ranked = _ranked(matrix, scores, False, ctx.settings.naive_top_k)
            graph = ctx.graph

            def name(key: str) -> str:
                return key if key.startswith(CHUNK_PREFIX) else graph.name(key)
            top = _ranked(matrix, scores, True, TOP_ENTITIES)
            result.log("graph_walk", "ppr_seeds", paper=ctx.strategies.paper, facts=len(facts), fact_filter=choice.note,
                       seeds=[{"key": s.key, "name": name(s.key), "weight": s.weight, "kind": s.kind,
                               "why": s.why} for s in restart])
            result.log("graph_walk", "ppr", seeds=len(seeds), facts=len(facts), dense=len(dense),
                       nodes=len(matrix.keys), synonyms=matrix.synonyms, damping=recipe.damping,
                       top_entities=[[name(k), round(m, 6)] for m, k in top[:TOP_ENTITIES]])
        fallback = not ranked
        if fallback:  # no graph or nothing reachable: the dense ranking
            ranked = [(float(h.score), h.id) for h in dense]
        with clock.stage("context"):
            k = ctx.settings.naive_top_k
            by_key = {s.key: s for s in restart}
            records = []
            for rank, (mass, cid) in enumerate(ranked[:k], start=1):
                node = matrix.index.get(CHUNK_PREFIX + cid)
                carriers = [] if fallback or node is None else _carriers(matrix, scores, node, name)
                reason = (f"dense cosine {mass:.3f} (nothing reachable in the graph: personalised PageRank "
                          f"fell back to the dense ranking)") if fallback else _reason(
                    rank, mass, by_key.get(CHUNK_PREFIX + cid), carriers)
                records.append(ChunkHit.make(cid, mass, reason))
            records = fill_chunk_texts(ctx.ws, records)
            set_funnel(result, [r.chunk_id for r in records])
            count = context_counter(ctx.ws).count
            records, _ = prefix_within(records, lambda c: count(c.text), ctx.settings.max_total_tokens)
            result.chunks = records
            finish(result, sources_text(records), [c.chunk_id for c in records], count)
        return result
