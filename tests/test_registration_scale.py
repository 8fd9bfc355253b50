"""Issue 38, item 2: registering a JSONL of many short documents takes time linear in their number
(batched inserts, the sequence number read through its index once per batch), reports progress
between batches and honours Cancel within a few seconds, leaving what was registered resumable; an
upload over ``max_documents_per_upload`` documents is refused with a clear message before anything is
registered. On main (b299ee1) each insert scanned ``max(seq)`` and registration had no progress and no
cancel check: 100,000 lines were still registering after 10 minutes."""
from __future__ import annotations

import threading
import time

import pytest

from conftest import HashEmbedder

from core import api
from core.auth import LOCAL_ADMIN
from core.indexing.pipeline import REGISTER_BATCH, register_documents
from core.loaders import load_uploads
from core.parsing.limits import ParseLimits
from core.types import Cancelled, SourceDocument
from core.workspace import Workspace


def _docs(n: int, prefix: str = "d") -> list[SourceDocument]:
    return [SourceDocument(f"corpus.jsonl#{i}", f"word{i}", doc_id=f"{prefix}{i}", source="corpus.jsonl")
            for i in range(n)]


@pytest.fixture()
def ws(tmp_path):
    workspace = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    yield workspace
    workspace.close()


def _batch_times(ws, docs) -> list[float]:
    """Seconds between successive 'register' progress events (one per batch)."""
    stamps = [time.perf_counter()]

    def progress(event):
        if event.step == "register":
            stamps.append(time.perf_counter())

    register_documents(ws, docs, progress=progress)
    return [b - a for a, b in zip(stamps, stamps[1:])]


@pytest.mark.slow
def test_registration_is_linear_a_batch_costs_the_same_at_the_end_as_at_the_start(ws):
    """30 batches into an empty workspace: with a per-document ``max(seq)`` scan (or any per-insert
    read of every row) a batch's cost grows with the rows before it, and the last ten batches (20,000 to
    30,000 rows) take about five times the first ten (0 to 10,000); linear registration keeps them equal."""
    n = 30 * REGISTER_BATCH
    times = _batch_times(ws, _docs(n))
    assert len(times) == 30
    early, late = sorted(times[:10])[5], sorted(times[-10:])[5]  # medians: robust to a busy machine
    assert late < 2.5 * early + 0.05, (early, late)
    rows = ws.records.documents()
    assert len(rows) == n and [r.seq for r in rows] == list(range(1, n + 1))


def test_registration_reports_progress_per_batch_and_numbers_documents_in_order(ws):
    events = []
    register_documents(ws, _docs(2 * REGISTER_BATCH + 5), progress=events.append)
    assert [(e.step, e.done, e.total) for e in events] == [
        ("register", REGISTER_BATCH, 2 * REGISTER_BATCH + 5), ("register", 2 * REGISTER_BATCH, 2 * REGISTER_BATCH + 5),
        ("register", 2 * REGISTER_BATCH + 5, 2 * REGISTER_BATCH + 5)]
    rows = ws.records.documents()
    assert [r.doc_id for r in rows] == [f"d{i}" for i in range(2 * REGISTER_BATCH + 5)]
    assert {r.status for r in rows} == {"pending"}
    again = register_documents(ws, _docs(2 * REGISTER_BATCH + 5))  # the same corpus again: a no-op
    assert again.new_documents == 0 and again.unchanged == 2 * REGISTER_BATCH + 5


def test_a_cancel_between_batches_keeps_the_registered_batches_pending(ws):
    cancel = threading.Event()

    def progress(event):
        if event.step == "register" and event.done >= 3 * REGISTER_BATCH:
            cancel.set()

    with pytest.raises(Cancelled):
        register_documents(ws, _docs(10 * REGISTER_BATCH), progress=progress, cancel=cancel)
    rows = ws.records.documents()
    assert len(rows) == 3 * REGISTER_BATCH and {r.status for r in rows} == {"pending"}
    ws.records.rollback()  # nothing left uncommitted: the run log's line is in
    assert len(ws.records.log_details("registration_cancelled")) == 1
    report = register_documents(ws, _docs(10 * REGISTER_BATCH))  # uploading again registers the rest
    assert report.unchanged == 3 * REGISTER_BATCH and report.new_documents == 7 * REGISTER_BATCH


def test_cancel_indexing_stops_a_large_registration_within_seconds(ws):
    """Through the front door, as the Documents page does: the time from Cancel to the run's end."""
    started = threading.Event()
    outcome: dict[str, object] = {}

    def progress(event):
        if event.step == "register":
            started.set()

    def run():
        try:
            api.index_sources(LOCAL_ADMIN, ws, _docs(100_000), [], progress)
        except Cancelled as exc:
            outcome["cancelled"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    assert started.wait(120), "registration reported no progress"
    asked = time.perf_counter()
    assert api.cancel_indexing(LOCAL_ADMIN, ws) == 1
    worker.join(60)
    assert not worker.is_alive()
    assert time.perf_counter() - asked < 5.0
    assert "cancelled" in outcome
    registered = ws.records.documents()
    assert 0 < len(registered) < 100_000 and {r.status for r in registered} == {"pending"}


def test_an_upload_over_the_document_cap_is_refused_with_a_clear_message():
    limits = ParseLimits(max_documents_per_upload=1_000)
    lines = b"".join(b'{"doc_id": "d%d", "text": "w%d"}\n' % (i, i) for i in range(1_001))
    docs, failures = load_uploads([("big.jsonl", lines)], limits=limits)
    assert docs == [] and len(failures) == 1
    assert "more than 1,000 documents" in failures[0].reason and "max_documents_per_upload" in failures[0].reason
    docs, failures = load_uploads([("ok.jsonl", lines.split(b"\n", 1)[1])], limits=limits)  # exactly 1,000
    assert len(docs) == 1_000 and failures == []
    many = [(f"f{i}.txt", b"text %d" % i) for i in range(5)]
    docs, failures = load_uploads(many, limits=ParseLimits(max_documents_per_upload=3))
    assert len(docs) == 3 and [f.name for f in failures] == ["f3.txt", "f4.txt"]


def test_the_cap_is_a_setting():
    from core.settings import Settings

    settings = Settings().with_overrides({"max_documents_per_upload": 7})
    assert ParseLimits.from_settings(settings).max_documents_per_upload == 7
    assert Settings().max_documents_per_upload == 200_000
