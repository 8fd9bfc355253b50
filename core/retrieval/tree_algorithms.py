"""Pure graph/tree algorithms behind the E2GraphRAG ``tree`` retrieval mode.

No storage and no embeddings here: every function works on plain mappings and a
``networkx.Graph`` so it can be tested on hand-built inputs.

Inputs shared by the functions:

* ``graph`` -- the undirected E2GraphRAG mention graph; nodes are terms (entity keys or
  noun lemmas).  Only connectivity is used (edge weights are ignored, as in the paper).
* ``entity_chunks`` -- ``term -> {chunk_id: occurrences of the term in that chunk}``.
  A chunk whose count is ``<= 0`` is treated as not containing the term.
* ``chunk_order`` -- ``chunk_id -> global position``; the last tie-breaker for determinism.

Conventions (E2GraphRAG):

* ``h`` counts the NODES on a shortest path, so a pair survives iff its distance in edges is
  ``<= h - 1``.  ``h = 4`` (the default) means at most 3 hops.  A pair of two distinct terms
  needs a path of at least 2 nodes, so ``h < 2`` can never keep a pair.
* Query entities are de-duplicated keeping their first occurrence; pairs are unordered and
  listed in query order ``(entities[i], entities[j])`` with ``i < j``.

The h-loop (:func:`h_loop`):

1. Pairs within the initial ``h`` are computed once with a bounded bidirectional BFS; every
   tighter ``h`` only filters those distances (a pair within ``h - 1`` is within ``h``).
2. No pair survives, or the surviving pairs share no chunk -> branch ``"no-pairs"``: the local
   branch has nothing and the caller runs the global branch with occurrence ranking (the
   reference implementation also goes global whenever the first local pass returns 0 chunks).
3. ``<= k`` candidate chunks -> branch ``"local"``.
4. ``> k`` -> ``h <- h - 1`` and repeat.  If the tighter ``h`` yields 0 chunks, the PREVIOUS
   candidates are ranked and cut to ``k`` -> ``"local-fallback"``.  ``h`` never goes below 2:
   ``h = 1`` would keep no pair and therefore always yield 0 chunks, so when ``h = 2`` still
   has more than ``k`` chunks its own candidates are ranked and cut (the same outcome the
   reference reaches by trying ``h = 1``).

Ranking key of local chunks (both branches): number of distinct query entities occurring in
the chunk (desc), total occurrences of the query entities in the chunk (desc), ``chunk_order``
(asc; unknown chunks last), chunk id (asc).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Hashable, Iterable, Mapping, Optional, Sequence

import networkx as nx

__all__ = [
    "LocalOutcome",
    "TreeLoopStep",
    "bounded_distance",
    "h_loop",
    "local_candidates",
    "occurrence_rank",
    "occurrence_weights",
    "pair_distances",
    "rank_chunks",
]

EntityChunks = Mapping[str, Mapping[str, int]]
Pair = tuple[str, str]


@dataclass
class TreeLoopStep:
    """One iteration of the h-loop: the ``h`` tried, pairs kept, candidate chunks, and why."""

    h: int
    pairs_kept: int
    chunks: int
    note: str


@dataclass
class LocalOutcome:
    """Result of the local branch of the tree mode."""

    branch: str  # "local" | "local-fallback" | "no-pairs"
    chunk_ids: list[str] = field(default_factory=list)  # ranked, at most k
    chunk_pairs: dict[str, list[Pair]] = field(default_factory=dict)  # chunk -> selecting pairs
    steps: list[TreeLoopStep] = field(default_factory=list)  # one per h tried
    final_h: int = 0  # the h whose candidates were returned (the initial h for "no-pairs")


def _unique(items: Iterable[str]) -> list[str]:
    """De-duplicate keeping the first occurrence."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def bounded_distance(graph: nx.Graph, source: Hashable, target: Hashable, cutoff: int) -> Optional[int]:
    """Shortest-path distance in edges between two nodes, or ``None`` if it exceeds ``cutoff``.

    Bidirectional BFS that always grows the smaller frontier by one level and stops as soon as
    the two balls meet or their radii add up to ``cutoff``; it never explores beyond the cutoff.
    While the balls are disjoint the distance exceeds the sum of their radii, so the first
    meeting found after growing one ball by a level gives the exact distance.
    """
    if source not in graph or target not in graph:
        return None
    if source == target:
        return 0
    if cutoff < 1:
        return None
    adj = graph.adj
    seen_s: set[Hashable] = {source}
    seen_t: set[Hashable] = {target}
    front_s: list[Hashable] = [source]
    front_t: list[Hashable] = [target]
    radius = 0  # radius of ball(source) + radius of ball(target)
    while radius < cutoff:
        if len(front_s) <= len(front_t):
            grow, seen, other, front = "s", seen_s, seen_t, front_s
        else:
            grow, seen, other, front = "t", seen_t, seen_s, front_t
        radius += 1
        nxt: list[Hashable] = []
        for u in front:
            for v in adj[u]:
                if v in seen:
                    continue
                if v in other:
                    return radius
                seen.add(v)
                nxt.append(v)
        if not nxt:
            return None  # this side's component is exhausted: the nodes are disconnected
        if grow == "s":
            front_s = nxt
        else:
            front_t = nxt
    return None


