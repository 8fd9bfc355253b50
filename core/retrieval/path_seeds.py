"""PathRAG's node retrieval and path ranking, RAGScope's way (``paper_strict`` off).

PathRAG retrieves N = 40 nodes with the low-level keywords and ranks the paths between them by
reliability alone. Offline that produced paths that ignore the question: the 40 nodes were whatever
the joined keyword string resembled, and reliability favours one-edge paths between any two of them
("grey seals → Kestrel Island" for a question about a lighthouse and a flood). RAGScope keeps the
flow-based pruning and the reliability score exactly, and changes what the paper leaves open:

* seeds: the question's own entities (``core.retrieval.entity_linking``: each name linked by name,
  alias or its own vector search), plus the endpoints of the ``RELATION_SEEDS`` best relations of the
  anchored relation search (``core.retrieval.anchoring``: the high-level keywords, relations touching
  a question entity or a neighbour of one first), so that a bridge question has somewhere to go;
* ranking: paths on which more question entities lie come first (a path connecting two question
  entities, then a path from a question entity to a relation seed), reliability decides within
  each group; every kept path says why it was kept (``why_kept``).

With no name in the question the seeds are the paper's (joined keywords, top-N).
"""
from __future__ import annotations

from typing import Any, Callable

from core.retrieval.anchoring import anchored_relations
from core.retrieval.base import QueryContext, Stopwatch
from core.retrieval.local_search import seeds_for
from core.retrieval.path_flow import ScoredPath
from core.types import RetrievalResult

RELATION_SEEDS = 5  # relations of the anchored search whose endpoints become path seeds


def ragscope_nodes(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, kg: Any
                   ) -> tuple[list[tuple[str, float]], dict[str, str], set[str]]:
    """(nodes with scores, why each node is a seed, the question entities among them)."""
    low, high = ctx.keywords()
    seeds = seeds_for(ctx, result, clock, low or high)
    why = {s.key: (f"question entity: {s.reason()}" if s.question else f"seed: {s.reason()}") for s in seeds}
    nodes = [(s.key, s.score) for s in seeds][: ctx.settings.path_top_nodes]
    question = {s.key for s in seeds if s.question and s.key in dict(nodes)}
    terms = list(high) or list(low)
    if terms and ctx.memo.get("seed_names"):
        joined = ", ".join(terms)
        with clock.stage("vector_search"):
            key = ("anchored", joined)
            if key not in ctx.memo:
                ctx.memo[key] = anchored_relations(ctx.ws, ctx.embed(joined), seeds, ctx.settings.lightrag_top_k,
                                                   ctx.settings.cosine_threshold)
        for relation in ctx.memo[key][:RELATION_SEEDS]:
            a, b = relation.pair
            label = f"{kg.nodes[a].get('name') or a} — {kg.nodes[b].get('name') or b}"
            for node in relation.pair:
                if node not in why and len(nodes) < ctx.settings.path_top_nodes:
                    why[node] = f"endpoint of relation {label} ({relation.reason(repr(joined))})"
                    nodes.append((node, relation.score))
    result.trace.append(f"path seeds: {len(question)} question entities, {len(seeds) - len(question)} similar "
                        f"entities, {len(nodes) - len(seeds)} endpoints of the best {RELATION_SEEDS} relations for "
                        f"the high-level keywords")
    return nodes, why, question


def question_priority(question: set[str]) -> Callable[[ScoredPath], tuple[int]]:
    """Sort key prefix: paths with more question entities on them first."""
    def priority(path: ScoredPath) -> tuple[int]:
        return (-sum(1 for n in path.nodes if n in question),)
    return priority


def why_kept(path: ScoredPath, question: set[str], seed_why: dict[str, str], names: dict[str, str],
             strict: bool) -> str:
    """One line saying why a path is in the result."""
    reliability = f"reliability {path.score:.3f} (Σ resources / {path.edges} edge{'s' if path.edges > 1 else ''})"
    if strict:
        return f"kept by {reliability} (paper ranking)"
    on = [names.get(n, n) for n in path.nodes if n in question]
    ends = [names.get(n, n) for n in (path.nodes[0], path.nodes[-1])]
    if len(set(on)) >= 2:
        via = " via " + ", ".join(names.get(n, n) for n in path.nodes[1:-1]) if path.edges > 1 else ""
        return f"connects question entities {' and '.join(dict.fromkeys(on))}{via}; {reliability}"
    if on:
        other = next((n for n in (path.nodes[0], path.nodes[-1]) if n not in question), path.nodes[-1])
        return (f"links question entity {on[0]} to {names.get(other, other)} "
                f"({seed_why.get(other, 'a seed')}); {reliability}")
    return f"between seeds {ends[0]} and {ends[1]}, no question entity on it; {reliability}"
