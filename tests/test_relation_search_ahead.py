"""The anchored relation search's widened cosine search (``core.retrieval.anchoring``) runs on the int8
embedder's query helper while the calling thread links the question's names, and the relations, their
scores and the context are those of the search on the calling thread."""
from __future__ import annotations

import threading
from typing import Any

import pytest

import core.retrieval.lightrag_search as lightrag_search
from core.retrieval.anchoring import anchored_relations
from core.retrieval.registry import query_context, retrieve
from core.storage.vector_search import MatrixSearch

QUESTION = "Who founded the organisation whose former warehouse on Salt Quay now houses the Velmora Maritime Museum?"


def relation_search_threads(monkeypatch: Any) -> list[str]:
    """The names of the threads that run a search over every relation vector (``ranked_keys``)."""
    threads: list[str] = []
    original = MatrixSearch.ranked_keys

    def recording(self: MatrixSearch, collection: str, vector: Any, k: int) -> Any:
        if collection == "relations":
            threads.append(threading.current_thread().name)
        return original(self, collection, vector, k)

    monkeypatch.setattr(MatrixSearch, "ranked_keys", recording)
    return threads


def outcome(result: Any) -> tuple[Any, ...]:
    return ([(r.source, r.target, r.score) for r in result.relations], [(e.name, e.score) for e in result.entities],
            [(c.chunk_id, c.score) for c in result.chunks], result.context_text, result.context_tokens)


@pytest.mark.parametrize("mode", ["global", "hybrid", "mix"])
def test_the_widened_relation_search_runs_on_the_query_helper_with_the_same_results(sample_ws, monkeypatch,
                                                                                    mode: str) -> None:
    assert getattr(sample_ws.embedder, "embed_queries_soon", None) is not None  # the int8 embedder
    threads = relation_search_threads(monkeypatch)
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "1")
    ahead = retrieve(query_context(sample_ws, QUESTION), mode)
    assert threads and all(name.startswith("ragscope-query-embed") for name in threads), threads
    threads.clear()
    monkeypatch.setattr(lightrag_search, "relation_search_soon", lambda ctx, joined: None)
    here = retrieve(query_context(sample_ws, QUESTION), mode)
    assert threads == [threading.current_thread().name]
    assert outcome(ahead) == outcome(here)


def test_without_a_helper_the_calling_thread_searches(sample_ws, monkeypatch) -> None:
    threads = relation_search_threads(monkeypatch)
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "0")
    retrieve(query_context(sample_ws, QUESTION), "global")
    assert threads == [threading.current_thread().name]


def test_a_given_widened_search_is_the_one_read(sample_ws) -> None:
    """``anchored_relations`` reads the widened search it is given instead of searching again: the search
    itself gives the same relations, none gives only the anchored ones."""
    ctx = query_context(sample_ws, QUESTION)
    vector = ctx.embed(ctx.question)
    search = sample_ws.views.vectors
    own = anchored_relations(sample_ws, vector, [], 40, 0.2)
    given = anchored_relations(sample_ws, vector, [], 40, 0.2, search.ranked_keys("relations", vector, 120))
    assert own and given == own
    assert anchored_relations(sample_ws, vector, [], 40, 0.2, []) == []  # no seed anchors, no widened hit
