"""Integration tests of the tree (E2GraphRAG) and path (PathRAG) modes on the indexed sample corpus."""
from __future__ import annotations

import json
from typing import Any

import networkx as nx
import pytest

from core.retrieval.registry import query_context
from core.retrieval.path_search import SOURCES_HEADER, PathRetriever
from core.retrieval.tree_search import TreeRetriever
from core.storage.graph_view import NetworkxGraphView

TWO_ENTITIES = "How is Margaret Thorne connected to the Tidewater Shipping Cooperative?"
MANY_ENTITIES = "Who founded the organisation whose former warehouse on Salt Quay now houses the Velmora Maritime Museum?"
ONE_ENTITY = "Tell me about Margaret Thorne"
NO_ENTITY = "What are the main themes?"


def run(mode: Any, ws: Any, question: str, **overrides: Any):
    settings = ws.settings.with_overrides(overrides) if overrides else ws.settings
    return mode.retrieve(query_context(ws, question, settings=settings))


def stable(result: Any) -> dict[str, Any]:
    data = result.to_dict()
    data.pop("timings_ms")
    return data


def context_order(result: Any) -> list[dict[str, Any]]:
    """Items of a global tree result in context order (the context is ranked by score, ties by id)."""
    items = [dict(s.to_dict(), _leaves=s.leaf_chunk_ids, _id=s.node_id) for s in result.summaries]
    items += [dict(c.to_dict(), _leaves=[c.chunk_id], _id=c.chunk_id) for c in result.chunks]
    return sorted(items, key=lambda r: (-r["score"], r["_id"]))


# --- tree -------------------------------------------------------------------------------------


def test_tree_local_branch_two_entities(sample_ws) -> None:
    r = run(TreeRetriever(), sample_ws, TWO_ENTITIES)
    assert r.mode == "tree"
    assert r.params["branch"] == "local" and r.params["final_h"] == 4
    assert r.chunks and not r.summaries
    pair = ["Margaret Thorne", "Tidewater Shipping Cooperative"]
    for c in r.chunks:
        assert c.pairs == [pair]
        assert "Thorne" in c.text and "Tidewater" in c.text
        assert "Margaret Thorne – Tidewater Shipping Cooperative" in c.reason
    assert r.context_text.startswith("Margaret Thorne, Tidewater Shipping Cooperative: ")
    assert r.evidence_chunk_ids == [c.chunk_id for c in r.chunks]
    assert "embed_query" not in r.timings_ms  # the local branch is purely graph-based
    assert {"keywords", "graph_walk", "ranking", "context"} <= set(r.timings_ms)
    assert [e.data["h"] for e in r.events("h_step")] == [4]
    assert [e.name for e in r.entities] == pair
    assert r.context_tokens > 0


def h_steps(result: Any) -> list[int]:
    return [e.data["h"] for e in result.events("h_step")]


def test_tree_h_loop_tightening_is_traced(sample_ws) -> None:
    wide = run(TreeRetriever(), sample_ws, MANY_ENTITIES)
    assert wide.params["branch"] == "local" and h_steps(wide) == [4]
    n = len(wide.chunks)
    assert n >= 2, "the question should select several chunks at h=4"
    tight = run(TreeRetriever(), sample_ws, MANY_ENTITIES, tree_top_k=n - 1)
    steps = h_steps(tight)
    assert steps[0] == 4 and len(steps) >= 2
    assert steps == list(range(4, 4 - len(steps), -1))  # one step per h, tightening by one
    assert tight.params["branch"] in ("local", "local-fallback")
    assert tight.params["final_h"] < 4
    assert 1 <= len(tight.chunks) <= n - 1
    assert {c.chunk_id for c in tight.chunks} <= {c.chunk_id for c in wide.chunks}
    assert 3 in steps


def test_tree_global_branch_without_entities(sample_ws) -> None:
    r = run(TreeRetriever(), sample_ws, NO_ENTITY)
    assert r.params["branch"] == "global" and r.params["final_h"] is None
    assert len(r.events("no_query_entity")) == 1
    assert r.summaries, "the collapsed tree should contribute summary nodes"
    assert len(r.summaries) + len(r.chunks) <= sample_ws.settings.tree_top_k
    tree = sample_ws.tree_index()
    for s in r.summaries:
        assert s.leaf_chunk_ids == tree[s.node_id].leaf_chunk_ids
        assert {"node_id", "level", "scope", "text", "score", "leaf_chunk_ids"} <= set(s.to_dict())
        assert set(s.leaf_chunk_ids) <= set(r.evidence_chunk_ids)
    # evidence = items in context order, a summary contributing its leaves at its own position
    expected = list(dict.fromkeys(leaf for item in context_order(r) for leaf in item["_leaves"]))
    assert r.evidence_chunk_ids == expected
    s0 = r.summaries[0]  # its text may point to a chunk that quotes a sentence of it (each sentence once)
    assert f"level {s0.level}, {len(s0.leaf_chunk_ids)} chunks]" in r.context_text
    assert "embed_query" in r.timings_ms and "vector_search" in r.timings_ms


