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


class BatchWorkspace(FakeWorkspace):
    """A batch merges its graph (entities grow) before it marks its documents processed."""

    def __init__(self) -> None:
        super().__init__()
        self.entities = 0

    def status(self) -> dict:
        return STATUS | {"processed": self.processed, "entities": self.entities}


def test_growth_points_follow_processed_documents_not_a_batch_merged_before_them():
    ws = BatchWorkspace()

    def batch(progress, *, report: IndexReport, llm, cancel) -> IndexReport:
        ws.entities = 84  # the whole batch's graph is merged ...
        job._record_status()  # ... and read while 0 documents are processed (a timed status read)
        ws.processed = 11
        progress(ProgressEvent("index", 11, 11, "11 documents"))
        return report

    job = IndexJob(ws, [batch], "11 file(s)")
    job.start()
    assert job.join(30) and job.state == "done"
    points = job.snapshot()["points"]
    # no point draws 84 entities above "0 documents": growth goes from (0, 0) to (11, 84)
    assert [(p["documents"], p["entities"]) for p in points] == [(0, 0), (11, 84)]


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
    assert bars[0][2] == "Documents: 0 indexed — summary tree…"  # what the first document is at, not "starting"
    assert bars[1] == ("extract", 1.0, "Extract (spaCy / LLM): done")
    assert bars[2] == ("tree", 0.0, "Summary tree (0/2) summary \\*tree\\*")


def test_starting_only_before_any_step_and_embedding_named_while_it_runs():
    snap = {"events": {"index": ProgressEvent("index", 0, 1, "1 document(s) to index")}, "n_calls": 1,
            "calls_finished": 0, "docs_before": 0}
    assert progress_bars(snap)[0][2] == "Documents: 0 indexed — starting…"
    snap["events"]["embed"] = ProgressEvent("embed", 10, 40, "embedding")
    assert progress_bars(snap)[0][2] == "Documents: 0 indexed — embed and store vectors…"


def test_counters_are_recorded_during_a_long_first_document(monkeypatch):
    import ui.indexing as indexing

    monkeypatch.setattr(indexing, "STATUS_EVERY_S", 0.0)
    ws = FakeWorkspace()
    seen = []

    def call(progress, *, report: IndexReport, llm, cancel) -> IndexReport:
        progress(ProgressEvent("index", 0, 1, "1 document(s) to index"))
        ws.processed = 5  # e.g. rows written by the first batch before its document finishes
        progress(ProgressEvent("embed", 1, 2, "embedding"))
        seen.append(job.snapshot()["status"]["processed"])
        return report

    job = IndexJob(ws, [call], "1 file")
    job.start()
    assert job.join(300) and job.state == "done", job.error_traceback  # a wait: returns when done
    assert seen == [5]


def test_the_model_loading_note_is_true_only_until_the_models_are_loaded(monkeypatch):
    import core.embeddings as embeddings
    import core.extraction.nlp as nlp
    from ui.indexing import models_to_load

    class Settings:
        embedder = "local-minilm"

    class Ws:
        settings = Settings()

    monkeypatch.setattr(nlp, "_NLP", None)
    assert models_to_load(Ws())
    monkeypatch.setattr(nlp, "_NLP", object())
    monkeypatch.setattr(embeddings, "local_embedder_loaded", lambda: True)
    assert not models_to_load(Ws())
    monkeypatch.setattr(embeddings, "local_embedder_loaded", lambda: False)
    assert models_to_load(Ws())
    Settings.embedder = "openai"
    assert not models_to_load(Ws())  # a remote embedder loads no local model


def test_own_job_does_not_raise_the_changed_outside_notice(tmp_path):
    from core.workspace import Workspace
    from ui import state

    ws = Workspace(tmp_path / "ws")
    try:
        state.follow_generation(ws)  # first sight: remembered
        before = ws.generation()

        def call(progress, *, report: IndexReport, llm, cancel) -> IndexReport:
            with ws.writer():
                ws.bump_generation()
                ws.store.conn.commit()
            return report

        job = IndexJob(ws, [call], "probe").start()
        assert job.join(300) and job.state == "done", job.error_traceback  # a wait: returns when done
        assert ws.generation() == before + 1
        assert state.follow_generation(ws) is None  # this process wrote it: no notice
        with ws.writer():  # a write this process's jobs did not make (as the CLI's would look)
            ws.bump_generation()
            ws.store.conn.commit()
        assert "changed outside this page" in (state.follow_generation(ws) or "")
    finally:
        ws.close()


