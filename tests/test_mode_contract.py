"""Contract of every registered retrieval mode on the sample workspace: the RetrievalResult fields,
sorted scores, context within budget, evidence, determinism, JSON round trip, extractive answers —
and what each mode promises beyond that (``PROMISES``): naive the dense top-k chunks, local the
question's entities and their 1-hop relations, global relations that are graph edges, hybrid and
mix both (mix also naive's chunks), tree its branch with the h-loop trace or summary-tree nodes,
path non-empty paths along graph edges with resources, at least one touching a question entity,
ppr chunks ranked by personalised PageRank from the question's entities, auto the result of the mode its
router model chooses for the question's features (that mode's promise, its evidence, and why).

``test_swapped_mode_breaks_its_contract`` replaces each mode in the registry by a stub returning
another mode's result relabelled with its name (naive's result for every graph mode; local's for
naive) and expects the contract to fail: a test that passes on the stub guards nothing."""
from __future__ import annotations

import json
import re
from typing import Callable

import pytest

from core.api import run_modes
from core.auth import LOCAL_ADMIN
from core.retrieval.ppr_graph import CHUNK_PREFIX, graph_matrix, personalized_pagerank
from core.retrieval.ppr_seeds import RAGSCOPE
from core.retrieval.query import QueryContext
from core.retrieval.registry import query_context
from core.retrieval.registry import modes, parse_modes, retrieve
from core.types import RetrievalResult
from core.workspace import Workspace

FIELDS = ["mode", "query", "params", "keywords", "entities", "relations", "paths", "chunks", "summaries",
          "context_text", "context_tokens", "timings_ms", "llm_calls", "prompt_tokens", "completion_tokens",
          "trace", "answer"]
QUESTION = "Who founded the Tidewater Shipping Cooperative in Port Sallow?"
QUESTION_KEYS = {"tidewater shipping cooperative", "port sallow"}  # the question's entities in the sample graph
# no pair of this question's entities lies within h nodes: tree takes its summary-tree branch
TREE_GLOBAL_QUESTION = "In what year did the Velmora Coastal Railway open to passenger traffic?"
ALL_MODES = ["naive", "local", "global", "hybrid", "mix", "tree", "path", "ppr", "auto"]
TREE_BRANCHES = {"local", "local-fallback", "global", "global-occurrence", "global-occurrence-empty"}


# --- what each mode promises -------------------------------------------------------------------
def _naive(ws: Workspace, result: RetrievalResult) -> None:
    ctx = query_context(ws, result.query)
    dense = [h.id for h in ctx.search_chunks(ctx.embed(result.query), ctx.settings.naive_top_k)]
    ids = [c.chunk_id for c in result.chunks]
    assert ids and ids == dense[:len(ids)], "naive's chunks are not the dense top-k in cosine order"
    assert not (result.entities or result.relations or result.paths or result.summaries)


def _entities(ws: Workspace, result: RetrievalResult) -> None:
    kg = ws.knowledge_graph()
    keys = [e.key for e in result.entities]
    assert keys, f"{result.mode} retrieved no entity"
    assert all(k in kg for k in keys), "an entity that is not a knowledge-graph node"
    assert QUESTION_KEYS <= set(keys), f"the question's entities are missing: {keys[:5]}"
    assert all(e.source_chunk_ids for e in result.entities)


def _relations(ws: Workspace, result: RetrievalResult) -> None:
    kg = ws.knowledge_graph()
    assert result.relations, f"{result.mode} retrieved no relation"
    assert all(kg.has_edge(r.source_key, r.target_key) for r in result.relations), "a relation not in the graph"
    assert any({r.source_key, r.target_key} & QUESTION_KEYS for r in result.relations)


def _local(ws: Workspace, result: RetrievalResult) -> None:
    _entities(ws, result)
    keys = {e.key for e in result.entities}
    _relations(ws, result)
    # local's relations are the 1-hop neighbourhood of its entities
    assert all(r.source_key in keys or r.target_key in keys for r in result.relations)
    assert result.chunks and all(c.via == "entity" for c in result.chunks)


def _global(ws: Workspace, result: RetrievalResult) -> None:
    _relations(ws, result)
    ends = {k for r in result.relations for k in (r.source_key, r.target_key)}
    # global's entities are the endpoints of its relations
    assert result.entities and all(e.key in ends for e in result.entities)
    assert result.chunks and all(c.via == "relation" for c in result.chunks)


def _hybrid(ws: Workspace, result: RetrievalResult) -> None:
    _entities(ws, result)
    _relations(ws, result)
    assert {e.branch for e in result.trace} >= {"local", "global"}
    assert any(e.branch == "local" and e.event == "seeds" for e in result.trace)
    assert any(e.branch == "global" and e.stage == "relations" or e.branch == "global" and e.event == "vector_search"
               for e in result.trace)
    assert {c.via for c in result.chunks} >= {"entity"}