def test_tree_global_top_k_and_budget(sample_ws) -> None:
    r = run(TreeRetriever(), sample_ws, NO_ENTITY, tree_top_k=3)
    assert len(r.summaries) + len(r.chunks) == 3
    small = run(TreeRetriever(), sample_ws, NO_ENTITY, max_total_tokens=3000)
    full = run(TreeRetriever(), sample_ws, NO_ENTITY)
    assert small.context_tokens <= 3000 < full.context_tokens
    assert [e.data["budget"] for e in small.events("items_dropped")] == [3000]


def test_tree_occurrence_ranking_with_one_entity(sample_ws) -> None:
    r = run(TreeRetriever(), sample_ws, ONE_ENTITY)
    assert r.params["branch"] == "global-occurrence"
    assert r.events("local_empty") and r.events("h_step")[-1].data["pairs"] == 0
    index = sample_ws.mention_index()["margaret thorne"]
    items = context_order(r)
    assert items and all(item["score"] > 0 for item in items)
    for item in items:  # weight = occurrences of the query entity over the item's leaves
        assert item["score"] == sum(index.get(leaf, 0) for leaf in item["_leaves"])
    assert len(items) == sum(1 for s in r.summaries + r.chunks if s.score > 0)


def test_tree_is_deterministic_and_json(sample_ws) -> None:
    for question in (TWO_ENTITIES, NO_ENTITY):
        a, b = run(TreeRetriever(), sample_ws, question), run(TreeRetriever(), sample_ws, question)
        assert stable(a) == stable(b)
        assert json.loads(json.dumps(a.to_dict()))["mode"] == "tree"


# --- path -------------------------------------------------------------------------------------


def test_path_paths_resources_and_scores(sample_ws) -> None:
    r = run(PathRetriever(), sample_ws, TWO_ENTITIES)
    s = sample_ws.settings
    assert r.mode == "path" and r.keywords["low"] == ["Margaret Thorne", "Tidewater Shipping Cooperative"]
    assert 0 < len(r.paths) <= s.path_top_paths
    keys = [(-p.question_entities, -p.score) for p in r.paths]
    assert keys == sorted(keys)  # question entities on the path first, then reliability
    assert r.paths[0].question_entities == 2 and "connects question entities" in r.paths[0].why
    strict = run(PathRetriever(), sample_ws, TWO_ENTITIES, paper_strict=True)
    scores = [p.score for p in strict.paths]
    assert scores == sorted(scores, reverse=True) and all("paper ranking" in p.why for p in strict.paths)
    kg = sample_ws.knowledge_graph()
    for i, p in enumerate(r.paths, 1):
        assert p.rank == i
        assert set(p.resources) == set(p.nodes) and len(p.nodes) == len(p.keys)
        assert 1 <= p.hops == len(p.relations) == len(p.nodes) - 1 <= s.path_max_hops
        assert p.resources[p.nodes[0]] == 1.0  # S(start) = 1
        assert p.score == pytest.approx(sum(p.resources.values()) / p.hops, abs=1e-5)
        for (a, b), rel in zip(zip(p.keys, p.keys[1:]), p.relations):
            assert kg.has_edge(a, b)
            assert (rel.source, rel.target, rel.source_key, rel.target_key) == (kg.nodes[a]["name"], kg.nodes[b]["name"], a, b)
    on_paths = {n for p in r.paths for n in p.nodes}
    assert {e.name for e in r.entities} == on_paths
    for e in r.entities:
        assert e.score == max(p.resources[e.name] for p in r.paths if e.name in p.resources)
    assert len(r.relations) == len({frozenset(pair) for p in r.paths for pair in zip(p.keys, p.keys[1:])})
    assert r.events("cap_hit") or r.events("cap_not_hit")
    assert [e.data["kept"] for e in r.events("kept_paths")] == [len(r.paths)]