def test_sidebar_and_documents_page_read_the_same_counters_while_a_job_runs(tmp_path, monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from core.workspace import Workspace

    root = str(Path(__file__).resolve().parent.parent)
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("RAGSCOPE_WORKSPACE", raising=False)
    Workspace(tmp_path / "w").close()
    at = AppTest.from_string(f"""
import sys
sys.path.insert(0, {root!r})
import streamlit as st
from ui import state
from ui.counters import workspace_counts
from ui.sidebar import render_sidebar

class Job:  # a running job whose last recorded counts differ from the (empty) database
    running = True
    ws = state.workspace()
    def snapshot(self):
        return {{"status": {{"processed": 3, "chunks": 9, "entities": 68, "relations": 156, "tree_nodes": 2,
                            "failed": 0, "pending": 1}}}}

st.session_state["doc_job"] = Job()
render_sidebar()
st.text("page: " + str(workspace_counts(state.workspace())["entities"]))
""", default_timeout=120)
    at.session_state["workspace_name"] = "w"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.sidebar.metric}
    assert (metrics["Chunks"], metrics["Entities"], metrics["Relations"]) == ("9", "68", "156")
    assert [t.value for t in at.text if t.value.startswith("page:")] == ["page: 68"]


def test_a_reloaded_documents_page_reattaches_to_the_running_job(tmp_path, monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from core.workspace import Workspace

    root = Path(__file__).resolve().parent.parent
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("RAGSCOPE_WORKSPACE", raising=False)
    ws = Workspace(tmp_path / "default")
    release = threading.Event()

    def call(progress, *, report: IndexReport, llm, cancel) -> IndexReport:
        progress(ProgressEvent("index", 0, 1, "1 document(s) to index"))
        release.wait(60)
        return report

    job = IndexJob(ws, [call], "1 file(s)").start()
    try:
        at = AppTest.from_file(str(root / "pages" / "documents.py"), default_timeout=120)  # a new session
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.session_state["doc_job"] is job
        assert [b.label for b in at.button if b.key == "doc_cancel"] == ["Cancel"]
        assert any("**Indexing 1 file" in m.value for m in at.markdown)
    finally:
        release.set()
        assert job.join(30)
        ws.close()


def test_streamlit_does_not_collect_garbage_after_every_fragment_rerun():
    """Profiled in the app (py-spy, sample corpus): Streamlit's gc.collect(2) after each script run took
    3.3x the indexing thread's own time while the progress fragments reran every second."""
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(__file__).resolve().parent.parent / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False


def test_the_models_load_as_a_step_of_their_own_before_the_first_document(monkeypatch):
    """A first run on a busy machine spends tens of seconds loading spaCy and MiniLM: that shows as a
    step that moves (0/2, 1/2, 2/2) instead of counters stuck at 0."""
    import core.embeddings
    import core.extraction.nlp

    loaded: list[str] = []
    monkeypatch.setattr(core.extraction.nlp, "nlp_loaded", lambda: False)
    monkeypatch.setattr(core.extraction.nlp, "load_nlp", lambda: loaded.append("spacy"))
    monkeypatch.setattr(core.embeddings, "local_embedder_loaded", lambda: False)

    class Settings:
        embedder = "local-minilm"

    class Workspace(FakeWorkspace):
        settings = Settings()

        @property
        def embedder(self):
            loaded.append("minilm")
            return object()

    events: list[tuple[str, int, int, str, list]] = []
    ws = Workspace()

    class Job(IndexJob):
        def progress(self, event):
            events.append((event.step, event.done, event.total, event.message, list(loaded)))
            super().progress(event)

    def call(progress, *, report, llm, cancel):
        progress(ProgressEvent("index", 0, 1, "1 document(s) to index"))
        return report

    job = Job(ws, [call], "1 file(s)").start()
    assert job.join(30) and job.state == "done"
    assert events[:3] == [("load", 0, 2, "loading the language model…", []),
                          ("load", 1, 2, "loading the embedding model…", ["spacy"]),
                          ("load", 2, 2, "models loaded", ["spacy", "minilm"])]
    assert events[3][0] == "index"
    bars = progress_bars(job.snapshot())
    assert bars[0] == ("load", 1.0, "Load models (2/2) models loaded")


def test_the_status_table_and_the_counters_come_from_one_snapshot(tmp_path):
    """A hostile upload registers failed documents while the job's counters were recorded earlier: the
    page's table, its counters and the sidebar all draw from the job's snapshot, so they agree (a table
    read on its own said 2 failed while the counters said 1)."""
    from core import api
    from core.auth import LOCAL_ADMIN
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "w")
    registered, release = threading.Event(), threading.Event()

    def call(progress, *, report: IndexReport, llm, cancel) -> IndexReport:
        api.index_uploads(LOCAL_ADMIN, ws, [("bad.pdf", b"not a pdf at all"), ("bad.docx", b"not a docx")],
                          report=report)  # no progress callback: nothing re-reads the counters
        registered.set()
        release.wait(30)
        progress(ProgressEvent("index", 1, 1, "done"))  # the job re-reads counters and rows together
        return report

    def failed(snap) -> tuple[int, int]:
        return int(snap["status"]["failed"]), sum(r["status"] == "failed" for r in snap["documents"])

    job = IndexJob(ws, [call], "2 file(s)").start()
    try:
        assert registered.wait(60)
        assert api.status(LOCAL_ADMIN, ws)["failed"] == 2  # the database is ahead of the snapshot here
        assert failed(job.snapshot()) == (0, 0)
        release.set()
        assert job.join(60) and job.state == "done", job.error_traceback
        assert failed(job.snapshot()) == (2, 2)
    finally:
        release.set()
        ws.close()
