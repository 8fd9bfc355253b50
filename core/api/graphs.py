"""``core.api`` functions that read the graphs: the merged entity graph and the E2GraphRAG mention graph,
the Knowledge graph page's indexed reads, where an imported graph came from, and a graph as a file.

All are viewer functions (browse, inspect, export). The Knowledge graph page reads a few rows at a
time (``core.graph_page``: ``graph_summary``, ``graph_selection``, ``graph_node``, ``graph_edge``,
``mention_chunks``); the whole graph (``knowledge_graph``, ``mention_graph``) is built for layouts and
exports only. Re-exported by ``core.api``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from core.auth import Principal, Role, requires
from core.workspace import Workspace

if TYPE_CHECKING:
    import networkx as nx

    from core.graph_page import EdgeDetail, GraphSelection, GraphSummary, NodeDetail

RelationKey = tuple[str, str]  # (source, target) of a relation of the merged graph


# --- whole graphs ----------------------------------------------------------------------------------
@requires(Role.viewer)
def knowledge_graph(principal: Principal, ws: Workspace) -> nx.Graph:
    """The merged entity graph as networkx (for layouts and exports)."""
    return ws.knowledge_graph()


@requires(Role.viewer)
def mention_graph(principal: Principal, ws: Workspace) -> nx.Graph:
    """The E2GraphRAG mention graph (entities that co-occur in a sentence)."""
    return ws.mention_graph()


@requires(Role.viewer)
def mention_index(principal: Principal, ws: Workspace) -> dict[str, dict[str, int]]:
    """Entity → {chunk id: mentions}."""
    return ws.mention_index()


@requires(Role.viewer)
def graph_bytes(principal: Principal, graph: nx.Graph, fmt: str, ws: Optional[Workspace] = None) -> bytes:
    """A graph (one of the above, or a part of it) as a file's bytes: 'graphml' or 'json' (``core.export``);
    with ``ws``, nodes and edges with source chunks also carry ``cited`` (``core.export.with_citations``)."""
    from core.export import graph_bytes as as_bytes
    from core.export import with_citations

    return as_bytes(with_citations(ws, graph) if ws is not None else graph, fmt)


HEAVY_VIEW_NODES = 500  # a larger view (e.g. "Show all nodes") takes a heavy work slot


# --- the Knowledge graph page (indexed reads; the whole graph is never built) ------------------------
@requires(Role.viewer)
def graph_summary(principal: Principal, ws: Workspace, mention: bool = False) -> GraphSummary:
    """The node count and the type filter's choices of the knowledge graph (or the mention graph)."""
    from core.graph_page import summary

    return summary(ws, mention)


@requires(Role.viewer)
def graph_selection(principal: Principal, ws: Workspace, mention: bool = False, search: str = "", depth: int = 1,
                    types: Sequence[str] = (), min_degree: int = 0, max_nodes: int = 60) -> GraphSelection:
    """The view to draw: type filter, the ``depth``-hop neighbourhood of the search's matches, the minimum
    degree, then the best ``max_nodes`` (matches, hops, degree); the drawn nodes and their edges. A search
    longer than ``MAX_SEARCH_CHARS`` is refused with a message (an unbounded one made SQLite's LIKE fail
    and PostgreSQL's generic plan take seconds). A view of more than ``HEAVY_VIEW_NODES`` (e.g. *Show all
    nodes*) is heavy work (``core.fairness``)."""
    from core.errors import MAX_SEARCH_CHARS, check_length
    from core.fairness import slots
    from core.graph_page import select

    check_length(search, MAX_SEARCH_CHARS, "graph search")
    with slots().slot(heavy=max_nodes > HEAVY_VIEW_NODES):
        return select(ws, mention, search, depth, tuple(types), min_degree, max_nodes)


@requires(Role.viewer)
def graph_node(principal: Principal, ws: Workspace, mention: bool, key: str) -> Optional[NodeDetail]:
    """One node with its degree and neighbours (and, a term, its chunks); None when there is none."""
    from core.graph_page import node_detail

    return node_detail(ws, mention, key)


@requires(Role.viewer)
def graph_edge(principal: Principal, ws: Workspace, mention: bool, a: str, b: str) -> Optional[EdgeDetail]:
    """The edge between two nodes (attributes and endpoint names); None when there is none."""
    from core.graph_page import edge_detail

    return edge_detail(ws, mention, a, b)


@requires(Role.viewer)
def mention_chunks(principal: Principal, ws: Workspace, terms: Sequence[str]) -> dict[str, dict[str, int]]:
    """Term -> {chunk id: mentions} for the given terms (a few rows of ``mention_index``)."""
    from core.graph_page import chunk_counts

    return chunk_counts(ws, list(terms))


# --- provenance of an imported graph ---------------------------------------------------------------
@requires(Role.viewer)
def graph_provenance(principal: Principal, ws: Workspace) -> Optional[dict[str, Any]]:
    """Where the workspace's graph came from, None for a graph RAGScope built itself; for an imported one
    {provenance ("imported from LightRAG"), source_model (or "unknown"), source, imported_at, lightrag_counts,
    origins (documents, chunks, entities, relations by origin: imported / added by RAGScope's indexing / both)}."""
    from core.importers.lightrag import provenance

    return provenance(ws, origins=True)


@requires(Role.viewer)
def graph_part_origins(principal: Principal, ws: Workspace, entity_keys: Iterable[str] = (),
                       relation_keys: Iterable[RelationKey] = ()) -> dict[str | RelationKey, str]:
    """"imported" / "added" / "both" per entity key and (source, target) relation key; {} when not imported."""
    from core.importers.lightrag import part_origins

    return part_origins(ws, entity_keys, relation_keys)
