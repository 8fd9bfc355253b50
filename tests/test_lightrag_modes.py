"""LightRAG modes: hand-checked unit tests of the pure pieces (core.retrieval.lightrag_context) and
integration tests of local / global / hybrid / mix on the sample workspace.

Hand-built graph (keys a..f, names Alpha..Zeta)::

    a --2-- b --3-- d
     \\      |       |
      5     1       4
       \\    |       |
        `-- c --1-- e --1-- f

Edges (weight): a-b 2, a-c 5, b-c 1, b-d 3, c-e 1, d-e 4, e-f 1.
Degrees: a 2, b 3, c 3, d 2, e 3, f 1.
Edge degrees deg(u)+deg(v): a-b 5, a-c 5, b-c 6, b-d 5, c-e 6, d-e 5, e-f 4.
"""
from __future__ import annotations

import networkx as nx
import pytest

from core.retrieval.registry import query_context
from core.retrieval.lightrag_context import (
    Budgeted,
    ChunkPick,
    Gathered,
    apply_budgets,
    chunk_cost,
    entity_cost,
    global_expand,
    local_expand,
    relation_cost,
    render_context,
    render_within,
    round_robin,
    select_chunks,
    text_tokens,
)
from core.tokens import count_tokens
from core.types import ChunkHit

NAMES = {"a": "Alpha", "b": "Beta", "c": "Gamma", "d": "Delta", "e": "Epsilon", "f": "Zeta"}
EDGES = [("a", "b", 2.0), ("a", "c", 5.0), ("b", "c", 1.0), ("b", "d", 3.0), ("c", "e", 1.0),
         ("d", "e", 4.0), ("e", "f", 1.0)]


def hand_graph(description_words: int = 3) -> nx.Graph:
    graph = nx.Graph()
    for key, name in NAMES.items():
        graph.add_node(key, name=name, type="ORG", description=" ".join([name.lower()] * description_words),
                       source_chunk_ids=[f"k-{key}1", f"k-{key}2"])
    for a, b, w in EDGES:
        graph.add_edge(a, b, weight=w, keywords=[f"{a}{b}"], description=f"{NAMES[a]} meets {NAMES[b]}",
                       source_chunk_ids=[f"k-{a}{b}"])
    return graph


def pairs(relations: list[dict]) -> list[tuple[str, str]]:
    return [(r.source_key, r.target_key) for r in relations]


# --- local_expand -------------------------------------------------------------------------------

def test_local_expand_ranks_relations_by_edge_degree_then_weight() -> None:
    graph = hand_graph()
    entities, relations = local_expand(graph, [("a", 0.9), ("d", 0.5), ("c", 0.3), ("f", 0.1)],
                                       top_k=40, threshold=0.2, query_label="low-level keywords 'x'")
    # f (0.1) is below the threshold; the others keep the vector order.
    assert [e.key for e in entities] == ["a", "d", "c"]
    assert [e.score for e in entities] == [0.9, 0.5, 0.3]
    assert [e.degree for e in entities] == [2, 2, 3]
    assert entities[0].reason == "cosine 0.900 to low-level keywords 'x'; degree 2"
    # Incident edges, discovery order: a-b, a-c (from a); b-d, d-e (from d); b-c, c-e (from c).
    # Ranked by (edge degree, weight) desc: b-c (6, w1), c-e (6, w1; later discovered),
    # a-c (5, w5), d-e (5, w4), b-d (5, w3), a-b (5, w2). e-f is not incident to a, d or c.
    assert pairs(relations) == [("b", "c"), ("c", "e"), ("a", "c"), ("d", "e"), ("b", "d"), ("a", "b")]
    assert [r.score for r in relations] == [6, 6, 5, 5, 5, 5]
    assert [r.position for r in relations] == [1, 2, 3, 4, 5, 6]
    assert relations[2].reason == "incident to retrieved entities Alpha and Gamma; edge degree 5, weight 5"
    assert relations[0].reason == "incident to retrieved entity Gamma; edge degree 6, weight 1"
    assert (relations[0].source, relations[0].target) == ("Beta", "Gamma")