def pair_distances(entities: Sequence[str], graph: nx.Graph, h: int) -> list[tuple[str, str, int]]:
    """All unordered pairs of query entities present in ``graph`` whose shortest path has at
    most ``h`` nodes (distance ``<= h - 1`` edges), as ``(a, b, distance)`` in query order.

    Each pair is checked with :func:`bounded_distance` (cutoff ``h - 1``), never all-pairs.
    """
    if h < 2:
        return []
    present = [e for e in _unique(entities) if e in graph]
    out: list[tuple[str, str, int]] = []
    for i, a in enumerate(present):
        for b in present[i + 1 :]:
            d = bounded_distance(graph, a, b, h - 1)
            if d is not None:
                out.append((a, b, d))
    return out


def _chunk_set(entity_chunks: EntityChunks, term: str) -> Mapping[str, int]:
    return entity_chunks.get(term) or {}


def local_candidates(
    pairs: Iterable[Sequence[Any]], entity_chunks: EntityChunks
) -> dict[str, set[Pair]]:
    """For each pair ``(a, b, ...)`` intersect the chunk sets of ``a`` and ``b``; returns
    ``chunk_id -> {pairs that selected it}``.  Extra tuple items (the distance) are ignored."""
    out: dict[str, set[Pair]] = {}
    for p in pairs:
        a, b = p[0], p[1]  # no coercion: keys must match entity_chunks as given
        ca, cb = _chunk_set(entity_chunks, a), _chunk_set(entity_chunks, b)
        small, large = (ca, cb) if len(ca) <= len(cb) else (cb, ca)
        for cid, n in small.items():
            if n > 0 and large.get(cid, 0) > 0:
                out.setdefault(cid, set()).add((a, b))
    return out


def rank_chunks(
    chunk_ids: Iterable[str],
    entities: Sequence[str],
    entity_chunks: EntityChunks,
    chunk_order: Mapping[str, int],
    tie_break: Optional[Mapping[str, float]] = None,
) -> list[str]:
    """Order chunks by (distinct query entities in the chunk desc, their total occurrences
    desc, ``tie_break`` desc when given, ``chunk_order`` asc with unknown chunks last, chunk id asc)."""
    ids = list(dict.fromkeys(chunk_ids))
    distinct = dict.fromkeys(ids, 0)
    occ = dict.fromkeys(ids, 0)
    for e in _unique(entities):
        counts = _chunk_set(entity_chunks, e)
        if not counts:
            continue
        for cid in ids:
            n = counts.get(cid, 0)
            if n > 0:
                distinct[cid] += 1
                occ[cid] += n
    last = sys.maxsize
    tie = tie_break or {}
    return sorted(ids, key=lambda c: (-distinct[c], -occ[c], -tie.get(c, 0.0), chunk_order.get(c, last), c))


def _pairs_by_chunk(
    cands: Mapping[str, set[Pair]], chosen: Iterable[str], pair_rank: Mapping[Pair, int]
) -> dict[str, list[Pair]]:
    """Selecting pairs of each chosen chunk, in query-pair order."""
    return {cid: sorted(cands[cid], key=lambda p: pair_rank[p]) for cid in chosen}


