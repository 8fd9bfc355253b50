"""PathRAG's node retrieval and path ranking, RAGScope's way (``core.retrieval.strategies.QuestionFirstPaths``).

PathRAG retrieves N = 40 nodes with the low-level keywords and ranks the paths between them by
reliability alone. Offline that produced paths that ignore the question: the 40 nodes were whatever
the joined keyword string resembled, and reliability favours one-edge paths between any two of them
("grey seals → Kestrel Island" for a question about a lighthouse and a flood). RAGScope keeps the
flow-based pruning and the reliability score exactly, and changes what the paper leaves open:

* seeds: the question's own entities (``core.retrieval.entity_linking``: each name linked by name,
  alias or its own vector search), plus the endpoints of the ``RELATION_SEEDS`` best relations of the
  anchored relation search (``core.retrieval.anchoring``: the high-level keywords, relations touching
  a question entity or a neighbour of one first) and of the ``RELATION_SEEDS`` best that touch a
  question entity itself, so that a bridge question has somewhere to go;
* ranking: paths on which more question entities lie come first (a path connecting two question
  entities, then a path from a question entity to a relation seed), reliability decides within
  each group; every kept path says why it was kept (``why_kept``).

* connection: two question entities that no kept path connects are searched again without early
  stopping (``connect_question_pairs``), so a multi-hop path between them appears when one exists.

With no name in the question the seeds are the paper's (joined keywords, top-N).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from core.retrieval.anchoring import question_anchored
from core.retrieval.lightrag_search import seeds_for
from core.retrieval.path_flow import ScoredPath, flow_paths
from core.retrieval.query import QueryContext, Stopwatch
from core.storage.ports import GraphView
from core.trace import TraceEvent
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
    if terms and ctx.state.seed_names:
        joined = ", ".join(terms)
        with clock.stage("vector_search"):
            ranked = question_anchored(ctx, joined, seeds)
        direct = [r for r in ranked if r.anchor is not None and r.anchor.kind == "question"][:RELATION_SEEDS]
        chosen = {r.pair: r for r in ranked[:RELATION_SEEDS] + direct}
        for relation in chosen.values():
            a, b = relation.pair
            label = f"{kg.name(a)} — {kg.name(b)}"
            for node in relation.pair:
                if node not in why and len(nodes) < ctx.settings.path_top_nodes:
                    why[node] = f"endpoint of relation {label} ({relation.reason(repr(joined))})"
                    nodes.append((node, relation.score))
    nested = {node for node, _ in nodes if node not in question and named_in(ctx.question, kg.attributes(node).get("name"))}
    if nested:  # "Carrow Sound" inside "the Carrow Sound fishing dispute": the question names it too
        question |= nested
        for node in nested:
            why[node] = f"question entity: named inside the question; {why.get(node, 'a seed')}"
    result.log("seeds", "path_seeds", question=len(question), similar=len(seeds) - len(question),
               endpoints=len(nodes) - len(seeds), relations=RELATION_SEEDS)
    return nodes, why, question


def named_in(question: str, name: Any) -> bool:
    """True when an entity name of several words, or one capitalised word, occurs verbatim (whole
    words) in the question."""
    if not isinstance(name, str) or not name.strip() or not any(ch.isupper() for ch in name):
        return False
    if " " not in name.strip() and not name[:1].isupper():
        return False
    return re.search(rf"(?<![\w-]){re.escape(name.strip())}(?![\w-])", question) is not None


def question_priority(question: set[str]) -> Callable[[ScoredPath], tuple[int, int]]:
    """Sort key prefix: paths with more question entities on them first, then those that end on them."""
    def priority(path: ScoredPath) -> tuple[int, int]:
        return (-sum(1 for n in path.nodes if n in question),
                -sum(1 for n in (path.nodes[0], path.nodes[-1]) if n in question))
    return priority


def reliability_text(path: ScoredPath) -> str:
    """A path's reliability and how it is computed."""
    return f"reliability {path.score:.3f} (Σ resources / {path.edges} edge{'s' if path.edges > 1 else ''})"