def test_local_expand_top_k_counts_missing_keys_and_sorts_hits() -> None:
    graph = hand_graph()
    # The best two hits are "zzz" (not in the graph, skipped) and a; d falls outside top_k = 2.
    entities, relations = local_expand(graph, [("d", 0.5), ("zzz", 0.95), ("a", 0.9)], top_k=2, threshold=0.2)
    assert [e.key for e in entities] == ["a"]
    # a-c (5, w5) before a-b (5, w2).
    assert pairs(relations) == [("a", "c"), ("a", "b")]


def test_local_expand_nothing_above_threshold() -> None:
    assert local_expand(hand_graph(), [("a", 0.19)], threshold=0.2) == ([], [])
    assert local_expand(nx.Graph(), [("a", 0.9)]) == ([], [])


# --- global_expand ------------------------------------------------------------------------------

def test_global_expand_ranks_relations_then_endpoints() -> None:
    graph = hand_graph()
    hits = [("c", "a", 0.8), ("e", "f", 0.8), ("a", "b", 0.8), ("b", "d", 0.5), ("d", "e", 0.1), ("a", "c", 0.7)]
    entities, relations = global_expand(graph, hits, top_k=40, threshold=0.2, query_label="high-level keywords 'y'")
    # d-e (0.1) is below the threshold; a-c keeps its best hit (0.8, given reversed as c-a).
    # Ranked by (cosine, edge degree, weight) desc: a-c (.8, 5, w5), a-b (.8, 5, w2), e-f (.8, 4, w1), b-d (.5, 5, w3).
    assert pairs(relations) == [("a", "c"), ("a", "b"), ("e", "f"), ("b", "d")]
    assert [r.score for r in relations] == [0.8, 0.8, 0.8, 0.5]
    assert relations[0].reason == "cosine 0.800 to high-level keywords 'y'; edge degree 5, weight 5"
    # Endpoints by first appearance, the higher-degree end of a relation first:
    # a-c -> c (3), a (2); a-b -> b; e-f -> e (3), f (1); b-d -> d.
    assert [e.key for e in entities] == ["c", "a", "b", "e", "f", "d"]
    assert [e.score for e in entities] == [0.8, 0.8, 0.8, 0.8, 0.8, 0.5]
    assert entities[5].reason == "endpoint of relation Beta — Delta (ranked #4 by cosine 0.500); degree 2"


def test_global_expand_top_k_and_missing_edges() -> None:
    graph = hand_graph()
    # a-f is not an edge (skipped, but it used one of the top_k = 2 slots); b-d is third.
    entities, relations = global_expand(graph, [("a", "f", 0.9), ("e", "f", 0.6), ("b", "d", 0.5)], top_k=2)
    assert pairs(relations) == [("e", "f")]
    assert [e.key for e in entities] == ["e", "f"]


# --- chunks -------------------------------------------------------------------------------------

def test_select_chunks_per_owner_then_by_cosine() -> None:
    owners = [("entity A", ["c1", "c2", "c3", "c4"]), ("entity B", ["c4", "c5", "c6"])]
    similarity = {"c1": 0.1, "c2": 0.9, "c3": 0.5, "c4": 0.7, "c5": 0.8}  # c6 has no vector
    picks = select_chunks(owners, similarity, per_owner=2)
    # A keeps c2 (.9), c4 (.7); B keeps c5 (.8), c4 (.7); union ranked by cosine.
    assert picks == [ChunkPick("c2", 0.9, ["entity A"]), ChunkPick("c5", 0.8, ["entity B"]),
                     ChunkPick("c4", 0.7, ["entity A", "entity B"])]
    assert [p.chunk_id for p in select_chunks(owners, similarity, per_owner=1)] == ["c2", "c5"]


# --- round robin --------------------------------------------------------------------------------

def test_round_robin_interleaves_and_keeps_first_occurrence() -> None:
    # i=0: 1, 3; i=1: 2, 5; i=2: 3 (dup), 1 (dup); i=3: 4.
    assert round_robin([1, 2, 3, 4], [3, 5, 1], key=lambda x: x) == [1, 3, 2, 5, 4]
    assert round_robin(["a"], [], ["b", "c"], key=str) == ["a", "b", "c"]
    assert round_robin(key=str) == []
    first = {"id": 1, "from": "local"}
    merged = round_robin([first], [{"id": 1, "from": "global"}, {"id": 2}], key=lambda d: d["id"])
    assert merged[0] is first and [d["id"] for d in merged] == [1, 2]


