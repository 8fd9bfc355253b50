"""ppr mode's walk: personalised PageRank on a hand-worked graph equals the hand values and
networkx.pagerank with the same personalization; the entity+chunk matrix of the sample workspace
holds appears-in edges; synonym edges join close entity vectors (each pair once, at most k per
entity, never over a relation); the restart vector's weights equal the hand values for RAGScope's
recipe and the papers'; the question's facts pass the linked-endpoint filter."""
from __future__ import annotations

from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest

from core.retrieval.ppr_graph import CHUNK_PREFIX, build_matrix, graph_matrix, personalized_pagerank, synonym_edges
from core.retrieval.ppr_seeds import PAPER, RAGSCOPE, PPRRecipe, fact_scores, question_facts, restart_seeds
from core.retrieval.query import Seed
from core.retrieval.registry import query_context
from core.storage.graph_view import NetworkxGraphView
from core.storage.records import VectorHit
from core.storage.vector_search import MatrixSearch, VectorMatrix


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


# --- synonym edges, facts, the restart vector ------------------------------------------------------
def _search(keys: list[str], rows: list[list[float]]) -> MatrixSearch:
    vectors = np.asarray(rows, dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    matrix = VectorMatrix([f"v{i}" for i in range(len(keys))], vectors, [{"key": k} for k in keys])
    return MatrixSearch(lambda _collection: matrix)


def test_close_pairs_keeps_each_close_pair_once_and_at_most_k_per_vector():
    # a, a2, a3 close together (cosines ~0.99), b far from all
    search = _search(["a", "a2", "a3", "b"], [[1, 0, 0], [1, 0.1, 0], [1, 0.15, 0], [0, 0, 1]])
    pairs = search.close_pairs("entities", 0.9, 5)
    assert sorted((a, b) for a, b, _ in pairs) == [("a", "a2"), ("a", "a3"), ("a2", "a3")]
    assert all(c >= 0.9 for _, _, c in pairs)
    one = {(a, b) for a, b, _ in search.close_pairs("entities", 0.9, 1)}
    assert ("a", "a2") in one and ("a2", "a3") in one and ("a", "a3") not in one  # a3's nearest is a2
    assert search.close_pairs("entities", 0.999, 5) == []


def test_synonym_edges_join_close_entities_and_add_to_relations():
    g = nx.Graph()
    g.add_nodes_from(["a", "a2", "a3", "b"])
    g.add_edge("a", "a3", weight=1.0)
    view = NetworkxGraphView(g)
    search = _search(["a", "a2", "a3", "b"], [[1, 0, 0], [1, 0.1, 0], [1, 0.15, 0], [0, 0, 1]])
    edges = synonym_edges(view, search, 0.9, 5)
    assert sorted((a, b) for a, b, _ in edges) == [("a", "a2"), ("a", "a3"), ("a2", "a3")]
    with_synonyms = graph_matrix(view, search, 0.9, 5)
    assert with_synonyms.synonyms == 3 and graph_matrix(view).synonyms == 0
    column = with_synonyms.transition[:, with_synonyms.index["a2"]].toarray().ravel()
    assert column[with_synonyms.index["a"]] > 0  # a2 had no edge; now it walks to a
    # a: relation to a3 (1.0) + synonym a3 (~0.99) + synonym a2 (~1.0); its column splits by those weights
    a_column = with_synonyms.transition[:, with_synonyms.index["a"]].toarray().ravel()
    cos = {(x, y): c for x, y, c in edges}
    total = 1.0 + cos[("a", "a3")] + cos[("a", "a2")]
    assert a_column[with_synonyms.index["a3"]] == pytest.approx((1.0 + cos[("a", "a3")]) / total)


def test_restart_vector_hand_values():
    g = nx.Graph()
    g.add_nodes_from([("e1", {"name": "E one"}), ("e2", {"name": "E two"})])
    ctx = SimpleNamespace(graph=NetworkxGraphView(g))
    seeds = [Seed("e1", 0.8, "E one", "name", True)]
    facts = [(("e1", "e2"), 0.6)]
    dense = [VectorHit("c1", 0.9, {}), VectorHit("c2", 0.7, {}), VectorHit("c3", 0.5, {})]
    named = PPRRecipe()  # linked entities seeded too, no per-passage division
    ours = {s.key: s for s in restart_seeds(ctx, named, seeds, facts, dense, {"e1": 2, "e2": 3})}
    assert ours["e1"].weight == pytest.approx(0.8 + 0.6) and ours["e1"].kind == "entity"
    assert ours["e2"].weight == pytest.approx(0.6) and ours["e2"].kind == "fact"
    # min-max normalised cosines x 0.05: 1.0, 0.5, 0 (the lowest drops out)
    assert ours[CHUNK_PREFIX + "c1"].weight == pytest.approx(0.05)
    assert ours[CHUNK_PREFIX + "c2"].weight == pytest.approx(0.025)
    assert CHUNK_PREFIX + "c3" not in ours
    paper = {s.key: s for s in restart_seeds(ctx, PAPER, seeds, facts, dense, {"e1": 2, "e2": 3})}
    assert paper["e1"].weight == pytest.approx(0.6 / 2) and paper["e1"].kind == "fact"  # no name seeds
    assert paper["e2"].weight == pytest.approx(0.6 / 3)
    assert paper[CHUNK_PREFIX + "c1"].weight == pytest.approx(0.05)  # passages are not divided


def _entity_ctx() -> SimpleNamespace:
    g = nx.Graph()
    g.add_nodes_from((k, {"name": k.upper()}) for k in ("a", "b", "c", "d", "e", "f", "g"))
    return SimpleNamespace(graph=NetworkxGraphView(g))


def test_fact_endpoints_sum_or_take_the_last_fact_and_only_the_best_mean_stay():
    ctx = _entity_ctx()
    facts = [(("a", "b"), 0.9), (("c", "d"), 0.8), (("e", "a"), 0.6), (("f", "a"), 0.5)]
    summed = {s.key: s.weight for s in restart_seeds(ctx, RAGSCOPE, [], facts, [], {})}
    assert RAGSCOPE.entity_top == 5  # HippoRAG 2's link_top_k
    # a's mean is (0.9 + 0.6 + 0.5) / 3 = 0.667: b 0.9, c 0.8, d 0.8, a 0.667, e 0.6 stay; f (0.5) drops
    assert set(summed) == {"a", "b", "c", "d", "e"}
    assert summed["a"] == pytest.approx(0.9 + 0.6 + 0.5) and summed["b"] == pytest.approx(0.9)
    last = {s.key: s.weight for s in restart_seeds(ctx, PAPER, [], facts, [], {"a": 2})}
    assert last["a"] == pytest.approx(0.5 / 2)  # the last fact naming a, divided by a's passages
    everyone = {s.key for s in restart_seeds(ctx, PPRRecipe(), [], facts, [], {})}
    assert everyone == {"a", "b", "c", "d", "e", "f"}  # entity_top 0: no cut


def test_fact_scores_min_max_over_every_fact_only_in_the_papers_recipe():
    vectors = np.array([[1.0, 0.0], [0.6, 0.8], [-0.8, 0.6]], dtype=np.float32)  # cosines 1.0, 0.6, -0.8
    matrix = VectorMatrix(["r1", "r2", "r3"], vectors,
                                    [{"source": "a", "target": "b"}, {"source": "c", "target": "d"},
                                     {"source": "e", "target": "f"}])
    search = MatrixSearch(lambda name: matrix)
    ctx = SimpleNamespace(ws=SimpleNamespace(views=SimpleNamespace(vectors=search)))
    facts = [(("a", "b"), 1.0), (("c", "d"), 0.6)]
    question = np.array([1.0, 0.0])
    assert fact_scores(ctx, question, RAGSCOPE, facts) == facts
    scaled = fact_scores(ctx, question, PAPER, facts)
    assert [pair for pair, _ in scaled] == [("a", "b"), ("c", "d")]
    assert [score for _, score in scaled] == pytest.approx([1.0, (0.6 + 0.8) / 1.8])


def test_the_papers_recipe_seeds_every_passage():
    ctx = _entity_ctx()
    dense = [VectorHit(f"c{i}", 0.9 - 0.01 * i, {}) for i in range(30)]
    ours = [s for s in restart_seeds(ctx, RAGSCOPE, [], [], dense, {}) if s.kind == "passage"]
    paper = [s for s in restart_seeds(ctx, PAPER, [], [], dense, {}) if s.kind == "passage"]
    assert len(ours) == RAGSCOPE.dense_seeds - 1  # the top 20, min-max over them: the 20th is 0
    assert len(paper) == 29 and max(s.weight for s in paper) == pytest.approx(PAPER.passage_weight)


def test_question_facts_touch_a_linked_entity_unless_none_is_linked(sample_ws):
    ctx = query_context(sample_ws, "Who founded the Tidewater Shipping Cooperative in Port Sallow?")
    vector = ctx.embed(ctx.question)
    top = [((str(k[0]), str(k[1])), c) for k, c in sample_ws.views.vectors.ranked_keys("relations", vector, 50)
           if k[0] in ctx.graph and k[1] in ctx.graph]
    assert question_facts(ctx, vector, RAGSCOPE, set()).facts == top[:RAGSCOPE.facts]
    linked = {"port sallow"}
    kept = question_facts(ctx, vector, RAGSCOPE, linked).facts
    assert kept and all(a in linked or b in linked for (a, b), _ in kept)
    assert kept == [f for f in top if f[0][0] in linked or f[0][1] in linked][:RAGSCOPE.facts]