def h_loop(
    entities: Sequence[str],
    graph: nx.Graph,
    entity_chunks: EntityChunks,
    chunk_order: Mapping[str, int],
    k: int = 25,
    h: int = 4,
    tie_break: Optional[Mapping[str, float]] = None,
) -> LocalOutcome:
    """Run the E2GraphRAG local branch with its h-tightening loop (see the module docstring);
    ``tie_break`` (chunk → relevance) orders chunks that E2GraphRAG's key leaves tied."""
    if k < 1:
        raise ValueError("k must be at least 1")
    ents = _unique(entities)
    all_pairs = pair_distances(ents, graph, h)
    pair_rank = {(a, b): i for i, (a, b, _) in enumerate(all_pairs)}
    if not all_pairs:
        if len(ents) < 2:
            note = f"{len(ents)} query entit{'y' if len(ents) == 1 else 'ies'}: no pair to form"
        elif h < 2:
            note = f"h={h} < 2: no pair can lie on a path of at most {h} node(s)"
        else:
            found = sum(1 for e in ents if e in graph)
            note = f"no pair of the {found} entities found in the graph is within {h} nodes"
        return LocalOutcome("no-pairs", [], {}, [TreeLoopStep(h, 0, 0, note)], h)

    steps: list[TreeLoopStep] = []
    cur_h = h
    prev: Optional[tuple[int, dict[str, set[Pair]]]] = None
    while True:
        kept = [p for p in all_pairs if p[2] <= cur_h - 1]
        cands = local_candidates(kept, entity_chunks)
        n = len(cands)
        if prev is None and n == 0:
            steps.append(TreeLoopStep(cur_h, len(kept), 0, "surviving pairs share no chunk: go global"))
            return LocalOutcome("no-pairs", [], {}, steps, h)
        if n == 0:
            assert prev is not None
            prev_h, prev_cands = prev
            steps.append(TreeLoopStep(cur_h, len(kept), 0, f"0 chunks: fall back to h={prev_h}, rank, keep top {k}"))
            chosen = rank_chunks(prev_cands, ents, entity_chunks, chunk_order, tie_break)[:k]
            return LocalOutcome("local-fallback", chosen, _pairs_by_chunk(prev_cands, chosen, pair_rank), steps, prev_h)
        if n <= k:
            steps.append(TreeLoopStep(cur_h, len(kept), n, f"{n} <= k={k} chunks: done"))
            chosen = rank_chunks(cands, ents, entity_chunks, chunk_order, tie_break)
            return LocalOutcome("local", chosen, _pairs_by_chunk(cands, chosen, pair_rank), steps, cur_h)
        if cur_h <= 2:
            steps.append(TreeLoopStep(cur_h, len(kept), n, f"{n} > k={k} chunks at the floor h=2: rank, keep top {k}"))
            chosen = rank_chunks(cands, ents, entity_chunks, chunk_order, tie_break)[:k]
            return LocalOutcome("local-fallback", chosen, _pairs_by_chunk(cands, chosen, pair_rank), steps, cur_h)
        steps.append(TreeLoopStep(cur_h, len(kept), n, f"{n} > k={k} chunks: tighten to h={cur_h - 1}"))
        prev = (cur_h, cands)
        cur_h -= 1


def occurrence_weights(
    candidates: Sequence[tuple[str, Sequence[str]]],
    entities: Sequence[str],
    entity_chunks: EntityChunks,
) -> dict[str, int]:
    """Candidate id -> sum over its leaf chunks of the occurrences of the query entities.

    A chunk is given as its own single leaf; a summary lists all its descendant leaves (each
    leaf counted once).  Query entities are de-duplicated.
    """
    per_leaf: dict[str, int] = {}
    for e in _unique(entities):
        for cid, n in _chunk_set(entity_chunks, e).items():
            if n > 0:
                per_leaf[cid] = per_leaf.get(cid, 0) + n
    out: dict[str, int] = {}
    for cand_id, leaves in candidates:
        if cand_id in out:
            continue
        out[cand_id] = sum(per_leaf.get(leaf, 0) for leaf in dict.fromkeys(leaves))
    return out


def occurrence_rank(
    candidates: Sequence[tuple[str, Sequence[str], float]],
    entities: Sequence[str],
    entity_chunks: EntityChunks,
    k: int,
) -> list[tuple[str, int, float]]:
    """Global branch with occurrence ranking over dense top-2k candidates
    ``(id, leaf_chunk_ids, similarity)``: the top ``k`` candidates with NON-ZERO weight as
    ``(id, weight, similarity)``, by weight desc, similarity desc, id asc.  A repeated id keeps
    its first entry.  Returns ``[]`` when every weight is zero (the caller decides what then)."""
    if k < 1:
        return []
    first: dict[str, tuple[Sequence[str], float]] = {}
    for cand_id, leaves, sim in candidates:
        first.setdefault(cand_id, (leaves, float(sim)))
    weights = occurrence_weights([(c, v[0]) for c, v in first.items()], entities, entity_chunks)
    scored = [(c, weights[c], first[c][1]) for c in first if weights[c] > 0]
    scored.sort(key=lambda t: (-t[1], -t[2], t[0]))
    return scored[:k]