# --- budgets and rendering ----------------------------------------------------------------------

def _chunks(n: int, words: int = 40) -> list[ChunkHit]:
    return [ChunkHit(chunk_id=f"k{i}", score=0.0, reason="", doc_name=f"doc{i}.md", order=i,
                     text=f"chunk {i} " + "sea " * words) for i in range(n)]


def test_apply_budgets_truncates_each_section_as_a_prefix() -> None:
    entities, relations = local_expand(hand_graph(description_words=30), [("a", 0.9), ("d", 0.5), ("c", 0.3)])
    chunks = _chunks(4)
    e_cost = [entity_cost(e) for e in entities]
    r_cost = [relation_cost(r) for r in relations]
    c_cost = [chunk_cost(c) for c in chunks]
    skeleton = text_tokens(render_context([], [], []))
    # Budgets that fit exactly two entities, three relations and (what is left) two chunks.
    e_budget = e_cost[0] + e_cost[1]
    r_budget = sum(r_cost[:3])
    total = skeleton + e_budget + r_budget + c_cost[0] + c_cost[1]
    fit = apply_budgets(entities, relations, chunks, max_entity_tokens=e_budget, max_relation_tokens=r_budget,
                        max_total_tokens=total)
    assert [e.key for e in fit.entities] == ["a", "d"]
    assert pairs(fit.relations) == pairs(relations[:3])
    assert [c.chunk_id for c in fit.chunks] == ["k0", "k1"]
    assert fit.tokens == {"entities": e_budget, "relations": r_budget, "chunks": c_cost[0] + c_cost[1],
                          "headers": skeleton}
    # One token less for entities: only the first row fits; its leftover goes to chunks.
    fit = apply_budgets(entities, relations, chunks, max_entity_tokens=e_budget - 1, max_relation_tokens=r_budget,
                        max_total_tokens=total)
    assert len(fit.entities) == 1 and len(fit.chunks) == (3 if e_cost[1] >= c_cost[2] else 2)
    # A prefix, never a skip: a first row that does not fit stops the list.
    fit = apply_budgets(entities, relations, chunks, max_entity_tokens=e_cost[0] - 1, max_relation_tokens=0,
                        max_total_tokens=10_000)
    assert fit.entities == [] and fit.relations == [] and len(fit.chunks) == 4


def test_render_within_never_exceeds_the_total() -> None:
    entities, relations = local_expand(hand_graph(description_words=30), [("a", 0.9), ("c", 0.3)])
    chunks = _chunks(5, words=80)
    for total in (10, 200, 400, 800, 5000):
        fit = apply_budgets(entities, relations, chunks, max_entity_tokens=150, max_relation_tokens=150,
                            max_total_tokens=total)
        # Row costs add up: the budgeted sum matches the rendered text (a token or two at section edges).
        exact = count_tokens(render_context(fit.entities, fit.relations, fit.chunks))
        assert abs(sum(fit.tokens.values()) - exact) <= 2
        text, tokens, _ = render_within(fit, total)
        assert tokens == count_tokens(text) and tokens <= total
    assert render_within(apply_budgets(entities, relations, chunks, max_entity_tokens=150, max_relation_tokens=150,
                                       max_total_tokens=10), 10)[:2] == ("", 0)



def test_render_within_drops_chunks_first() -> None:
    entities, relations = local_expand(hand_graph(), [("a", 0.9)])
    fit = Budgeted(list(entities), list(relations), _chunks(3), {})
    full = count_tokens(render_context(entities, relations, _chunks(3)))
    text, tokens, dropped = render_within(fit, full - 1)  # one token too many: the last chunk goes
    assert dropped == 1 and [c.chunk_id for c in fit.chunks] == ["k0", "k1"]
    assert len(fit.entities) == len(entities) and len(fit.relations) == len(relations)
    assert tokens == count_tokens(text) <= full - 1


def test_render_context_sections() -> None:
    entities, relations = local_expand(hand_graph(), [("a", 0.9)])
    text = render_context(entities, relations, _chunks(2, words=2))
    assert text.index("-----Entities-----") < text.index("-----Relationships-----") < text.index("-----Sources-----")
    assert "id,entity,type,description,rank\n1,Alpha,ORG,\"alpha alpha alpha\",2" in text
    assert "id,source,target,description,keywords,weight,rank\n1,Alpha,Gamma,\"Alpha meets Gamma\",ac,5,5" in text
    assert "[1] (doc0.md, chunk 1)\nchunk 0 sea sea" in text and "[2] (doc1.md, chunk 2)" in text


