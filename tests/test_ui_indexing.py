"""``ui.indexing``: the Documents page's background job and its progress bars, without Streamlit."""
from __future__ import annotations

import threading

from core.llm.client import LLMCancelled
from core.indexing.pipeline import IndexReport
from core.types import ProgressEvent
from ui.indexing import IndexJob, progress_bars

STATUS = {"processed": 0, "chunks": 0, "entities": 0, "relations": 0, "tree_nodes": 0, "pending": 0}


class FakeWorkspace:
    """Just ``status()``, counting processed documents as the calls report them."""

    def __init__(self) -> None:
        self.processed = 0

    def status(self) -> dict:
        return STATUS | {"processed": self.processed, "entities": 3 * self.processed}


def test_job_runs_calls_in_order_and_sums_their_reports():
    ws = FakeWorkspace()
    seen = []

    def call(progress, *, report: IndexReport, llm, cancel) -> IndexReport:
        seen.append((llm, cancel))
        progress(ProgressEvent("index", 0, 1, "1 document(s) to index"))
        ws.processed += 1
        report.processed += 1
        report.chunks_embedded += 2
        progress(ProgressEvent("index", 1, 1, f"doc-{ws.processed}.txt"))
        return report

    job = IndexJob(ws, [call, call], "2 file(s)").start()
    assert job.join(30) and job.state == "done"
    assert job.summary["processed"] == 2 and job.summary["chunks"] == 4 and not job.summary["cancelled"]
    assert all(cancel is job.cancel_event and llm is None for llm, cancel in seen)
    snap = job.snapshot()
    assert [p["documents"] for p in snap["points"]] == [0, 1, 2]  # one growth point per indexed document
    [(step, fraction, text)] = progress_bars(snap)
    assert step == "index" and fraction == 1.0 and text.startswith("Documents: 2 indexed (call 2 of 2)")


def test_cancel_stops_before_the_next_call_and_llm_cancelled_ends_the_job_as_cancelled():
    ws = FakeWorkspace()
    started = threading.Event()
    release = threading.Event()
    calls = []

    def slow(progress, *, report, llm, cancel):
        calls.append("slow")
        started.set()
        release.wait(10)
        if cancel.is_set():
            raise LLMCancelled("LLM work cancelled (extraction)")
        return report

    job = IndexJob(ws, [slow, slow], "2 file(s)").start()
    assert started.wait(10)
    job.cancel()
    assert job.cancelling and job.snapshot()["cancelling"]
    release.set()
    assert job.join(30) and job.state == "cancelled" and job.summary["cancelled"]
    assert calls == ["slow"] and job.error is None


def test_an_error_is_kept_for_the_page():
    def broken(progress, **_options):
        raise ValueError("workspace busy")

    job = IndexJob(FakeWorkspace(), [broken], "x").start()
    assert job.join(30) and job.state == "error"
    assert isinstance(job.error, ValueError) and "workspace busy" in job.error_traceback


def test_progress_bars_mark_earlier_steps_done_and_escape_messages():
    events = {"index": ProgressEvent("index", 0, 3, "3 document(s) to index"),
              "extract": ProgressEvent("extract", 4, 4), "tree": ProgressEvent("tree", 0, 2, "summary *tree*")}
    snap = {"events": events, "n_calls": 1, "calls_finished": 0, "docs_before": 0}
    bars = progress_bars(snap, escape=lambda s: s.replace("*", "\\*"))
    assert [b[0] for b in bars] == ["index", "extract", "tree"]
    assert bars[0][2] == "Documents: 0 indexed — starting…"
    assert bars[1] == ("extract", 1.0, "Extract (spaCy / LLM): done")
    assert bars[2] == ("tree", 0.0, "Summary tree (0/2) summary \\*tree\\*")
