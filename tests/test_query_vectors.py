"""Query vectors shared with the embedder's helper thread string by string (core/retrieval/query_vectors.py):
the strings a mode asks for are made ready, a string the helper has not started is taken back by the caller
instead of waited for, the question's other strings are only started (the caller goes on with its own work
meanwhile), and a mode's results are those of embedding every string on the calling thread."""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from core.retrieval.query_vectors import fetch_shared
from core.retrieval.registry import query_context, retrieve

from tests.recording_embedder import RecordingEmbedder


def vector(text: str) -> np.ndarray:
    return np.full(4, float(len(text)), dtype=np.float32)


class BlockedHelper:
    """One helper thread, busy until ``release``; records which strings ran on it and on the caller."""

    def __init__(self, blocked: bool = True) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.gate = threading.Event()
        if blocked:
            self.pool.submit(self.gate.wait, 30)
        self.on_helper: list[str] = []
        self.on_caller: list[str] = []

    def soon(self, texts: Any) -> "Future[np.ndarray]":
        return self.pool.submit(self._run, list(texts))

    def _run(self, texts: list[str]) -> np.ndarray:
        self.on_helper.extend(texts)
        return np.vstack([vector(t) for t in texts])

    def now(self, texts: list[str]) -> list[np.ndarray]:
        self.on_caller.extend(texts)
        return [vector(t) for t in texts]

    def release(self) -> None:
        self.gate.set()
        self.pool.shutdown(wait=True)


def fetch_in_thread(helper: BlockedHelper, cache: dict, pending: dict, wanted: list[str], later: list[str]) -> bool:
    """``fetch_shared`` on another thread; True when it returned while the helper was still blocked."""
    done = threading.Event()

    def run() -> None:
        fetch_shared(cache, pending, helper.soon, helper.now, wanted, later)
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done.wait(10)


def test_the_caller_takes_back_what_a_busy_helper_has_not_started_and_leaves_it_the_rest() -> None:
    helper = BlockedHelper()
    cache: dict[str, np.ndarray] = {}
    pending: dict[str, Future[np.ndarray]] = {"started before": helper.soon(["started before"])}
    try:
        returned = fetch_in_thread(helper, cache, pending, ["a name", "started before", "another name"],
                                   ["the keywords joined", "the question?"])
        assert returned, "the caller waited for a busy helper"
        assert set(cache) == {"a name", "started before", "another name"}  # the asked strings are ready
        assert helper.on_caller == ["a name", "another name", "started before"]  # the first, then from the back
        assert set(pending) == {"the keywords joined", "the question?"}  # only started: the helper's work
        assert not helper.on_helper
    finally:
        helper.release()
    assert helper.on_helper == ["the keywords joined", "the question?"]
    for text, vec in cache.items():
        assert np.array_equal(vec, vector(text))


def test_strings_the_helper_has_done_are_read_not_embedded_again() -> None:
    helper = BlockedHelper(blocked=False)
    cache: dict[str, np.ndarray] = {}
    pending: dict[str, Future[np.ndarray]] = {}
    ahead = helper.soon(["the question?"])
    ahead.result()
    pending["the question?"] = ahead
    fetch_shared(cache, pending, helper.soon, helper.now, ["the question?"], [])
    assert helper.on_caller == [] and helper.on_helper == ["the question?"] and not pending
    helper.release()


@pytest.mark.parametrize("mode", ["local", "global", "hybrid", "mix", "path"])
def test_results_equal_those_of_every_string_embedded_on_the_caller(sample_ws, monkeypatch, mode: str) -> None:
    import core.onnx_embeddings as onnx_embeddings

    if not getattr(sample_ws.embedder, "embed_queries_soon", None):
        pytest.skip("the sample workspace's embedder has no background call")
    monkeypatch.setattr(onnx_embeddings.os, "cpu_count", lambda: 2)
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "1")
    question = ("Who founded the organisation whose former warehouse on Salt Quay now houses the Velmora "
                "Maritime Museum?")
    shared = RecordingEmbedder(sample_ws.embedder)
    plain = RecordingEmbedder(sample_ws.embedder, ahead=False)  # no background call: all on the caller
    results = []
    for recording in (shared, plain):
        sample_ws._embedder = recording
        try:
            results.append(retrieve(query_context(sample_ws, question), mode))
        finally:
            sample_ws._embedder = recording.inner
    a, b = results
    assert [(h.chunk_id, h.score) for h in a.chunks] == [(h.chunk_id, h.score) for h in b.chunks]
    assert [(r.source, r.target, r.score) for r in a.relations] == [(r.source, r.target, r.score) for r in b.relations]
    assert a.context_text == b.context_text and a.context_tokens == b.context_tokens
    assert len(shared.ahead) > 1 + 2  # the question, its two names, and after the parse the strings asked later
