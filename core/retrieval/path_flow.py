"""PathRAG flow-based pruning: resource propagation, bounded path search and path reliability.

This module is a pure algorithm over an undirected graph view (``core.storage.ports.GraphView``;
a networkx graph is wrapped) whose nodes are entity keys. Only the topology is used; edge attributes are ignored.

Semantics (following the PathRAG paper)
---------------------------------------
Resource propagation from a start node ``s`` (:func:`propagate_resources`):

* ``S(s) = 1``. Propagation is breadth-first, one layer at a time, for at most ``max_hops``
  layers.
* A node ``u`` is *expanded* (passes resource on to its neighbours) only if
  ``S(u) / deg(u) >= theta`` (the paper's early-stopping rule). The start node is always
  expanded, unless it has degree 0 or ``max_hops`` is 0. ``deg`` is the degree in the whole
  graph.
* A node ``v`` first reached at layer ``d + 1`` receives
  ``S(v) = sum(alpha * S(u) / deg(u))`` over its neighbours ``u`` of layer ``d`` that were
  expanded. Each node's resource is set once, when its layer is processed, and never updated
  by later layers (nor by nodes of its own layer).
* A node of layers ``1 .. max_hops - 1`` that fails the threshold is *pruned*: it may END a
  path but is never an intermediate node. Nodes of the last layer are neither expanded nor
  counted as pruned (the hop limit, not ``theta``, stops them).

Paths (:func:`flow_paths`): simple paths ``s -> ... -> t`` with ``t`` a target other than
``s``, at most ``max_hops`` edges, every node holding a resource and every intermediate node
expanded. Paths need not follow BFS layers monotonically (``s-B-C`` is valid when ``B`` and
``C`` are both neighbours of ``s``). Enumeration is an iterative depth-first search over
neighbours sorted by ``str`` (deterministic whatever the graph's insertion order). Every time
the search steps onto a node that is a target or can be continued from, one *expansion* is
counted; when ``max_expansions`` would be exceeded the search stops and reports
``capped=True``. The enumeration is therefore always bounded.

Reliability: ``S(P) = sum(S(v) for v in P) / (number of edges of P)``, the paper's average
resource per edge. Resources are relative to the path's own start node, so a path and its
reverse generally score differently (and one direction may be pruned while the other is not).

:func:`top_paths` runs the search from every retrieved node towards all other retrieved nodes
(all ordered pairs), keeps one direction of each undirected path (the higher-scoring one),
and returns the best ``top_k`` sorted by score descending, ties broken by fewer edges, then
by the node sequence (compared as strings).

Differences from the reference implementation (not followed here): it applies a threshold
of 0.3 to the flow on edges rather than the paper's ``theta = 0.05`` on ``S(v)/deg(v)``, and
it enumerates all paths of at most 3 hops with an exhaustive depth-first search before
scoring them. This module follows the paper and caps the enumeration.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Union

import networkx as nx

from core.storage.graph_view import NetworkxGraphView, as_graph_view

GraphLike = Union[NetworkxGraphView, nx.Graph]  # a graph view; a bare networkx graph is wrapped

__all__ = ["ScoredPath", "FlowStats", "propagate_resources", "flow_paths", "top_paths"]


@dataclass
class ScoredPath:
    """One relational path with the resources of its nodes and its reliability."""

    nodes: list[str]
    resources: dict[str, float]
    score: float

    @property
    def edges(self) -> int:
        """Number of edges (hops) of the path."""
        return len(self.nodes) - 1


@dataclass
class FlowStats:
    """Counters of one :func:`top_paths` run (summed over all start nodes)."""

    starts: int = 0
    nodes_reached: int = 0
    nodes_pruned: int = 0
    expansions: int = 0
    capped_starts: list[str] = field(default_factory=list)
    pairs_with_paths: int = 0


@dataclass
class _Flow:
    """Internal result of one propagation."""

    resources: dict[str, float]
    expanded: set[str]
    pruned: set[str]


def _check(alpha: float, theta: float, max_hops: int) -> None:
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0, got {alpha!r}")
    if theta < 0:
        raise ValueError(f"theta must be >= 0, got {theta!r}")
    if max_hops < 0:
        raise ValueError(f"max_hops must be >= 0, got {max_hops!r}")


def _propagate(graph: GraphLike, start: str, alpha: float, theta: float,
               max_hops: int) -> _Flow:
    """Layer-by-layer resource propagation; see the module docstring."""
    if start not in graph:
        return _Flow({}, set(), set())
    degree = graph.degree
    resources: dict[str, float] = {start: 1.0}
    expanded: set[str] = set()
    pruned: set[str] = set()
    layer: list[str] = [start]
    for _ in range(max_hops):
        passing: list[str] = []
        for u in layer:
            deg_u = degree(u)
            if deg_u == 0:
                continue
            if u == start or resources[u] / deg_u >= theta:
                passing.append(u)
            else:
                pruned.add(u)
        if not passing:
            break
        expanded.update(passing)
        # Fixed summation order, so resources do not depend on insertion order.
        passing.sort(key=str)
        incoming: dict[str, float] = {}
        for u in passing:
            share = alpha * resources[u] / degree(u)
            for v in graph.neighbours(u):
                if v not in resources:
                    incoming[v] = incoming.get(v, 0.0) + share
        if not incoming:
            break
        resources.update(incoming)
        layer = list(incoming)
    return _Flow(resources, expanded, pruned)


def propagate_resources(graph: GraphLike, start: str, alpha: float = 0.8, theta: float = 0.05,
                        max_hops: int = 3) -> tuple[dict[str, float], set[str]]:
    """Resources reached from ``start`` and the set of nodes that were expanded.

    A start node missing from the graph yields ``({}, set())``; an isolated start yields
    ``({start: 1.0}, set())``.
    """
    _check(alpha, theta, max_hops)
    graph = as_graph_view(graph)
    flow = _propagate(graph, start, alpha, theta, max_hops)
    return flow.resources, flow.expanded


def _make_path(nodes: list[str], resources: dict[str, float]) -> ScoredPath:
    res = {n: resources[n] for n in nodes}
    score = math.fsum(res.values()) / (len(nodes) - 1)
    return ScoredPath(nodes=list(nodes), resources=res, score=score)


def _search(graph: GraphLike, start: str, targets: set[str], flow: _Flow,
            max_hops: int, max_expansions: int) -> tuple[list[ScoredPath], int, bool]:
    """Bounded iterative DFS from ``start`` to the targets over the propagated subgraph."""
    resources, expanded = flow.resources, flow.expanded
    targets = {t for t in targets if t != start and t in resources}
    if not targets or start not in expanded or max_hops < 1:
        return [], 0, False
    # Only neighbours that can end a path (targets) or continue it (expanded) are useful.
    useful = targets | expanded
    children: dict[str, list[str]] = {}

    def kids(u: str) -> list[str]:
        got = children.get(u)
        if got is None:
            got = sorted((v for v in graph.neighbours(u) if v in useful and v in resources), key=str)
            children[u] = got
        return got

    last_hop: dict[str, list[str]] = {}

    def target_kids(u: str) -> list[str]:
        """``kids(u)`` that are targets, in the same order: all a path at ``max_hops`` edges can take
        (the others would each be looked at and skipped)."""
        got = last_hop.get(u)
        if got is None:
            got = last_hop[u] = [v for v in kids(u) if v in targets]
        return got

    paths: list[ScoredPath] = []
    expansions = 0
    capped = False
    path: list[str] = [start]
    on_path: set[str] = {start}
    stack = [iter(kids(start) if max_hops > 1 else target_kids(start))]
    while stack:
        nxt = next(stack[-1], None)
        if nxt is None:
            stack.pop()
            on_path.discard(path.pop())
            continue
        if nxt in on_path:
            continue
        n_edges = len(path)  # edges of the path once nxt is appended
        is_target = nxt in targets
        can_continue = n_edges < max_hops and nxt in expanded
        if not (is_target or can_continue):
            continue
        if expansions >= max_expansions:
            capped = True
            break
        expansions += 1
        if is_target:
            paths.append(_make_path(path + [nxt], resources))
        if can_continue:
            path.append(nxt)
            on_path.add(nxt)
            stack.append(iter(kids(nxt) if len(path) < max_hops else target_kids(nxt)))
    return paths, expansions, capped


def flow_paths(graph: GraphLike, start: str, targets: set[str], alpha: float = 0.8,
               theta: float = 0.05, max_hops: int = 3,
               max_expansions: int = 20000) -> tuple[list[ScoredPath], int, bool]:
    """Paths from ``start`` to any target (≠ start); returns (paths, expansions used, capped?).

    Paths are returned in depth-first order (neighbours sorted by ``str``).
    """
    _check(alpha, theta, max_hops)
    if max_expansions < 0:
        raise ValueError(f"max_expansions must be >= 0, got {max_expansions!r}")
    graph = as_graph_view(graph)
    flow = _propagate(graph, start, alpha, theta, max_hops)
    return _search(graph, start, set(targets), flow, max_hops, max_expansions)


def _sort_key(p: ScoredPath) -> tuple[float, int, list[str]]:
    return (-p.score, p.edges, [str(n) for n in p.nodes])


def _unique_present(graph: GraphLike, nodes: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for n in nodes:
        if n in graph and n not in seen:
            seen.add(n)
            out.append(n)
    return out


def top_paths(graph: GraphLike, nodes: list[str], alpha: float = 0.8, theta: float = 0.05,
              max_hops: int = 3, top_k: int = 15, max_expansions: int = 20000,
              priority: Callable[[ScoredPath], tuple] | None = None) -> tuple[list[ScoredPath], FlowStats]:
    """All ordered pairs of retrieved nodes; best ``top_k`` paths overall.

    Nodes missing from the graph (and duplicates) are ignored. ``max_expansions`` is a budget
    per start node; starts that exhausted it are listed in ``FlowStats.capped_starts``. A path
    and its reverse are the same path: only the higher-scoring direction is kept (equal scores:
    the lexicographically smaller node sequence). The result is sorted by score descending,
    then fewer edges, then node sequence; ``priority`` (a key prefix, e.g. question entities on the
    path first) is applied before the score when given.
    """
    _check(alpha, theta, max_hops)
    if top_k < 0:
        raise ValueError(f"top_k must be >= 0, got {top_k!r}")
    if max_expansions < 0:
        raise ValueError(f"max_expansions must be >= 0, got {max_expansions!r}")
    graph = as_graph_view(graph)
    present = _unique_present(graph, nodes)
    stats = FlowStats(starts=len(present))
    wanted = set(present)
    best: dict[tuple[str, ...], ScoredPath] = {}
    for start in present:
        flow = _propagate(graph, start, alpha, theta, max_hops)
        paths, used, capped = _search(graph, start, wanted, flow, max_hops, max_expansions)
        stats.nodes_reached += len(flow.resources)
        stats.nodes_pruned += len(flow.pruned)
        stats.expansions += used
        if capped:
            stats.capped_starts.append(start)
        stats.pairs_with_paths += len({p.nodes[-1] for p in paths})
        for p in paths:
            fwd = tuple(p.nodes)
            rev = fwd[::-1]
            key = min(fwd, rev, key=lambda seq: [str(n) for n in seq])
            kept = best.get(key)
            if kept is None or _sort_key(p) < _sort_key(kept):
                best[key] = p
    if priority is None:
        ranked = sorted(best.values(), key=_sort_key)
    else:
        ranked = sorted(best.values(), key=lambda p: (priority(p), _sort_key(p)))
    return ranked[:top_k], stats
