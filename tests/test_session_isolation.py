"""Session isolation (issue 20): readers of a workspace never see a writer's uncommitted or
rolled-back batch.

The app shares one ``Workspace`` between browser sessions while an indexing job writes on a thread of
its own; here the reader is the test's thread and the writer a real indexing run on another thread of
the same ``Workspace`` object, paused inside its batch (rows inserted, not committed) and then made
to fail so the batch rolls back.
"""
from __future__ import annotations

import threading

import pytest

from conftest import HashEmbedder
from core import api
from core.auth import LOCAL_ADMIN
from core.retrieval.registry import query_context
from core.retrieval.registry import retrieve
from core.workspace import Workspace

COMMITTED = ("Ada Lovelace worked with Charles Babbage in London. Babbage designed the Analytical Engine "
             "at Cambridge.")
DOOMED = ("Grace Hopper built the first compiler at Remington Rand in Philadelphia. Hopper later joined "
          "the United States Navy in Arlington. Howard Aiken led the Harvard Mark I project in Boston.")


class BatchFailure(RuntimeError):
    pass


def snapshot(ws: Workspace) -> dict:
    """What a reader sees: counts, graph and chunks, through the same handle the app would use."""
    status = ws.status()
    return {"entities": status["entities"], "chunks": status["chunks"], "processed": status["processed"],
            "graph": set(ws.views.graph.keys()), "chunk_ids": set(ws.records.all_chunk_ids())}


@pytest.fixture()
def ws(tmp_path):
    workspace = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    api.index_text(LOCAL_ADMIN, workspace, "committed.txt", COMMITTED)
    yield workspace
    workspace.close()


def test_a_reader_never_sees_an_uncommitted_or_rolled_back_batch(ws, monkeypatch):
    import core.indexing.batch as batch

    before = snapshot(ws)
    assert before["entities"] > 0 and before["processed"] == 1
    generation = ws.generation()
    ws.views.graph  # the reader's cached views, built before the batch (as a browser session's are)

    inside = threading.Event()
    release = threading.Event()
    seen_by_writer: dict = {}
    original = batch.upsert_graph_vectors

    def pause_then_fail(*args, **kwargs):
        original(*args, **kwargs)
        # the writer's own view of its unit of work: its rows are there (the test is not vacuous)
        seen_by_writer.update(entities=ws.records.count("entities"), chunks=ws.records.count("chunks"),
                              in_unit=ws.records.in_unit_of_work())
        inside.set()
        release.wait(60)
        raise BatchFailure("made to fail after its rows were written")

    monkeypatch.setattr(batch, "upsert_graph_vectors", pause_then_fail)
    outcome: dict = {}

    def writer() -> None:
        try:
            outcome["report"] = api.index_text(LOCAL_ADMIN, ws, "doomed.txt", DOOMED)
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            outcome["error"] = exc

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert inside.wait(120), "the writer never reached its batch"
        assert seen_by_writer["in_unit"] and seen_by_writer["entities"] > before["entities"]
        assert seen_by_writer["chunks"] > before["chunks"]
        during = snapshot(ws)  # the writer holds its uncommitted rows right now
        assert during == before
        for mode in ("naive", "local", "path"):  # the vectors are written already; the rows are not committed
            result = retrieve(query_context(ws, "Who built the first compiler at Remington Rand?"), mode)
            assert set(result.evidence_chunk_ids) <= before["chunk_ids"], mode
            assert not {e.key for e in result.entities} - before["graph"], mode
    finally:
        release.set()
        thread.join(120)
    assert "error" not in outcome, outcome.get("error")
    report = outcome["report"]
    assert report.processed == 0 and len(report.failed) == 1  # the batch failed and was rolled back
    after = snapshot(ws)
    assert after["entities"] == before["entities"] and after["graph"] == before["graph"]
    assert after["chunk_ids"] == before["chunk_ids"]
    assert ws.generation() > generation  # moved by the rollback's bookkeeping: cached views rebuild
    assert ws.records.document(next(d.doc_id for d in ws.records.documents() if d.name == "doomed.txt")
                               ).status == "failed"
    # a second handle (another process's view of the file) sees the same committed state
    other = Workspace(ws.path, embedder=HashEmbedder())
    try:
        assert snapshot(other) == after
    finally:
        other.close()


def test_each_thread_reads_through_its_own_connection(ws):
    mine = ws.records
    seen: dict = {}
    thread = threading.Thread(target=lambda: seen.update(records=ws.records))
    thread.start()
    thread.join()
    assert seen["records"] is not mine and seen["records"].conn is not mine.conn
    assert ws.records is mine  # the same thread keeps its store
