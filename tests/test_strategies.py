"""The RAGScope-vs-paper strategy pairs (``core.retrieval.strategies``): chosen once per query from the
settings, each pair tested on its own, and the setting read nowhere else in ``core/``."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.retrieval import strategies as st
from core.extraction.query_terms import name_spans
from core.retrieval.keywords import OfflineKeywords
from core.retrieval.query import QueryContext, RelationSearch
from core.retrieval.registry import query_context
from core.retrieval.path_flow import ScoredPath

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "Who was appointed arbitrator in the Carrow Sound fishing dispute?"


def strict_ctx(ws, question: str = QUESTION) -> QueryContext:
    return query_context(ws, question, settings=ws.settings.with_overrides({"paper_strict": True}))


def test_the_builder_picks_the_bundle_and_the_question_object_takes_it(sample_ws):
    ctx = query_context(sample_ws, QUESTION)
    assert ctx.strategies is st.RAGSCOPE and not ctx.strategies.paper
    strict = strict_ctx(sample_ws)
    assert strict.strategies is st.PAPER and strict.strategies.paper
    assert {type(s).__name__ for s in vars(st.RAGSCOPE).values()} & {type(s).__name__ for s in vars(st.PAPER).values()} \
        == {"bool"}, "every step has two different strategies"
    # the question object chooses nothing: given the papers' bundle under RAGScope's settings, it links
    # the question's name spans only (the papers' names), not the graph's own names as well
    given = QueryContext(sample_ws, QUESTION, sample_ws.settings, st.PAPER, OfflineKeywords())
    assert given.strategies is st.PAPER and not given.settings.paper_strict
    assert given.link_names() == name_spans(QUESTION) and len(ctx.link_names()) > len(given.link_names())
    with pytest.raises(AttributeError):
        ctx.settings = strict.settings  # fixed for the question's life: its state was worked out with them


def test_paper_strict_is_read_only_by_the_settings_and_the_strategy_module():
    readers = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "core").rglob("*.py")
                     if "paper_strict" in p.read_text(encoding="utf-8"))
    assert readers == ["core/retrieval/strategies.py", "core/settings.py", "core/settings_labels.py"]


def test_seed_selection_linked_names_vs_joined_search(sample_ws):
    ctx, strict = query_context(sample_ws, QUESTION), strict_ctx(sample_ws)
    spans = ["Carrow Sound"]
    names = st.LinkedNames().names(sample_ws, QUESTION, spans)
    assert names[-1] == "Carrow Sound" and len(names) > 1  # the graph's own names come first
    assert st.JoinedSearch().names(sample_ws, QUESTION, spans) == spans
    linked = st.LinkedNames().seeds(ctx, names, ["arbitrator"], 40, fill=False)
    assert linked[0].how in ("name", "alias", "contains") and linked[0].question
    joined = st.JoinedSearch().seeds(strict, names, ["arbitrator"], 40, fill=False)
    assert joined and {s.keyword for s in joined} == {", ".join(names)} and {s.how for s in joined} == {"vector"}
    assert [s.score for s in joined] == sorted((s.score for s in joined), reverse=True)
    # no name at all: both search the fallback terms the paper's way
    assert [s.key for s in st.LinkedNames().seeds(ctx, [], ["arbitrator"], 40, False)] == \
        [s.key for s in st.JoinedSearch().seeds(strict, [], ["arbitrator"], 40, False)]
    assert "paper" in st.JoinedSearch().describe(True, False)
    assert st.LinkedNames().describe(True, True).endswith("then the paper's joined search")


def test_relation_ranking_anchored_vs_cosine(sample_ws):
    from core.types import RetrievalResult
    from core.retrieval.query import Stopwatch

    def search(strategy, ctx):
        result = RetrievalResult(mode="global", query=ctx.question)
        return strategy.search(ctx, result, Stopwatch(result))

    anchored = search(st.AnchoredRelations(), query_context(sample_ws, QUESTION))
    cosine = search(st.CosineRelations(), strict_ctx(sample_ws))
    assert isinstance(anchored, RelationSearch) and isinstance(cosine, RelationSearch)
    assert cosine.reasons is None and anchored.reasons and set(anchored.reasons) == {t[:2] for t in anchored.triples}
    assert [t[2] for t in cosine.triples] == sorted((t[2] for t in cosine.triples), reverse=True)
    assert max(t[2] for t in anchored.triples) > 1.0, "a relation touching a question entity gets the bonus"
    assert max(t[2] for t in cosine.triples) <= 1.0
    empty = query_context(sample_ws, QUESTION, keywords=NoKeywords())
    assert search(st.AnchoredRelations(), empty) is None and search(st.CosineRelations(), empty) is None


class NoKeywords:
    name = "none"

    def extract(self, question: str) -> tuple[list[str], list[str]]:
        return [], []


def test_path_ranking_question_first_vs_reliability(sample_ws):
    one_hop = ScoredPath(["x", "y"], {"x": 1.0, "y": 0.5}, 1.5)
    on_question = ScoredPath(["q", "m", "y"], {"q": 1.0, "m": 0.2, "y": 0.1}, 0.65)
    question = {"q"}
    priority = st.QuestionFirstPaths().priority(question)
    assert priority is not None
    assert sorted([one_hop, on_question], key=lambda p: (priority(p), -p.score))[0] is on_question
    assert st.ReliabilityPaths().priority(question) is None
    names = {"q": "Q", "m": "M", "x": "X", "y": "Y"}
    assert st.ReliabilityPaths().why(one_hop, question, {}, names) == \
        "kept by reliability 1.500 (Σ resources / 1 edge) (paper ranking)"
    assert st.QuestionFirstPaths().why(on_question, question, {"y": "seed: near"}, names).startswith(
        "links question entity Q to Y (seed: near)")
    paths = [one_hop]
    assert st.ReliabilityPaths().connect(strict_ctx(sample_ws), sample_ws.views.graph, question, paths, []) == (paths, [])
    assert st.QuestionFirstPaths().connect(query_context(sample_ws, QUESTION), sample_ws.views.graph, set(), paths, []) \
        == (paths, [])
    from core.retrieval.query import Stopwatch
    from core.types import RetrievalResult

    result = RetrievalResult(mode="path", query=QUESTION)
    ours = st.QuestionFirstPaths().nodes(query_context(sample_ws, QUESTION), result, Stopwatch(result), sample_ws.views.graph)
    paper = st.ReliabilityPaths().nodes(strict_ctx(sample_ws), result, Stopwatch(result), sample_ws.views.graph)
    assert ours.question and ours.question <= {k for k, _ in ours.nodes} and set(ours.why) >= ours.question
    assert paper.nodes and paper.question == set() and paper.why == {}
    assert len(result.events("node_query")) == 1 and len(result.events("path_seeds")) == 1


class FakeVectors:
    def cosines(self, collection: str, vector: np.ndarray, ids: list[str]) -> dict[str, float]:
        return {"c1": 0.1, "c2": 0.9, "c3": 0.5}


class FakeCtx:
    """The two things the evidence order reads: the question's embedding and the chunk cosines."""

    question = "q"

    class ws:
        class views:
            vectors = FakeVectors()

    def embed(self, text: str) -> np.ndarray:
        return np.zeros(3, dtype=np.float32)


