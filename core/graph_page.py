"""What the Knowledge graph page shows, read from the record store a few rows at a time
(``core.storage.ports.GraphOverview``) instead of building the whole networkx graph.

* ``summary``: the node count and the type filter's choices;
* ``select``: the view to draw — the same nodes, edges and attributes as selecting on the whole graph
  (type filter, then the ``depth``-hop neighbourhood of the nodes whose name or key contains the search,
  then the minimum degree, then the best ``max_nodes`` by (search match, hops from a match, degree, key)),
  returned as a small networkx graph of the drawn nodes and the edges among them;
* ``node_detail`` / ``edge_detail``: the side panel's node (attributes, degree, neighbours with their
  relations, and for a term the chunks mentioning it) and a clicked edge (with its endpoints' names).

Per workspace generation (``WorkspaceViews.derived``) one thing is kept per graph and type filter: the
node keys and their degrees (no names, descriptions or relations), so a rerun of the page costs a few
primary-key reads. Nothing here renders: document text goes to the page as data, and the page escapes it.
"""
from __future__ import annotations

import heapq
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

import networkx as nx

if TYPE_CHECKING:
    from core.storage.ports import GraphOverview
    from core.workspace import Workspace


@dataclass(frozen=True)
class GraphSummary:
    """Nodes in the graph and the categories of the type filter (sorted, "" left out)."""

    nodes: int
    kinds: tuple[str, ...]
    kind_attr: str


@dataclass(frozen=True)
class GraphSelection:
    """A view to draw: ``graph`` holds the drawn nodes (attributes as stored) and the edges among them;
    ``nodes`` the drawn keys best first; ``matches`` the search matches; ``eligible`` the nodes that
    passed the filters before the node budget."""

    graph: nx.Graph
    nodes: list[str]
    matches: list[str]
    eligible: int


@dataclass(frozen=True)
class NodeDetail:
    """One node for the side panel: its attributes, degree in the whole graph, its neighbours
    ``(key, display name, edge attributes)`` by key, and (mention graph) chunk id -> mentions."""

    key: str
    attributes: dict[str, Any]
    degree: int
    neighbours: list[tuple[str, str, dict[str, Any]]]
    chunk_counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class EdgeDetail:
    """A clicked edge: its endpoints, their display names and the edge's attributes."""

    a: str
    b: str
    name_a: str
    name_b: str
    attributes: dict[str, Any]


@dataclass
class _Keys:
    """The node keys (sorted) and degrees of one graph under one type filter."""

    keys: list[str]
    degree: dict[str, int]
    orphans: list[str]  # edge endpoints without a row of their own (never expected; kept for exactness)
    kinds: tuple[str, ...] = ()
    key_set: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.key_set = set(self.keys)


def _home(ws: Any) -> dict[Any, Any]:
    return {"lock": threading.Lock()}


def _reader(ws: "Workspace", mention: bool) -> "GraphOverview":
    return ws.records.graph_overview(mention)


def _keys(ws: "Workspace", mention: bool, types: tuple[str, ...]) -> _Keys:
    cache = ws.views.derived(_home)
    key = (mention, tuple(sorted(set(types))))
    found = cache.get(key)
    if found is None:
        found = _load_keys(_reader(ws, mention), key[1])
        with cache["lock"]:
            cache[key] = found
    return found


def _load_keys(reader: "GraphOverview", types: tuple[str, ...]) -> _Keys:
    kinds = reader.kinds()
    if types:
        wanted = {k for k, kind in kinds.items() if str(kind or "") in set(types)}
        degree: Counter[str] = Counter()
        for a, b in reader.edge_keys():
            if a in wanted and b in wanted:
                degree[a] += 1
                degree[b] += 1
        return _Keys(sorted(wanted), dict(degree), [])
    rows = list(kinds)  # every node with a row (kinds has one entry per node row)
    degrees = reader.degrees()
    known = set(rows)
    orphans = sorted(k for k in degrees if k not in known)
    return _Keys(sorted(rows + orphans), degrees, orphans,
                 tuple(sorted({str(kind or "") for kind in kinds.values()} - {""})))


def summary(ws: "Workspace", mention: bool) -> GraphSummary:
    """The node count and the type filter's choices of the knowledge graph (or the mention graph)."""
    keys = _keys(ws, mention, ())
    return GraphSummary(len(keys.keys), keys.kinds, "label" if mention else "type")