def test_path_context_most_reliable_last(sample_ws) -> None:
    r = run(PathRetriever(), sample_ws, TWO_ENTITIES)
    assert len(r.paths) >= 2
    text = r.context_text
    assert text.startswith(f"Question: {TWO_ENTITIES}")
    positions = [text.index(f"Path #{p.rank} (") for p in r.paths]
    assert positions == sorted(positions, reverse=True)  # #1 (most reliable) comes last
    assert r.paths[0].text.split("\n", 1)[0] in text  # its sentences may point to a source (each once)
    assert text.index(SOURCES_HEADER) > positions[0]
    assert r.chunks and r.chunks[0].reason.endswith("(path #1)")
    assert r.evidence_chunk_ids[: len(r.chunks)] == [c.chunk_id for c in r.chunks]
    assert r.context_tokens <= sample_ws.settings.max_total_tokens


def test_path_budget_drops_least_reliable_first(sample_ws) -> None:
    full = run(PathRetriever(), sample_ws, TWO_ENTITIES)
    first = full.paths[0].text.split("\n", 1)[0]
    r = run(PathRetriever(), sample_ws, TWO_ENTITIES, max_total_tokens=600)
    assert r.context_tokens <= 600
    assert first in r.context_text
    assert f"Path #{full.paths[-1].rank} (" not in r.context_text
    assert r.events("paths_dropped")[0].data["dropped"] >= 1


def test_path_is_deterministic_and_json(sample_ws) -> None:
    a, b = run(PathRetriever(), sample_ws, TWO_ENTITIES), run(PathRetriever(), sample_ws, TWO_ENTITIES)
    assert stable(a) == stable(b)
    data = json.loads(json.dumps(a.to_dict()))
    assert data["paths"][0]["resources"] == a.paths[0].resources


def test_path_without_nodes(sample_ws) -> None:
    r = run(PathRetriever(), sample_ws, TWO_ENTITIES, cosine_threshold=0.999, paper_strict=True)
    assert r.paths == [] and r.entities == []
    assert [e.data["why"] for e in r.events("no_path")] == ["no_node"]
    assert r.context_text == f"Question: {TWO_ENTITIES}"
    unknown = "How is Zebulon Quark connected to the Frobnitz Guild?"  # names the graph does not hold
    r = run(PathRetriever(), sample_ws, unknown, cosine_threshold=0.999)
    assert r.paths == [] and r.entities == [] and len(r.events("no_path")) == 1


class _RewiredWorkspace:
    """The sample workspace seen through a knowledge graph with the same nodes and other edges."""

    def __init__(self, ws: Any, complete: bool = False) -> None:
        self._ws = ws
        self._kg = nx.Graph()
        self._kg.add_nodes_from(ws.knowledge_graph().nodes(data=True))
        if complete:
            nodes = sorted(self._kg)
            self._kg.add_edges_from(((a, b) for i, a in enumerate(nodes) for b in nodes[i + 1 :]),
                                    keywords=["linked"], description="", weight=1.0, source_chunk_ids=[])

    def knowledge_graph(self) -> nx.Graph:
        return self._kg

    @property
    def views(self) -> Any:
        return _RewiredViews(self._ws.views, self._kg)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ws, name)


class _RewiredViews:
    """The real views of the sample workspace, with the rewired graph as the graph view."""

    def __init__(self, views: Any, kg: nx.Graph) -> None:
        self._views = views
        self.graph = NetworkxGraphView(kg)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._views, name)


def test_path_isolated_nodes_fall_back_to_node_context(sample_ws) -> None:
    r = PathRetriever().retrieve(query_context(_RewiredWorkspace(sample_ws), TWO_ENTITIES))
    assert r.paths == [] and r.relations == []
    [no_path] = r.events("no_path")
    assert no_path.data["why"] == "unlinked" and no_path.data["isolated"] == no_path.data["nodes"] > 1
    assert r.entities and all("on no path" in e.reason for e in r.entities)
    assert "-----Entities-----" in r.context_text and "Margaret Thorne (" in r.context_text
    assert r.chunks and SOURCES_HEADER in r.context_text
    first_sources = sample_ws.knowledge_graph().nodes[r.entities[0].key]["source_chunk_ids"]
    assert r.evidence_chunk_ids[0] in first_sources


def test_path_expansion_cap_is_reported(sample_ws) -> None:
    ws = _RewiredWorkspace(sample_ws, complete=True)  # a complete graph: millions of 3-hop paths
    settings = sample_ws.settings.with_overrides({"path_max_expansions": 100, "path_theta": 0.0})
    r = PathRetriever().retrieve(query_context(ws, TWO_ENTITIES, settings=settings))
    [cap] = r.events("cap_hit")
    assert cap.data["cap"] == 100 and cap.data["starts"]
    assert 0 < len(r.paths) <= settings.path_top_paths
    scores = [p.score for p in r.paths]
    assert scores == sorted(scores, reverse=True)