# --- integration on the sample workspace --------------------------------------------------------

QUESTION = "Who founded the Tidewater Shipping Cooperative?"


def _retrievers():
    from core.retrieval.global_search import GlobalRetriever
    from core.retrieval.hybrid_search import HybridRetriever, MixRetriever
    from core.retrieval.local_search import LocalRetriever

    return {"local": LocalRetriever, "global": GlobalRetriever, "hybrid": HybridRetriever, "mix": MixRetriever}


def _descending(values: list[float]) -> bool:
    return all(a >= b for a, b in zip(values, values[1:]))


@pytest.mark.parametrize("mode", ["local", "global", "hybrid", "mix"])
def test_mode_on_sample_workspace(sample_ws, mode: str) -> None:
    result = _retrievers()[mode]().retrieve(query_context(sample_ws, QUESTION))
    settings = sample_ws.settings
    assert result.mode == mode and result.query == QUESTION
    assert result.keywords["low"] == ["Tidewater Shipping Cooperative"] and "high" in result.keywords
    assert result.entities and result.relations and result.chunks
    for entity in result.entities:
        assert {"name", "type", "description", "score", "reason", "source_chunk_ids", "key"} <= set(entity.to_dict())
    for relation in result.relations:
        assert {"source", "target", "keywords", "description", "weight", "score", "reason",
                "source_key", "target_key"} <= set(relation.to_dict())
    for chunk in result.chunks:
        assert chunk.text and chunk.doc_name and chunk.reason
    assert 0 < result.context_tokens <= settings.max_total_tokens
    assert result.context_tokens == count_tokens(result.context_text)
    assert result.evidence_chunk_ids == [c.chunk_id for c in result.chunks]
    assert "-----Entities-----" in result.context_text and "-----Sources-----" in result.context_text
    assert {"keywords", "embed_query", "vector_search", "graph_walk", "ranking", "context"} <= set(result.timings_ms)
    assert result.llm_calls == 0 and result.prompt_tokens == 0
    assert len(result.events("budgets")) == 1
    doc_names = {c.doc_name for c in result.chunks}
    assert "03-tidewater-shipping-cooperative.md" in doc_names
    if mode in ("local", "global"):
        for records in (result.entities, result.relations, result.chunks):
            assert _descending([r.score for r in records])


@pytest.mark.parametrize("mode", ["local", "global", "hybrid", "mix"])
def test_mode_is_deterministic(sample_ws, mode: str) -> None:
    retriever = _retrievers()[mode]()
    first = retriever.retrieve(query_context(sample_ws, QUESTION)).to_dict()
    second = retriever.retrieve(query_context(sample_ws, QUESTION)).to_dict()
    first.pop("timings_ms"), second.pop("timings_ms")
    assert first == second


def test_global_uses_high_level_keywords_or_falls_back(sample_ws) -> None:
    retriever = _retrievers()["global"]()
    fallback = retriever.retrieve(query_context(sample_ws, QUESTION))  # no high-level keywords
    assert fallback.keywords["high"] == []
    assert [e.data for e in fallback.events("keyword_fallback")] == [{"level": "high-level", "other": "low-level"}]
    question = "Who was appointed arbitrator in the Carrow Sound fishing dispute?"
    result = retriever.retrieve(query_context(sample_ws, question))
    assert result.keywords["high"] == ["arbitrator", "fishing dispute"]
    assert [e.data for e in result.events("keywords_searched")] == [
        {"level": "high-level", "terms": ["arbitrator", "fishing dispute"]}]
    assert "to high-level keywords 'arbitrator, fishing dispute'" in result.relations[0].reason