def _matches(reader: "GraphOverview", keys: _Keys, query: str) -> list[str]:
    present = keys.key_set
    found = {key for key, name in reader.name_candidates(query)
             if key in present and (query in name.lower() or query in key.lower())}
    found.update(k for k in keys.orphans if k in present and query in k.lower())
    return sorted(found)


def _within(reader: "GraphOverview", keys: _Keys, seeds: list[str], depth: int) -> dict[str, int]:
    """Hops from the nearest seed for every node within ``depth`` hops (inside the filtered graph)."""
    present = keys.key_set
    distance = {seed: 0 for seed in seeds}
    frontier = list(seeds)
    for hop in range(1, depth + 1):
        if not frontier:
            break
        near = reader.neighbour_keys(frontier)
        step = sorted({other for key in frontier for other in near.get(key, ())
                       if other not in distance and other in present})
        for other in step:
            distance[other] = hop
        frontier = step
    return distance


def _best(keys: _Keys, min_degree: int, max_nodes: int) -> tuple[list[str], int]:
    """No search: the ``max_nodes`` best-connected nodes of degree >= ``min_degree`` (ties by key)."""
    degree = keys.degree
    ranked = ((k, d) for k, d in degree.items() if d >= min_degree)
    top = [k for k, _ in heapq.nsmallest(max_nodes, ranked, key=lambda kv: (-kv[1], kv[0]))]
    if min_degree > 0:
        return top, sum(1 for d in degree.values() if d >= min_degree)
    if len(top) < max_nodes:  # then every node with an edge is in: add isolated ones by key
        top += [k for k in keys.keys if k not in degree][:max_nodes - len(top)]
    return top, len(keys.keys)


def select(ws: "Workspace", mention: bool, search: str, depth: int, types: tuple[str, ...], min_degree: int,
           max_nodes: int) -> GraphSelection:
    """The view to draw (see the module docstring); nothing but the drawn rows is read in full."""
    keys = _keys(ws, mention, types)
    reader = _reader(ws, mention)
    query = search.strip().lower()
    matches: list[str] = []
    if query:
        matches = _matches(reader, keys, query)
        distance = _within(reader, keys, matches, max(int(depth), 0))
        match_set = set(matches)
        eligible = [n for n in distance if n in match_set or keys.degree.get(n, 0) >= min_degree]
        eligible.sort(key=lambda n: (n not in match_set, distance.get(n, 0), -keys.degree.get(n, 0), n))
        nodes, count = eligible[:max_nodes], len(eligible)
    else:
        nodes, count = _best(keys, min_degree, max_nodes)
    return GraphSelection(_subgraph(reader, nodes), nodes, matches, count)


def _subgraph(reader: "GraphOverview", nodes: list[str]) -> nx.Graph:
    graph = nx.Graph()
    attributes = reader.node_attributes(nodes)
    for key in sorted(nodes):
        graph.add_node(key, **attributes.get(key, {}))
    for a, b, data in reader.edges_among(nodes):
        graph.add_edge(a, b, **data)
    return graph


def node_detail(ws: "Workspace", mention: bool, key: str) -> Optional[NodeDetail]:
    """The side panel's node; None when the graph has no such node."""
    reader = _reader(ws, mention)
    attributes = reader.node_attributes([key]).get(key)
    neighbours = reader.neighbours(key)
    if attributes is None and not neighbours:
        return None
    others = reader.node_attributes([k for k, _ in neighbours])
    named = [(k, str(others.get(k, {}).get("name") or k), data) for k, data in neighbours]
    degree = len(neighbours) + sum(1 for k, _ in neighbours if k == key)  # a self-loop counts twice
    counts = reader.chunk_counts([key]).get(key, {}) if mention else {}
    return NodeDetail(key, dict(attributes or {}), degree, named, counts)


def edge_detail(ws: "Workspace", mention: bool, a: str, b: str) -> Optional[EdgeDetail]:
    """The edge between ``a`` and ``b`` with its endpoints' names; None when there is none."""
    reader = _reader(ws, mention)
    data = reader.edge(a, b)
    if data is None:
        return None
    nodes = reader.node_attributes([a, b])
    return EdgeDetail(a, b, str(nodes.get(a, {}).get("name") or a), str(nodes.get(b, {}).get("name") or b), data)


def chunk_counts(ws: "Workspace", terms: list[str]) -> dict[str, dict[str, int]]:
    """Mention graph: term -> {chunk id: mentions} for the given terms only."""
    return _reader(ws, True).chunk_counts(terms)