def test_evidence_order_owner_then_cosine_vs_cosine_only(sample_ws):
    ours, paper = st.OwnerThenCosine(), st.CosineOnly()
    assert ours.owner_scores([0.8, 0.4]) == [0.8, 0.4] and paper.owner_scores([0.8, 0.4]) is None
    assert ours.describe("entity", [0.8]) == "by the entity's score + cosine to the question"
    assert ours.describe("entity", None) == paper.describe("entity", [0.8]) == "by cosine to the question"
    ids = ["c1", "c2", "c1", "c3"]
    assert paper.sources(FakeCtx(), ids) == ["c1", "c2", "c3"]  # corpus order, de-duplicated
    assert ours.sources(FakeCtx(), ids) == ["c2", "c3", "c1"]  # closest to the question first
    assert ours.leaves_tail and not paper.leaves_tail
    assert paper.tie_break(strict_ctx(sample_ws)) is None
    ties = ours.tie_break(query_context(sample_ws, QUESTION))
    assert ties and all(value > 0 for value in ties.values())


def test_tree_query_names_vs_every_term(sample_ws):
    question = "Which ships of the Tidewater fleet sailed from Port Sallow?"
    graph = sample_ws.mention_graph()
    named, dropped = st.NamedTreeQuery().terms(query_context(sample_ws, question), graph)
    every, none_dropped = st.EveryTermTreeQuery().terms(strict_ctx(sample_ws, question), graph)
    assert "port sallow" in named and "ship" not in named and "ship" in dropped
    assert "ship" in every and none_dropped == []
    assert st.EveryTermTreeQuery().weight_terms(strict_ctx(sample_ws, question)) == []
    rare = st.NamedTreeQuery().weight_terms(query_context(sample_ws, question))
    assert all(term not in named for term in rare)
