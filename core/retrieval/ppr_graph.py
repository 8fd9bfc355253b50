"""The graph ``ppr`` mode walks: entity nodes and chunk nodes in one sparse matrix, relation edges
between entities, appears-in edges between an entity and each chunk it was extracted from and, when
asked, synonym edges between entities whose profile vectors are close (weight: their cosine), built
once per workspace generation (``graph_matrix``), and personalised PageRank on it by power iteration
(``personalized_pagerank``: the same fixed point as ``networkx.pagerank`` with a personalization)."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import numpy as np

from core.storage.ports import GraphView, VectorSearch

if TYPE_CHECKING:  # scipy is imported when a matrix is built: a query in another mode does not load it
    from scipy import sparse

CHUNK_PREFIX = "chunk:"  # chunk node keys; entity keys are the graph's own


@dataclass(frozen=True)
class GraphMatrix:
    """Node keys (entities first, then ``chunk:<id>``), their index, and the column-stochastic
    transition matrix (column j: where a walker at node j goes); ``dangling`` marks nodes without edges."""

    keys: tuple[str, ...]
    index: Mapping[str, int]
    transition: sparse.csr_matrix
    dangling: np.ndarray
    passages: Mapping[str, int] = field(default_factory=dict)  # entity -> its number of chunk nodes
    synonyms: int = 0  # synonym edges in the matrix

    def chunk_ids(self) -> list[str]:
        return [k[len(CHUNK_PREFIX):] for k in self.keys if k.startswith(CHUNK_PREFIX)]


def build_matrix(nodes: Sequence[str], edges: Sequence[tuple[str, str, float]]) -> GraphMatrix:
    """The matrix of an undirected weighted graph (each edge walked both ways)."""
    keys = tuple(dict.fromkeys(nodes))
    index = {k: i for i, k in enumerate(keys)}
    rows, cols, vals = [], [], []
    for a, b, w in edges:
        if a == b or w <= 0:
            continue
        i, j = index[a], index[b]
        rows += [i, j]
        cols += [j, i]
        vals += [float(w), float(w)]
    n = len(keys)
    from scipy import sparse

    adj = sparse.csr_matrix((vals, (rows, cols)), shape=(n, n))  # duplicates summed
    out = np.asarray(adj.sum(axis=0)).ravel()
    scale = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    return GraphMatrix(keys, index, (adj @ sparse.diags(scale)).tocsr(), out == 0)


def personalized_pagerank(matrix: GraphMatrix, personalization: Mapping[str, float], alpha: float = 0.5,
                          tol: float = 1e-10, max_iter: int = 200) -> np.ndarray:
    """PageRank scores (summing to 1) restarting at ``personalization`` (normalised; unknown keys are
    ignored); ``alpha`` is the probability of following an edge. Dangling mass goes back to the
    personalization, as in networkx."""
    n = len(matrix.keys)
    s = np.zeros(n)
    for key, weight in personalization.items():
        if key in matrix.index and weight > 0:
            s[matrix.index[key]] += weight
    if n == 0 or s.sum() <= 0:
        return np.zeros(n)
    s /= s.sum()
    p = s.copy()
    for _ in range(max_iter):
        new = alpha * (matrix.transition @ p + p[matrix.dangling].sum() * s) + (1 - alpha) * s
        if np.abs(new - p).sum() < n * tol:
            return new
        p = new
    return p


_CACHE: dict[tuple[int, Optional[float], int], tuple[Any, GraphMatrix]] = {}
_LOCK = threading.Lock()
_KEPT = 2  # matrices kept (RAGScope's and the papers' recipe of one generation)


def synonym_edges(graph: GraphView, search: VectorSearch, threshold: float, neighbours: int
                  ) -> list[tuple[str, str, float]]:
    """Entity pairs whose profile vectors have cosine >= ``threshold`` (each entity's ``neighbours``
    nearest at most), weighted by that cosine. As in HippoRAG 2 a synonym edge is its own edge: on a
    pair that is also related, its weight adds to the relation's."""
    return [(str(a), str(b), cosine) for a, b, cosine in search.close_pairs("entities", threshold, neighbours)
            if a != b and a in graph and b in graph]


def graph_matrix(graph: GraphView, search: Optional[VectorSearch] = None, synonym_threshold: Optional[float] = None,
                 synonym_neighbours: int = 10) -> GraphMatrix:
    """The entity+chunk matrix of one generation's graph view (with synonym edges from ``search``'s
    entity vectors when ``synonym_threshold`` is set), built on first use and kept while that view
    object is current."""
    threshold = synonym_threshold if search is not None else None
    cache_key = (id(graph), threshold, synonym_neighbours)
    with _LOCK:
        found = _CACHE.get(cache_key)
        if found is not None and found[0] is graph:
            return found[1]
    nx_graph = graph.networkx()
    nodes = list(graph.keys())
    edges: list[tuple[str, str, float]] = []
    for a, b, data in nx_graph.edges(data=True):
        if a in graph and b in graph:
            edges.append((a, b, float(data.get("weight", 1.0) or 1.0)))
    chunks: list[str] = []
    passages: dict[str, int] = {}
    for key in list(nodes):
        entity = graph.entity(key)
        own = tuple(dict.fromkeys(entity.source_chunk_ids)) if entity else ()
        passages[key] = len(own)
        for chunk_id in own:
            chunks.append(CHUNK_PREFIX + chunk_id)
            edges.append((key, CHUNK_PREFIX + chunk_id, 1.0))
    synonyms = synonym_edges(graph, search, threshold, synonym_neighbours) if threshold is not None and search else []
    plain = build_matrix(nodes + chunks, edges + synonyms)
    matrix = GraphMatrix(plain.keys, plain.index, plain.transition, plain.dangling, passages, len(synonyms))
    with _LOCK:
        for stale in [k for k, (g, _) in _CACHE.items() if g is not graph]:
            del _CACHE[stale]  # one generation at a time
        while len(_CACHE) >= _KEPT:
            del _CACHE[next(iter(_CACHE))]
        _CACHE[cache_key] = (graph, matrix)
    return matrix
