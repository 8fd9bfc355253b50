"""ppr mode's walk: personalised PageRank on a hand-worked graph equals the hand values and
networkx.pagerank with the same personalization; the entity+chunk matrix of the sample workspace
holds appears-in edges; and ppr ranks a question entity's chunk first where naive does not have to."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from core.retrieval.ppr_graph import CHUNK_PREFIX, build_matrix, graph_matrix, personalized_pagerank


def test_two_node_graph_equals_hand_values():
    # a - b, restart all at a, alpha 0.5: p_a = 0.5 + 0.5 p_b, p_b = 0.5 p_a  =>  p_a = 2/3, p_b = 1/3
    matrix = build_matrix(["a", "b"], [("a", "b", 1.0)])
    p = personalized_pagerank(matrix, {"a": 1.0}, alpha=0.5)
    assert p == pytest.approx([2 / 3, 1 / 3], abs=1e-9)


def test_star_graph_equals_hand_values():
    # centre c with leaves x, y; restart at x; alpha 0.5:
    # p_x = 0.5 + 0.5 * p_c / 2, p_y = 0.5 * p_c / 2, p_c = 0.5 * (p_x + p_y)
    # => p_c = 0.5 (0.5 + 0.5 p_c) => p_c = 1/3, p_x = 0.5 + 1/12 = 7/12, p_y = 1/12
    matrix = build_matrix(["c", "x", "y"], [("c", "x", 1.0), ("c", "y", 1.0)])
    p = personalized_pagerank(matrix, {"x": 1.0}, alpha=0.5)
    assert p == pytest.approx([1 / 3, 7 / 12, 1 / 12], abs=1e-9)


def test_weighted_graph_with_dangling_node_equals_networkx():
    nodes = ["e1", "e2", "e3", "chunk:1", "chunk:2", "lonely"]
    edges = [("e1", "e2", 2.0), ("e2", "e3", 1.0), ("e1", "chunk:1", 1.0), ("e3", "chunk:2", 1.0),
             ("e2", "chunk:2", 0.5)]
    restart = {"e1": 0.9, "chunk:2": 0.05, "lonely": 0.05}
    matrix = build_matrix(nodes, edges)
    ours = personalized_pagerank(matrix, restart, alpha=0.5)
    g = nx.Graph()
    g.add_nodes_from(nodes)
    g.add_weighted_edges_from(edges)
    theirs = nx.pagerank(g, alpha=0.5, personalization=restart, weight="weight", tol=1e-12, max_iter=500)
    assert ours == pytest.approx([theirs[n] for n in nodes], abs=1e-8)
    assert ours.sum() == pytest.approx(1.0)


def test_no_restart_mass_gives_zeros():
    matrix = build_matrix(["a", "b"], [("a", "b", 1.0)])
    assert not personalized_pagerank(matrix, {"nowhere": 1.0}).any()


def test_sample_matrix_links_entities_to_their_chunks(sample_ws):
    graph = sample_ws.views.graph
    matrix = graph_matrix(graph)
    assert graph_matrix(graph) is matrix  # built once per generation
    key = next(k for k in graph.keys() if graph.entity(k).source_chunk_ids)
    chunk = CHUNK_PREFIX + graph.entity(key).source_chunk_ids[0]
    column = matrix.transition[:, matrix.index[key]].toarray().ravel()
    assert column[matrix.index[chunk]] > 0
    assert np.isclose(column.sum(), 1.0)
