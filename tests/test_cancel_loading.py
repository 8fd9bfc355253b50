"""Issue 38: Cancel honoured while a model loads and while a long summary tree is built.

Loading the embedding model or the spaCy pipeline is one library call that never looks at Cancel (the
last stop measured a CLI SIGTERM waiting for the model: "model loading is not interruptible"), and the
summary tree of a batch was built node after node with no check. Now a load inside an indexing run is
waited for in slices (``core.cancellable.call_cancellable``) and the tree checks Cancel at every node.

Each test makes the slow step wait on an event the test controls (no sleeps to race): without the
change the step runs to its end and no ``Cancelled`` is raised before it (the test then fails on its
time bound or on the number of summaries made).
"""
from __future__ import annotations

import threading
import time

import pytest

from core import cancellable
from core.cancellable import call_cancellable
from core.extraction import nlp
from core.indexing.pipeline import process_pending, register_documents
from core.settings import Settings
from core.types import Cancelled, SourceDocument, cancel_scope
from core.workspace import Workspace

BOUND_S = 1.0  # Cancel honoured within this (the wait looks every core.cancellable.POLL_S = 0.1 s)
SLOW_S = 10.0  # a slow step ends by itself after this: far beyond the bound

TEXT = " ".join(f"Harbour master {i} of Port Sallow kept ledger {i} for the Harbor Guild in 19{i:02d}."
                for i in range(80))


def _cancel_later(event: threading.Event, after_s: float = 0.2) -> dict[str, float]:
    """Set ``event`` after ``after_s`` seconds; the returned dict gets the moment it was set."""
    when: dict[str, float] = {}

    def fire() -> None:
        when["set"] = time.perf_counter()
        event.set()

    threading.Timer(after_s, fire).start()
    return when


def test_outside_a_cancel_scope_the_call_runs_inline():
    assert call_cancellable(threading.get_ident, "loading") == threading.get_ident()


def test_the_calls_result_and_errors_come_back_inside_a_scope():
    with cancel_scope(threading.Event()):
        assert call_cancellable(lambda: 42, "loading") == 42
        with pytest.raises(ValueError, match="broken model"):
            call_cancellable(lambda: (_ for _ in ()).throw(ValueError("broken model")), "loading")


def test_cancel_during_a_slow_load_is_honoured_within_the_bound_and_the_load_finishes_alone():
    cancel, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow_load() -> str:
        release.wait(SLOW_S)
        finished.set()
        return "model"

    when = _cancel_later(cancel)
    with cancel_scope(cancel), pytest.raises(Cancelled, match="while loading the embedding model"):
        call_cancellable(slow_load, "loading the embedding model")
    waited = time.perf_counter() - when["set"]
    assert waited < BOUND_S and not finished.is_set()
    release.set()
    assert finished.wait(5)  # the load went on in its own thread (the loaders cache what it builds)


def test_cancel_while_the_spacy_pipeline_loads(monkeypatch):
    cancel, release = threading.Event(), threading.Event()
    monkeypatch.setattr(nlp, "_NLP", None)
    monkeypatch.setattr(nlp, "_load_nlp", lambda: release.wait(SLOW_S))
    when = _cancel_later(cancel)
    try:
        with cancel_scope(cancel), pytest.raises(Cancelled, match="loading the spaCy model"):
            nlp.load_nlp()
        assert time.perf_counter() - when["set"] < BOUND_S
    finally:
        release.set()


def _pending_workspace(path, **settings) -> Workspace:
    ws = Workspace(path, settings=Settings(chunk_tokens=60, chunk_overlap=0, **settings))
    with ws.writer():
        register_documents(ws, [SourceDocument("harbour.txt", TEXT)])
    return ws


def test_an_indexing_run_cancelled_while_the_embedding_model_loads_stops_and_resumes(tmp_path, monkeypatch):
    real_loader = Workspace._load_local_embedder  # whichever local model the settings name (int8 by default)
    cancel, release = threading.Event(), threading.Event()

    def slow_loader(self):
        release.wait(SLOW_S)
        return real_loader(self)

    monkeypatch.setattr(Workspace, "_load_local_embedder", slow_loader)
    ws = _pending_workspace(tmp_path / "ws")
    try:
        when = _cancel_later(cancel)
        with ws.writer(), pytest.raises(Cancelled, match="loading the embedding model"):
            process_pending(ws, cancel=cancel)
        assert time.perf_counter() - when["set"] < BOUND_S
        assert [d.status for d in ws.records.documents()] == ["pending"]
        release.set()
        with ws.writer():
            report = process_pending(ws)  # Resume
        assert report.processed == 1 and [d.status for d in ws.records.documents()] == ["processed"]
    finally:
        release.set()
        ws.close()


def test_a_long_summary_tree_build_stops_at_the_next_node_and_resume_builds_it(tmp_path):
    cancel = threading.Event()
    summaries: list[int] = []

    def summarize_then_cancel(texts: list[str]) -> str:
        summaries.append(len(texts))
        cancel.set()  # Cancel pressed while the first summary node is being written
        return " ".join(texts)[:200]

    ws = _pending_workspace(tmp_path / "ws", tree_group_size=2)
    try:
        with ws.writer(), pytest.raises(Cancelled, match="building the summary tree"):
            process_pending(ws, tree_summarizer=summarize_then_cancel, cancel=cancel)
        assert len(summaries) == 1  # without the check every node of the tree is summarised first
        assert [d.status for d in ws.records.documents()] == ["pending"]
        assert ws.status()["tree_nodes"] == 0  # nothing of the cancelled batch was committed
        with ws.writer():
            report = process_pending(ws, tree_summarizer=lambda texts: " ".join(texts)[:200])  # Resume
        assert report.processed == 1 and ws.status()["tree_nodes"] >= 3
    finally:
        ws.close()


def test_the_poll_interval_keeps_the_bound():
    assert cancellable.POLL_S * 3 < BOUND_S
