"""Cancellation is a resumable stop, not a failure (in process, with a scripted chat model).

A ``ScriptedChat`` answers like a well-behaved model and, like ``OpenAIChat``, raises
``LLMCancelled`` once its cancel event is set; ``cancel_after=n`` sets the event after its n-th
completion, so the stop lands at a chosen point: during extraction, between a chunk's extraction
and its gleaning, or inside the batch transaction (summary tree). In every case the document stays
'pending' with nothing of the batch committed, the replies received so far are in the workspace's
LLM cache, and the next run finishes with exactly the calls that were still missing. The real
server and the CLI's Ctrl-C are covered in ``test_llm_cli.py``.
"""
from __future__ import annotations

import threading
from typing import Optional

import pytest

from core.llm.cache import CachedChat, UsageCounter
from core.llm.client import Completion, LLMCancelled
from core.llm.provider import index_components
from core.indexing.pipeline import process_pending, register_documents
from core.settings import Settings
from core.types import Cancelled, SourceDocument
from core.workspace import Workspace

TEXT = " ".join([
    "Mara Quill founded the Harbor Guild in Port Sallow in 1902, and the guild hired Ivo Brandt as its clerk.",
    "Ivo Brandt kept the Port Sallow ledger for thirty years and wrote down every ship that entered the harbour.",
    "The Harbor Guild later joined the Tidewater Shipping Cooperative, which Elena Voss led from Saltmere.",
    "Elena Voss moved the cooperative's office to Port Sallow after the great flood of 1931 ruined Saltmere.",
    "Today the Port Sallow museum shows the ledger of Ivo Brandt and a portrait of Mara Quill by the harbour.",
] * 2)
RECORDS = ("entity | Mara Quill | PERSON | Founder of the Harbor Guild.\n"
           "entity | Harbor Guild | ORG | A guild in Port Sallow.\n"
           "relation | Mara Quill | Harbor Guild | founding | Mara Quill founded the Harbor Guild. | 8\nEND")


class ScriptedChat:
    """A deterministic ``ChatModel`` with ``OpenAIChat``'s cancellation behaviour."""

    model = "scripted"

    def __init__(self, cancel_after: Optional[int] = None) -> None:
        self.cancel_event = threading.Event()
        self.cancel_after = cancel_after
        self.calls = 0
        self._lock = threading.Lock()

    def cache_params(self, json_mode: bool = False, max_tokens: Optional[int] = None) -> dict:
        return {"model": self.model, "json_mode": json_mode, "max_tokens": max_tokens}

    def complete(self, messages, *, stage: str, json_mode: bool = False, max_tokens: Optional[int] = None):
        if self.cancel_event.is_set():
            raise LLMCancelled(f"LLM work cancelled ({stage})")
        with self._lock:
            self.calls += 1
            if self.cancel_after is not None and self.calls >= self.cancel_after:
                self.cancel_event.set()
        text = {"extraction": RECORDS, "gleaning": "END"}.get(stage, "Mara Quill and Ivo Brandt ran the guild.")
        return Completion(text, prompt_tokens=20, completion_tokens=10)


def settings() -> Settings:
    return Settings(provider="openai", llm_base_url="http://127.0.0.1:9/v1", llm_model="scripted",
                    llm_concurrency=1, gleaning_passes=1, chunk_tokens=60, chunk_overlap=0, summary_tokens=50)


def chat_for(ws: Workspace, inner: ScriptedChat) -> UsageCounter:
    return UsageCounter(CachedChat(inner, ws.store.conn), ws.store.conn)


def index(ws: Workspace, chat: UsageCounter, name: str = "guild.txt"):
    try:
        with ws.writer():
            register_documents(ws, [SourceDocument(name, TEXT)])
            return process_pending(ws, **index_components(ws, chat))
    finally:
        chat.flush()


def cache_rows(ws: Workspace) -> int:
    return ws.store.conn.execute("SELECT count(*) FROM llm_cache").fetchone()[0]


GRAPH_KEYS = ("chunks", "entities", "relations", "mention_nodes", "mention_edges", "tree_nodes")


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory) -> tuple[int, dict]:
    """Calls and graph counts of one uninterrupted run (the reference)."""
    ws = Workspace(tmp_path_factory.mktemp("clean") / "ws", settings=settings())
    inner = ScriptedChat()
    report = index(ws, chat_for(ws, inner))
    assert report.processed == 1 and not report.failed
    status = ws.status()
    ws.close()
    assert status["chunks"] >= 3 and status["tree_nodes"] >= 1
    return inner.calls, {k: status[k] for k in GRAPH_KEYS}


@pytest.mark.parametrize("cancel_after", [1, 2, "summaries"])
def test_llm_cancelled_leaves_the_document_pending_and_resume_reuses_the_cache(tmp_path, clean_run, cancel_after):
    total_calls, clean_counts = clean_run
    chunks = clean_counts["chunks"]
    stop = 2 * chunks if cancel_after == "summaries" else cancel_after  # after all extraction + gleaning
    ws = Workspace(tmp_path / "ws", settings=settings())
    first = ScriptedChat(cancel_after=stop)
    with pytest.raises(LLMCancelled):
        index(ws, chat_for(ws, first))
    [doc] = ws.store.documents()
    assert doc.status == "pending" and doc.error == ""
    status = ws.status()
    assert status["pending"] == 1 and status["failed"] == 0 and status["processed"] == 0
    assert status["chunks"] == 0 and status["entities"] == 0 and status["tree_nodes"] == 0  # nothing committed
    assert first.calls == stop and cache_rows(ws) == stop  # every finished reply is cached
    events = [row[0] for row in ws.store.conn.execute("SELECT event FROM run_log")]
    assert "indexing_cancelled" in events and "document_failed" not in events

    second = ScriptedChat()
    chat = chat_for(ws, second)
    with ws.writer():
        report = process_pending(ws, **index_components(ws, chat))  # resume: nothing new to register
    chat.flush()
    assert report.processed == 1 and not report.failed
    assert second.calls == total_calls - stop, "only the missing work reaches the model"
    totals = chat.snapshot()
    assert sum(v["cached"] for v in totals.values()) == stop
    assert cache_rows(ws) == total_calls
    assert {k: ws.status()[k] for k in GRAPH_KEYS} == clean_counts  # the same index as a clean run
    ws.close()


def test_cancel_event_stops_between_batches_offline(tmp_path):
    ws = Workspace(tmp_path / "ws", settings=Settings(chunk_tokens=60, chunk_overlap=0))
    cancel = threading.Event()

    def progress(event) -> None:
        if event.step == "index" and event.done == 1:
            cancel.set()  # the first document is done: stop before the next batch

    with ws.writer():
        register_documents(ws, [SourceDocument("a.txt", TEXT), SourceDocument("b.txt", TEXT.upper())])
        with pytest.raises(Cancelled):
            process_pending(ws, progress, batch_tokens=1, cancel=cancel)
    assert sorted(d.status for d in ws.store.documents()) == ["pending", "processed"]
    with ws.writer():
        report = process_pending(ws)
    assert report.processed == 1 and [d.status for d in ws.store.documents()] == ["processed"] * 2
    ws.close()


def test_a_real_failure_still_marks_the_document_failed(tmp_path):
    class Broken(ScriptedChat):
        def complete(self, messages, **kwargs):
            raise RuntimeError("the model exploded")

    ws = Workspace(tmp_path / "ws", settings=settings())
    report = index(ws, chat_for(ws, Broken()))
    assert report.processed == 0 and len(report.failed) == 1 and "exploded" in report.failed[0]["reason"]
    assert ws.store.documents()[0].status == "failed"
    ws.close()