def _mix(ws: Workspace, result: RetrievalResult) -> None:
    _hybrid(ws, result)
    assert any(c.via == "naive" or "naive" in (c.also_found_by or []) for c in result.chunks), \
        "mix holds none of naive's chunks"


def _tree(ws: Workspace, result: RetrievalResult) -> None:
    branch = result.params.get("branch")
    assert branch in TREE_BRANCHES, f"no tree branch recorded: {branch!r}"
    if branch.startswith("local"):
        assert isinstance(result.params.get("final_h"), int)
        assert result.events("h_step"), "local branch without its h-loop"
        assert result.chunks and all(c.pairs for c in result.chunks), "a local-branch chunk without its pair"
    else:
        assert result.summaries or result.chunks
    for summary in result.summaries:
        assert summary.leaf_chunk_ids and set(summary.leaf_chunk_ids) <= set(result.evidence_chunk_ids)


def _path(ws: Workspace, result: RetrievalResult) -> None:
    kg = ws.knowledge_graph()
    assert result.paths, "path retrieved no path"
    for path in result.paths:
        assert len(path.keys) == path.hops + 1 == len(path.relations) + 1
        assert all(kg.has_edge(a, b) for a, b in zip(path.keys, path.keys[1:])), path.keys
        assert path.resources and set(path.resources) >= set(path.nodes)
        assert path.why
    assert any(set(p.keys) & QUESTION_KEYS for p in result.paths), "no path touches a question entity"
    assert result.paths[0].question_entities, "the first path holds no question entity"


def _ppr(ws: Workspace, result: RetrievalResult) -> None:
    graph = ws.views.graph
    walks = result.events("ppr")
    assert walks and walks[0].data["seeds"] >= 1, "ppr ran no PageRank from the question's entities"
    scores = [c.score for c in result.chunks]
    assert scores and scores == sorted(scores, reverse=True)
    assert all("PageRank" in c.reason for c in result.chunks)
    question_chunks = {c for key in QUESTION_KEYS if key in graph for c in graph.entity(key).source_chunk_ids}
    assert question_chunks & {c.chunk_id for c in result.chunks}, "no chunk of a question entity"
    assert not (result.entities or result.relations or result.paths or result.summaries)
    # the chunks are the walk's own ranking: PageRank from the logged restart vector, recomputed here
    logged = result.events("ppr_seeds")
    assert logged and {s["kind"] for s in logged[0].data["seeds"]} >= {"fact", "passage"}
    restart = {s["key"]: s["weight"] for s in logged[0].data["seeds"]}
    matrix = graph_matrix(graph, ws.views.vectors, RAGSCOPE.synonym_threshold, RAGSCOPE.synonym_neighbours)
    mass = personalized_pagerank(matrix, restart, alpha=RAGSCOPE.damping)
    expected = sorted(((-mass[i], k[len(CHUNK_PREFIX):]) for k, i in matrix.index.items()
                       if k.startswith(CHUNK_PREFIX) and mass[i] > 0))[:len(result.chunks)]
    assert [c.chunk_id for c in result.chunks] == [cid for _, cid in expected]
    assert [c.score for c in result.chunks] == pytest.approx([-m for m, _ in expected], abs=1e-6)


def _auto(ws: Workspace, result: RetrievalResult) -> None:
    from core.routing.auto_mode import candidates, model_for, run_candidate
    from core.routing.features import question_features
    from core.routing.fusion import interleave, is_fused, parts_of

    chosen = result.route.get("chosen")
    assert (chosen in ALL_MODES or is_fused(chosen)) and chosen != "auto", f"auto reports no chosen mode: {result.route}"
    assert result.route.get("reason") and result.events("route"), "auto does not say why it chose"
    ctx = query_context(ws, result.query)
    assert chosen == model_for(ws)[0].choose(question_features(ctx), candidates()).mode, "not the model's choice"
    alone = run_candidate(ctx, chosen)
    assert result.evidence_chunk_ids == alone.evidence_chunk_ids, "auto's evidence is not its chosen mode's"
    if not is_fused(chosen):
        PROMISES[chosen](ws, result)
        return
    parts = [retrieve(query_context(ws, result.query), part).evidence_chunk_ids for part in parts_of(chosen)]
    fused = interleave(parts)
    assert result.evidence_chunk_ids and result.evidence_chunk_ids == fused[:len(result.evidence_chunk_ids)], \
        "the fused candidate's evidence is not its parts' chunks interleaved"


PROMISES: dict[str, Callable[[Workspace, RetrievalResult], None]] = {
    "naive": _naive, "local": _local, "global": _global, "hybrid": _hybrid, "mix": _mix, "tree": _tree,
    "path": _path, "ppr": _ppr, "auto": _auto}


