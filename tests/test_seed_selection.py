"""Seed selection, anchored relations, question-relevant paths and the tree's query entities:
RAGScope's choices where the papers leave things open (``paper_strict`` turns them off)."""
from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from core.retrieval.anchoring import ANCHOR_BONUS, Anchor, anchored_relations, neighbourhood
from core.retrieval.query import Seed
from core.retrieval.registry import query_context
from core.retrieval.entity_linking import containing_entity, dictionary_names, link_names
from core.retrieval.path_search import PathRetriever
from core.retrieval.tree_search import TreeRetriever, query_terms
from core.storage.graph_view import NetworkxGraphView
from core.storage.vector_search import MatrixSearch
from core.storage.vector_search import VectorMatrix


class FakeViews:
    """The two ports the anchoring reads: a graph view and an exact vector search."""

    def __init__(self, graph: nx.Graph, matrix: VectorMatrix) -> None:
        self.graph = NetworkxGraphView(graph)
        self.vectors = MatrixSearch(lambda collection: matrix)
        self.owner: Any = None

    def derived(self, build: Any) -> Any:
        return build(self.owner)  # no generation to memoise for: built each time


class FakeWorkspace:
    """Just enough of a workspace for the anchoring: a graph and in-memory relation vectors."""

    def __init__(self, graph: nx.Graph, relation_vectors: dict[tuple[str, str], list[float]]) -> None:
        self.graph = graph
        pairs = list(relation_vectors)
        vectors = np.asarray([relation_vectors[p] for p in pairs], dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        self.matrix = VectorMatrix([f"rel-{a}-{b}" for a, b in pairs], vectors,
                                   [{"source": a, "target": b} for a, b in pairs])
        self.views = FakeViews(graph, self.matrix)
        self.views.owner = self


def bridge_graph() -> FakeWorkspace:
    """q (the question's entity) — b (bridge) — a (answer); d — e elsewhere, closer to the keywords."""
    g = nx.Graph()
    g.add_nodes_from([(n, {"name": n.upper()}) for n in "qbade"])
    g.add_edge("b", "q", weight=1.0)
    g.add_edge("a", "b", weight=1.0)
    g.add_edge("d", "e", weight=1.0)
    return FakeWorkspace(g, {("b", "q"): [1, 0, 0], ("a", "b"): [0.6, 0.8, 0], ("d", "e"): [0, 1, 0]})


def test_anchored_relations_rank_the_bridge_relation_first():
    ws = bridge_graph()
    keywords = np.array([0, 1, 0], dtype=np.float32)  # the high-level keywords match d—e best
    seeds = [Seed("q", 1.0, "Q", "name", question=True)]
    ranked = anchored_relations(ws, keywords, seeds, top_k=3, threshold=0.2)
    assert [r.pair for r in ranked] == [("a", "b"), ("d", "e")]  # b—q: cosine 0 < 0.2
    assert ranked[0].score == round(0.8 + ANCHOR_BONUS, 6) and ranked[0].anchor == Anchor("neighbour", "Q", via="B")
    assert ranked[0].reason("the keywords") == ("cosine 0.800 to the keywords + 1: touches B, a neighbour of "
                                                "question entity Q")
    assert ranked[1].anchor is None and ranked[1].score == ranked[1].cosine == 1.0
    # the paper's ranking (no question entity): plain cosine
    assert [r.pair for r in anchored_relations(ws, keywords, [], 3, 0.2)] == [("d", "e"), ("a", "b")]
    # seeds that only resemble the question are not anchors
    assert anchored_relations(ws, keywords, [Seed("q", 0.5, "Q", "vector")], 3, 0.2)[0].pair == ("d", "e")


def test_neighbourhood_names_why_each_node_anchors():
    anchors = neighbourhood(NetworkxGraphView(bridge_graph().graph), [Seed("q", 1.0, "Q", "name", question=True)])
    assert anchors == {"q": Anchor("question", "Q"), "b": Anchor("neighbour", "Q", via="B")}
    assert [a.text() for a in anchors.values()] == ["question entity Q", "B, a neighbour of question entity Q"]


def test_names_link_by_name_alias_containment_and_vectors(sample_ws):
    ctx = query_context(sample_ws, "x")
    s = sample_ws.settings
    seeds = {seed.key: seed for seed in link_names(ctx, ["Tidewater", "Velmora Maritime", "Margaret Thorne"],
                                                     40, s.cosine_threshold, s.seed_relative_cutoff)}
    assert seeds["tidewater shipping cooperative"].how == "alias" and seeds["tidewater shipping cooperative"].question
    assert seeds["velmora maritime museum"].how == "contains" and seeds["velmora maritime museum"].question
    assert seeds["margaret thorne"].how == "name" and seeds["margaret thorne"].score == 1.0
    assert all(seed.score < 1.0 for seed in seeds.values() if seed.how == "vector")
    assert containing_entity(sample_ws, "velmora") is None  # one word of many names: ambiguous


def test_dictionary_names_find_graph_names_verbatim(sample_ws):
    found = dictionary_names(sample_ws, "When did the Velmora Coastal Railway reach Port Sallow?")
    assert found == ["Velmora Coastal Railway", "Port Sallow"]
    assert dictionary_names(sample_ws, "what about the railway?") == []


def test_path_seeds_are_question_entities_and_paths_connect_them(sample_ws):
    kg = sample_ws.knowledge_graph()
    a, b = "margaret thorne", "velmora maritime museum"
    assert not kg.has_edge(a, b) and nx.shortest_path_length(kg, a, b) == 2
    question = "How is Margaret Thorne related to the Velmora Maritime Museum?"
    result = PathRetriever().retrieve(query_context(sample_ws, question))
    first = result.paths[0]  # the multi-hop path between the two question entities comes first
    assert {first.keys[0], first.keys[-1]} == {a, b} and first.hops == 2
    assert first.question_entities == 2 and first.why.startswith("connects question entities")
    assert [e.data["question"] for e in result.events("path_seeds")] == [2]


def test_sample_questions_get_question_relevant_paths(sample_ws):
    from core.evaluation.questions import load_questions
    from core.extraction.nlp import normalize_name
    from conftest import ROOT

    for q in load_questions(ROOT / "data" / "sample_questions.jsonl"):
        result = PathRetriever().retrieve(query_context(sample_ws, q.question))
        answer = normalize_name(q.answer or "")
        assert result.paths, (q.qid, "no path at all")
        assert len(result.paths) >= min(5, sample_ws.settings.path_top_paths), (q.qid, len(result.paths))
        for path in result.paths[:5]:
            touches = path.question_entities > 0 or answer in path.keys
            assert touches, (q.qid, path.nodes, path.why)


def test_tree_query_entities_are_linked_names(sample_ws):
    ctx = query_context(sample_ws, "Which ships of the Tidewater fleet sailed from Port Sallow?")
    terms, dropped = query_terms(ctx, sample_ws.mention_graph())
    assert terms[:2] == ["tidewater shipping cooperative", "port sallow"]
    assert "ship" in dropped and "fleet" in dropped
    strict = query_context(sample_ws, ctx.question, settings=sample_ws.settings.with_overrides({"paper_strict": True}))
    paper_terms, _ = query_terms(strict, sample_ws.mention_graph())
    assert "ship" in paper_terms and "fleet" in paper_terms
    result = TreeRetriever().retrieve(ctx)
    assert "ship" in result.events("query_entities")[0].data["dropped"]


def test_inspect_path_table_says_why_each_path_was_kept(sample_ws):
    from ui.results_view import paths_frame

    result = PathRetriever().retrieve(query_context(sample_ws, "How is Margaret Thorne related to the Velmora "
                                                              "Maritime Museum?"))
    frame = paths_frame(result)
    assert len(frame) == len(result.paths) > 0
    assert all(isinstance(w, str) and w for w in frame["why kept"])
    assert frame["why kept"].iloc[0].startswith("connects question entities")
    assert frame["question entities"].iloc[0] == 2


def test_strongest_edges_are_sorted_once_per_generation(sample_ws, monkeypatch):
    """Each node's edges by weight desc then neighbour key, at most MAX_EDGES_PER_NODE, built once per
    generation: a question's anchored relations sort no adjacency of their own, and find what the
    per-question sort found."""
    from core.retrieval import anchoring

    graph = sample_ws.views.graph
    table = sample_ws.views.derived(anchoring.strongest_edges)
    for key in graph.keys():
        adjacency = graph.adjacency(key)
        expected = sorted(adjacency, key=lambda other: (-float(adjacency[other].get("weight", 1.0)), other))
        assert [other for other, _ in table.get(key, ())] == expected[: anchoring.MAX_EDGES_PER_NODE]
        assert all(pair == tuple(sorted((key, other))) for other, pair in table.get(key, ()))
    hub = max(graph.keys(), key=graph.degree)
    seeds = [Seed(hub, 1.0, graph.name(hub), "name", question=True)]
    vector = sample_ws.embedder.embed(["harbour, railway"])[0]
    sorted_here = anchoring.neighbourhood(graph, seeds)
    monkeypatch.setattr(anchoring, "_by_weight", lambda *a: (_ for _ in ()).throw(AssertionError("sorted per question")))
    assert anchoring.neighbourhood(graph, seeds, table) == sorted_here
    assert anchoring.anchored_relations(sample_ws, vector, seeds, 40, 0.2)
