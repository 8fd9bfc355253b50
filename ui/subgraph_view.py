"""The subgraph one query retrieved, for Inspect: selection, counts, drawing and exports.

One definition of the counts, used by the metric row and the caption alike:

* **retrieved entities** — the mode's entity records (``result.entities``), drawn in their type
  colour with a bold border;
* **endpoints** — further nodes named by the retrieved relations or paths (not entity records
  of the result), drawn in colour;
* **neighbours** — 1-hop context around them, faded, only when asked for ("Show neighbours").

The default view keeps at most ``DEFAULT_BUDGET`` nodes, best-ranked first, so a local query with
90 touched nodes still reads at a glance; "Show all" lifts the cap. Exports: GraphML (node
attribute ``role``) and the standalone HTML page of ``ui.graph_view.graph_html`` (vis-network
inline: opens offline, fetches nothing).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from ui.results_view import relation_keys
from ui.numbers import count

DEFAULT_BUDGET = 40
ROLES = ("retrieved entity", "endpoint", "neighbour")


@dataclass
class QuerySubgraph:
    """The nodes and edges to draw for one result, with their roles."""
    graph: nx.Graph
    entities: list[str] = field(default_factory=list)  # retrieved entities present in the graph, rank order
    endpoints: list[str] = field(default_factory=list)
    neighbours: list[str] = field(default_factory=list)
    edges: set = field(default_factory=set)  # retrieved relations/path edges present in the drawing
    retrieved_entities: int = 0  # len(result.entities): the count shown everywhere
    retrieved_relations: int = 0
    omitted: int = 0  # retrieved entities/endpoints left out by the budget

    @property
    def highlighted(self) -> set[str]:
        return set(self.entities) | set(self.endpoints)


def query_subgraph(graph: nx.Graph, result: Any, budget: int = DEFAULT_BUDGET, neighbours: bool = False
                   ) -> QuerySubgraph:
    """Retrieved entities first (rank order), then relation/path endpoints, then (optionally) their
    1-hop neighbours, up to ``budget`` nodes; the induced subgraph with a ``role`` per node."""
    entity_keys = list(dict.fromkeys(e.key for e in result.entities if e.key))
    rel_nodes, rel_edges = relation_keys(result)
    in_graph = [k for k in entity_keys if k in graph]
    endpoint_keys = [k for k in dict.fromkeys(rel_nodes) if k in graph and k not in set(entity_keys)]
    budget = max(int(budget), 1)
    entities = in_graph[:budget]
    endpoints = endpoint_keys[: max(budget - len(entities), 0)]
    omitted = len(in_graph) + len(endpoint_keys) - len(entities) - len(endpoints)
    keep = set(entities) | set(endpoints)
    extra: list[str] = []
    if neighbours:
        for node in entities + endpoints:
            for nb in graph.neighbors(node):
                if len(keep) >= budget:
                    break
                if nb not in keep:
                    keep.add(nb)
                    extra.append(nb)
    sub = graph.subgraph(keep).copy()
    roles = {n: "retrieved entity" for n in entities} | {n: "endpoint" for n in endpoints}
    for node in sub.nodes:
        sub.nodes[node]["role"] = roles.get(node, "neighbour")
    edges = {(a, b) for a, b in rel_edges if sub.has_edge(a, b)}
    _mark_cited(sub, result)
    return QuerySubgraph(graph=sub, entities=entities, endpoints=endpoints, neighbours=extra, edges=edges,
                         retrieved_entities=len(result.entities), retrieved_relations=len(result.relations),
                         omitted=omitted)


def _mark_cited(sub: nx.Graph, result: Any) -> None:
    """Give the drawn nodes and edges the result's citations (``cited``: the tooltip and the GraphML
    export show where each rests in the documents; a path hop its own pages)."""
    for hit in result.entities:
        if hit.key in sub and hit.cited:
            sub.nodes[hit.key]["cited"] = list(hit.cited)
    for rel in result.relations:
        if sub.has_edge(rel.source_key, rel.target_key) and rel.cited:
            sub.edges[rel.source_key, rel.target_key]["cited"] = list(rel.cited)
    for path in result.paths:
        for edge, where in zip(path.relations, path.hop_cited or []):
            if where and sub.has_edge(edge.source_key, edge.target_key):
                sub.edges[edge.source_key, edge.target_key].setdefault("cited", where)


def caption(view: QuerySubgraph, mode: str) -> str:
    """One sentence with the counts (numbers and our words only)."""
    parts = [f"{count(view.retrieved_entities)} retrieved entities"]
    if len(view.entities) != view.retrieved_entities:
        parts[0] += f" ({count(len(view.entities))} drawn)"
    if view.retrieved_relations:
        parts.append(f"{count(view.retrieved_relations)} retrieved relations (bold edges)")
    if view.endpoints:
        parts.append(f"{count(len(view.endpoints))} more entities named by those relations or paths")
    if view.neighbours:
        parts.append(f"{count(len(view.neighbours))} neighbours (faded)")
    text = f"{mode}: " + ", ".join(parts) + f" — {count(view.graph.number_of_nodes())} nodes, " \
                                            f"{count(view.graph.number_of_edges())} edges drawn."
    if view.omitted:
        text += f" {view.omitted} further retrieved node(s) are left out: tick “Show all”."
    return text


def subgraph_html(view: QuerySubgraph, height_px: int) -> str:
    from ui.graph_view import graph_html

    return graph_html(view.graph, height_px=height_px, highlight_nodes=view.highlighted,
                      highlight_edges=view.edges or None, physics=False)  # stable layout, labels where they fit


def standalone_subgraph_html(view: QuerySubgraph, drawn: str, mode: str, question: str) -> str:
    """The drawn subgraph as a download that stands on its own: titled by the mode and the question,
    with the caption's counts and the entity-type legend."""
    from ui.graph_view import legend_items, standalone_page

    return standalone_page(drawn, f"RAGScope · {mode} · {question}", caption(view, mode) + " Bold edges and "
                           "outlined nodes are what the mode retrieved; faded ones are context.",
                           legend_items(view.graph, "type"))


def graphml_bytes(view: QuerySubgraph) -> bytes:
    from core import api
    from ui.state import principal

    return api.graph_bytes(principal(), view.graph, "graphml")
