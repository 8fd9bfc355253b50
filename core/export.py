"""Export the knowledge graph (and mention graph) as GraphML or JSON node-link data."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import networkx as nx

from core.citations import chunk_sources, sources_label
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


def with_citations(ws: Workspace, graph: nx.Graph) -> nx.Graph:
    """A copy of ``graph`` whose nodes and edges with ``source_chunk_ids`` also carry ``cited``: where
    those chunks are (``core.citations.sources_label``: "doc, pp. 3, 5" or "doc, chunks 2, 4")."""
    out = graph.copy()
    items = [data for _, data in out.nodes(data=True)] + [data for _, _, data in out.edges(data=True)]
    ids = {c for data in items for c in (data.get("source_chunk_ids") or [])}
    places = chunk_sources(ws.records, ws.doc_names(), ids) if ids else {}
    for data in items:
        chunk_ids = data.get("source_chunk_ids") or []
        if chunk_ids:
            data["cited"] = sources_label([places[c] for c in chunk_ids if c in places])
    return out


def export_graph(ws: Workspace, fmt: str, out: Path) -> Path:
    """Write the knowledge graph to ``out`` in ``fmt`` ('graphml' or 'json'); nodes and edges carry
    ``cited`` (``with_citations``)."""
    graph = with_citations(ws, ws.knowledge_graph())
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
