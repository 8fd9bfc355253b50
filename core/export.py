"""Export the knowledge graph (and mention graph) as GraphML or JSON node-link data."""
from __future__ import annotations

import json
from pathlib import Path

import networkx as nx

from core.workspace import Workspace


def _graphml_safe(graph: nx.Graph) -> nx.Graph:
    """GraphML has no list type: join list attributes."""
    out = nx.Graph()
    for node, data in graph.nodes(data=True):
        out.add_node(node, **{k: "; ".join(v) if isinstance(v, list) else v for k, v in data.items()})
    for a, b, data in graph.edges(data=True):
        out.add_edge(a, b, **{k: "; ".join(v) if isinstance(v, list) else v for k, v in data.items()})
    return out


def export_graph(ws: Workspace, fmt: str, out: Path) -> Path:
    """Write the knowledge graph to ``out`` in ``fmt`` ('graphml' or 'json')."""
    graph = ws.knowledge_graph()
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "graphml":
        nx.write_graphml(_graphml_safe(graph), out)
    elif fmt == "json":
        data = {
            "knowledge_graph": nx.node_link_data(graph, edges="edges"),
            "mention_graph": {"nodes": ws.mention_graph().number_of_nodes(),
                              "edges": ws.mention_graph().number_of_edges()},
            "status": ws.status(),
        }
        out.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    else:
        raise ValueError(f"unknown export format {fmt!r} (graphml or json)")
    return out