def test_hybrid_is_the_round_robin_of_local_and_global(sample_ws) -> None:
    from core.retrieval.query import Stopwatch
    from core.retrieval.results import new_result
    from core.retrieval.lightrag_context import chunk_key, entity_key, relation_key

    modes = _retrievers()
    ctx = query_context(sample_ws, "Who was appointed arbitrator in the Carrow Sound fishing dispute?")
    scratch = new_result(ctx, "scratch", [])
    local: Gathered = modes["local"]().gather(ctx, scratch, Stopwatch(scratch))
    global_: Gathered = modes["global"]().gather(ctx, scratch, Stopwatch(scratch))
    hybrid = modes["hybrid"]().gather(ctx, scratch, Stopwatch(scratch))
    assert [entity_key(e) for e in hybrid.entities] == \
        [entity_key(e) for e in round_robin(local.entities, global_.entities, key=entity_key)]
    assert [relation_key(r) for r in hybrid.relations] == \
        [relation_key(r) for r in round_robin(local.relations, global_.relations, key=relation_key)]
    assert [chunk_key(c) for c in hybrid.chunks] == \
        [chunk_key(c) for c in round_robin(local.chunks, global_.chunks, key=chunk_key)]
    result = modes["hybrid"]().retrieve(ctx)
    assert [e.key for e in result.entities] == [entity_key(e) for e in hybrid.entities][:len(result.entities)]


def test_mix_contains_the_naive_chunks(sample_ws) -> None:
    from core.retrieval.naive_search import NaiveRetriever

    ctx = query_context(sample_ws, QUESTION)
    naive = NaiveRetriever().retrieve(ctx)
    mix = _retrievers()["mix"]().retrieve(ctx)
    by_id = {c.chunk_id: c for c in mix.chunks}
    kept = naive.chunks
    if mix.events("corpus_cap"):  # the sample corpus is smaller than mix's context: its last chunks go
        kept = [c for c in naive.chunks if c.chunk_id in by_id]
        assert kept[:3] == naive.chunks[:3]  # the round-robin merge put naive's best ones first
    for chunk in kept:
        assert chunk.chunk_id in by_id
        record = by_id[chunk.chunk_id]
        assert record.via == "naive" or "naive" in (record.also_found_by or [])
    # With one entity/relation and one chunk each, the naive search brings chunks of its own.
    narrow = sample_ws.settings.with_overrides({"lightrag_top_k": 1, "chunks_per_entity": 1})
    mix = _retrievers()["mix"]().retrieve(query_context(sample_ws, QUESTION, settings=narrow))
    assert any(c.via == "naive" for c in mix.chunks)
    assert len(mix.chunks) > 2


@pytest.mark.parametrize("mode", ["local", "global", "hybrid", "mix"])
def test_small_budgets_are_respected(sample_ws, mode: str) -> None:
    small = sample_ws.settings.with_overrides({"max_total_tokens": 1500, "max_entity_tokens": 300,
                                               "max_relation_tokens": 400})
    result = _retrievers()[mode]().retrieve(query_context(sample_ws, QUESTION, settings=small))
    assert 0 < result.context_tokens <= 1500
    entity_rows = sum(entity_cost(e) for e in result.entities)
    assert entity_rows <= 300 and sum(relation_cost(r) for r in result.relations) <= 400


@pytest.mark.parametrize("mode", ["local", "global", "hybrid", "mix"])
def test_no_hits_gives_an_empty_result(sample_ws, mode: str) -> None:
    # paper_strict: a question name that is also an entity name would otherwise link at score 1.0
    strict = sample_ws.settings.with_overrides({"cosine_threshold": 0.99, "paper_strict": True})
    result = _retrievers()[mode]().retrieve(query_context(sample_ws, QUESTION, settings=strict))
    if mode == "mix":  # the naive half still finds chunks
        assert result.entities == [] and result.relations == [] and result.chunks
        return
    assert result.entities == [] and result.relations == [] and result.chunks == []
    assert result.context_text == "" and result.context_tokens == 0 and result.evidence_chunk_ids == []
    assert any(e.data["threshold"] == 0.99 for e in result.events("nothing_above"))


@pytest.mark.parametrize("mode", ["local", "global", "hybrid", "mix"])
def test_empty_workspace_gives_an_empty_result(sample_ws, tmp_path, mode: str) -> None:
    from core.workspace import Workspace

    empty = Workspace(tmp_path / "empty", embedder=sample_ws.embedder)
    try:
        result = _retrievers()[mode]().retrieve(query_context(empty, QUESTION))
    finally:
        empty.close()
    assert result.entities == [] and result.relations == [] and result.chunks == []
    assert result.context_text == "" and result.evidence_chunk_ids == []
    assert result.events("graph_empty") or result.events("no_relations")