def check_contract(ws: Workspace, mode: str, question: str = QUESTION) -> RetrievalResult:
    """Run ``mode`` through the registry and assert the shared contract and the mode's promises."""
    ctx = query_context(ws, question)
    result = retrieve(ctx, mode)
    data = json.loads(json.dumps(result.to_dict()))
    for field in FIELDS:
        assert field in data, field
    assert data["mode"] == mode and data["query"] == question
    assert set(data["keywords"]) == {"low", "high"}
    assert result.context_text and result.context_tokens > 0
    assert result.context_tokens <= ws.settings.max_total_tokens
    assert result.evidence_chunk_ids and len(set(result.evidence_chunk_ids)) == len(result.evidence_chunk_ids)
    known = set(ws.store.all_chunk_ids())
    assert set(result.evidence_chunk_ids) <= known
    assert result.timings_ms and all(v >= 0 for v in result.timings_ms.values())
    assert result.trace
    assert (result.llm_calls, result.prompt_tokens, result.completion_tokens) == (0, 0, 0)
    # paths: question entities on the path first (RAGScope), then reliability
    keys = [(-(p.question_entities or 0), -p.score) for p in result.paths]
    assert keys == sorted(keys)
    if mode in ("naive", "global"):
        chunk_scores = [c.score for c in result.chunks]
        assert chunk_scores == sorted(chunk_scores, reverse=True)
    for chunk in result.chunks:
        assert chunk.chunk_id in known and chunk.reason
    PROMISES[mode](ws, result)
    return result


def test_registry_has_all_seven_modes_and_parses_specs():
    assert modes() == ALL_MODES and set(PROMISES) == set(ALL_MODES)
    assert parse_modes("all") == ALL_MODES and parse_modes("naive, tree") == ["naive", "tree"]
    with pytest.raises(ValueError, match="unknown mode"):
        parse_modes("naive,bogus")


@pytest.mark.parametrize("mode", ALL_MODES)
def test_result_contract(sample_ws, mode):
    check_contract(sample_ws, mode)


def test_tree_summary_branch_contract(sample_ws):
    result = check_contract(sample_ws, "tree", TREE_GLOBAL_QUESTION)
    assert result.params["branch"].startswith("global") and result.summaries


class _Relabelled:
    """A stub retriever: another mode's result under this mode's name."""

    def __init__(self, name: str, source: str, real: object) -> None:
        self.name, self.source, self.real = name, source, real
        self.params = getattr(real, "params", ())

    def retrieve(self, ctx: QueryContext) -> RetrievalResult:
        from core.retrieval.registry import registry

        result = registry()[self.source].retrieve(ctx)
        result.mode = self.name
        return result


@pytest.mark.parametrize("mode", ALL_MODES)
def test_swapped_mode_breaks_its_contract(sample_ws, monkeypatch, mode):
    from core.retrieval.registry import registry

    source = "local" if mode == "naive" else "naive"
    monkeypatch.setitem(registry(), mode, _Relabelled(mode, source, registry()[mode]))
    with pytest.raises(AssertionError):
        check_contract(sample_ws, mode)
    with pytest.raises(AssertionError):
        _deterministic(sample_ws, mode)


def _deterministic(ws: Workspace, mode: str) -> None:
    first = retrieve(query_context(ws, QUESTION), mode)
    second = retrieve(query_context(ws, QUESTION), mode)
    assert first.evidence_chunk_ids == second.evidence_chunk_ids
    assert first.context_text == second.context_text
    assert [e.name for e in first.entities] == [e.name for e in second.entities]
    assert [(r.source_key, r.target_key) for r in first.relations] == \
        [(r.source_key, r.target_key) for r in second.relations]
    assert [p.keys for p in first.paths] == [p.keys for p in second.paths]
    assert [s.node_id for s in first.summaries] == [s.node_id for s in second.summaries]
    PROMISES[mode](ws, first)


@pytest.mark.parametrize("mode", ALL_MODES)
def test_deterministic_on_the_same_workspace(sample_ws, mode):
    _deterministic(sample_ws, mode)


def test_compare_answers_every_mode_extractively_with_citations(sample_ws):
    results = run_modes(LOCAL_ADMIN, sample_ws, QUESTION, "all")
    assert list(results) == ALL_MODES
    for mode, result in results.items():
        assert result.answer is not None and result.answer.kind == "extractive", mode
        lines = result.answer.text.splitlines()
        assert 1 <= len(lines) <= sample_ws.settings.answer_sentences
        # the best sentence first, then the mode's evidence lines; every line quotes and cites
        assert not lines[0].startswith("- ") and all(line.startswith("- ") for line in lines[1:]), lines
        assert all(re.search(r"\[[^\[\]]+, (?:chunk \d+|\u00a7 [^\[\]]+|ll?\. [\d\u2013]+)\]", line) for line in lines), lines
    naive_answer = results["naive"].answer.text
    assert "Margaret Thorne" in naive_answer or "1887" in naive_answer


def test_empty_and_very_long_questions(sample_ws):
    with pytest.raises(ValueError, match="empty"):
        retrieve(query_context(sample_ws, "   "), "naive")
    long_question = ("Which harbour towns of the Velmora Coast " * 300)[:10000]
    results = run_modes(LOCAL_ADMIN, sample_ws, long_question, "all", with_answers=False)
    assert all(r.context_tokens <= sample_ws.settings.max_total_tokens for r in results.values())
