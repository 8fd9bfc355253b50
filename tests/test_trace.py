"""Trace events as records (``core.trace``): the wording comes from one table, the branch of a
combined mode is data, every event the modes emit has its wording, and the JSON keeps both."""
from __future__ import annotations

import json

import pytest

from core.retrieval.registry import query_context
from core.retrieval.registry import retrieve
from core.trace import TEXTS, TraceEvent, note
from core.types import RetrievalResult

QUESTION = "Who was appointed arbitrator in the Carrow Sound fishing dispute?"


def test_text_comes_from_the_events_data_and_the_branch_prefixes_it():
    event = TraceEvent("vector_search", "vector_search", {"noun": "relation", "top_k": 40, "total": 120, "above": 7,
                                                          "threshold": 0.2, "stale": 2})
    assert event.text() == "relation search: top-40 of 120 relations, 7 above cosine 0.2, 2 not in the graph (stale vectors)"
    event.data["stale"] = 0
    event.branch = "global"
    assert event.text() == "global: relation search: top-40 of 120 relations, 7 above cosine 0.2"
    assert note("free text").text() == "free text"
    assert TraceEvent("x", "unregistered", {"a": 1}).text() == "unregistered: a=1"


def test_result_log_and_json():
    result = RetrievalResult(mode="local", query="q")
    result.log("keywords", "no_keywords")
    result.log("graph", "graph_empty")
    assert [e.event for e in result.trace] == ["no_keywords", "graph_empty"]
    assert result.events("graph_empty")[0].stage == "graph"
    data = json.loads(json.dumps(result.to_dict()))
    assert data["trace"] == ["no keywords at all: nothing to search with",
                             "the knowledge graph is empty: index some documents first"]
    assert data["trace_events"][1] == {"stage": "graph", "event": "graph_empty", "data": {}, "branch": ""}


@pytest.mark.parametrize("strict", [False, True])
def test_every_event_the_modes_emit_has_its_wording(sample_ws, strict):
    settings = sample_ws.settings.with_overrides({"paper_strict": strict})
    ctx = query_context(sample_ws, QUESTION, settings=settings)
    for mode in ("naive", "local", "global", "hybrid", "mix", "tree", "path"):
        result = retrieve(ctx, mode)
        assert result.trace, mode
        for event in result.trace:
            assert event.event in TEXTS, (mode, event.event)
            assert event.stage and event.text()
        if mode in ("hybrid", "mix"):
            assert {e.branch for e in result.trace} >= {"local", "global"}
            assert all(e.text().startswith(f"{e.branch}: ") for e in result.trace if e.branch)
        else:
            assert {e.branch for e in result.trace} == {""}