def why_kept(path: ScoredPath, question: set[str], seed_why: dict[str, str], names: dict[str, str]) -> str:
    """One line saying why a path is in the result (RAGScope's ranking)."""
    reliability = reliability_text(path)
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


def connect_question_pairs(kg: Any, question: set[str], paths: list[ScoredPath], settings: Any,
                           seeds: Sequence[str] = ()) -> tuple[list[ScoredPath], list[TraceEvent]]:
    """Each question entity is searched again without early stopping (θ = 0: the flow reaches every
    node within ``path_max_hops``, resources and reliability computed as usual) towards the other
    question entities and seeds that no kept path connects it to, and its best path to each is added.
    The paper's θ prunes a path through a hub ("Port Sallow", degree 40) even between the question's
    own entities, and with one named entity a bridge question's second hop ("the cooperative founded by
    Margaret Thorne" → the tidal project it holds a stake in) is a seed the kept paths never reach from
    it. Returns the paths with the new ones ranked in, and a trace line per question entity."""
    connected = {frozenset((p.nodes[0], p.nodes[-1])) for p in paths}
    added: list[ScoredPath] = []
    notes: list[TraceEvent] = []
    for a in sorted(question):
        if a not in kg:
            continue
        targets = {b for b in list(question) + list(seeds)
                   if b != a and b in kg and frozenset((a, b)) not in connected}
        if not targets:
            continue
        found, _, capped = flow_paths(kg, a, targets, alpha=settings.path_alpha, theta=0.0,
                                      max_hops=settings.path_max_hops, max_expansions=settings.path_max_expansions)
        best: dict[str, ScoredPath] = {}
        for path in sorted(found, key=lambda p: (-p.score, p.edges, [str(n) for n in p.nodes])):
            best.setdefault(path.nodes[-1], path)
        for target, path in sorted(best.items()):
            connected.add(frozenset((a, target)))
            added.append(path)
        missing = len(targets) - len(best)
        notes.append(TraceEvent("paths", "question_pair_search", {"entity": a, "targets": len(targets), "added": len(best),
                                                                  "missing": missing, "hops": settings.path_max_hops,
                                                                  "capped": bool(capped)}))
    if not added:
        return paths, notes
    priority = question_priority(question)
    merged = sorted(paths + added, key=lambda path: (priority(path), -path.score, path.edges,
                                                      [str(n) for n in path.nodes]))
    return merged[: max(settings.path_top_paths, len(added))], notes


def paper_nodes(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, kg: GraphView) -> list[tuple[str, float]]:
    """PathRAG's start nodes: the low-level keywords joined (the question when there are none), top-N."""
    low, _ = ctx.keywords()
    query_text = ", ".join(low) if low else ctx.question
    result.log("seeds", "node_query", query=query_text, from_question=not low)
    with clock.stage("embed_query"):
        vector = ctx.embed(query_text)
    with clock.stage("vector_search"):
        return retrieve_nodes(ctx, result, kg, vector)


def retrieve_nodes(ctx: QueryContext, result: RetrievalResult, kg: GraphView, vector: Any) -> list[tuple[str, float]]:
    """Top-N entity keys with cosine >= the threshold that exist in the knowledge graph, best first."""
    s = ctx.settings
    hits = ctx.search("entities", vector, s.path_top_nodes)
    out: list[tuple[str, float]] = []
    seen: set[str] = set()
    below = 0
    for hit in hits:
        key = str(hit.metadata.get("key", ""))
        if hit.score < s.cosine_threshold:
            below += 1
        elif key in kg and key not in seen:
            seen.add(key)
            out.append((key, float(hit.score)))
    result.log("seeds", "nodes", top_n=s.path_top_nodes, total=len(kg), returned=len(hits), below=below,
               threshold=s.cosine_threshold, cosines=[c for _, c in out], names=[kg.name(k) for k, _ in out])
    return out
