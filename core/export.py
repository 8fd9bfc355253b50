"""Export the knowledge graph (and mention graph) as GraphML or JSON node-link data."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import networkx as nx

from core.workspace import Workspace


def _graphml_value(value: Any) -> Any:
    """GraphML holds scalars only: lists are joined, other containers become JSON text."""
    if isinstance(value, (list, tuple, set)):
        return "; ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return value


def _graphml_safe(graph: nx.Graph) -> nx.Graph:
    """A copy of ``graph`` GraphML can write: list attributes joined, missing values dropped."""
    out = nx.Graph()
    for node, data in graph.nodes(data=True):
        out.add_node(node, **{k: _graphml_value(v) for k, v in data.items() if v is not None})
    for a, b, data in graph.edges(data=True):
        out.add_edge(a, b, **{k: _graphml_value(v) for k, v in data.items() if v is not None})
    return out


def graph_bytes(graph: nx.Graph, fmt: str) -> bytes:
    """One graph as a file's bytes: 'graphml' (lists joined with '; ') or 'json' (node-link data)."""
    if fmt == "graphml":
        buffer = io.BytesIO()
        nx.write_graphml(_graphml_safe(graph), buffer, encoding="utf-8")
        return buffer.getvalue()
    if fmt == "json":
        data = nx.node_link_data(graph, edges="edges")
        return json.dumps(data, ensure_ascii=False, indent=1, default=str).encode("utf-8")
    raise ValueError(f"unknown export format {fmt!r} (graphml or json)")


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
