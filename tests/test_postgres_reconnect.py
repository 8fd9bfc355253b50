"""A PostgreSQL store survives a server restart: the throw-away cluster of ``scripts/start-postgres.sh``
is restarted in the middle of a test (every client session is dropped). The next read and the next
write work on new connections; a write in flight fails with a clear ``StoreConnectionError`` and loses
nothing (the server rolled it back, what was committed is all there); a writer whose lock session
died stops before it writes unlocked; the LLM cache and the annotations reconnect too.

The cluster is this module's own (restarting the session's shared one would break other tests)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import HashEmbedder
from postgres_fixture import SCRIPT, create_database, require_or_skip

from core.types import Chunk


def _script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, RAGSCOPE_PG_FSYNC="off"))


@pytest.fixture(scope="module")
def cluster():
    """(folder, admin DSN) of a cluster this module may restart."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        require_or_skip("postgres", "the PostgreSQL driver is not installed (pip install -r requirements.txt)")
    folder = tempfile.mkdtemp(prefix="ragscope-pg-restart-", dir="/tmp")
    done = _script("start", folder)
    if done.returncode != 0 or not done.stdout.strip():
        _script("stop", folder)
        shutil.rmtree(folder, ignore_errors=True)
        require_or_skip("postgres", f"PostgreSQL could not be started: {done.stderr.strip()[-1500:]}")
    try:
        yield folder, done.stdout.strip().splitlines()[-1]
    finally:
        _script("stop", folder)


def restart(cluster) -> None:
    done = _script("restart", cluster[0])
    assert done.returncode == 0, done.stderr


def add_document(records, doc_id: str) -> None:
    records.insert_document(doc_id, f"{doc_id}.txt", "test", "hash-" + doc_id, f"Text of {doc_id}.", 3)
    records.insert_chunks([Chunk(f"{doc_id}-c0", doc_id, 0, f"Text of {doc_id}.", 3, 0)])


def doc_ids(records) -> list[str]:
    return [d.doc_id for d in records.documents()]


@pytest.fixture()
def ws(cluster, tmp_path):
    from core.workspace import Workspace

    workspace = Workspace(tmp_path / "ws", embedder=HashEmbedder(), store=create_database(cluster[1]))
    yield workspace
    workspace.close()


def test_reads_and_writes_work_after_a_restart(cluster, ws):
    from core.annotations import annotations, save_marks
    from core.storage.records import CachedReply

    with ws.writer():
        with ws.records.unit_of_work():
            add_document(ws.records, "d1")
    save_marks(ws, "What text?", {"d1-c0": True})
    cache = ws.open_llm_cache()
    cache.put("k1", CachedReply("one", 1, 1))
    connection = ws.records.db
    restart(cluster)
    assert doc_ids(ws.records) == ["d1"]  # the next read: on a new connection
    assert connection.reconnects == 1
    assert ws.writer_active() is False  # the lock probe reconnects too
    with ws.writer():  # the next write
        with ws.records.unit_of_work():
            add_document(ws.records, "d2")
        ws.records.set_meta("after", "restart")  # a single write outside a unit of work
        ws.records.commit()
    assert doc_ids(ws.records) == ["d1", "d2"] and ws.records.get_meta("after") == "restart"
    assert [q.question for q in annotations(ws)] == ["What text?"]  # annotation connections are per call
    save_marks(ws, "Second?", {"d2-c0": False})
    cache.put("k2", CachedReply("two", 2, 2))  # the cache's own connection was dropped as well
    assert cache.flush()
    reader = ws.open_llm_cache()
    assert reader.get("k1") == CachedReply("one", 1, 1) and reader.get("k2") == CachedReply("two", 2, 2)


def test_a_write_in_flight_fails_clearly_and_loses_nothing(cluster, ws):
    from core.storage.postgres_connection import StoreConnectionError

    with ws.records.unit_of_work():
        add_document(ws.records, "d1")
    records = ws.records
    with pytest.raises(StoreConnectionError, match="lost during a write.*nothing of it was written"):
        with records.unit_of_work():
            add_document(records, "d2")
            restart(cluster)
            add_document(records, "d3")  # the server is back, but this unit of work is gone
    assert not records.in_unit_of_work()
    assert doc_ids(records) == ["d1"]  # committed: kept; the unit in flight: nothing of it
    assert records.chunks_by_id(["d2-c0", "d3-c0"]) == {}
    with records.unit_of_work():  # and the store is usable again
        add_document(records, "d2")
    assert doc_ids(records) == ["d1", "d2"]


def test_a_lost_connection_refuses_the_rest_of_its_unit_of_work(cluster, ws):
    """A caller that swallows the error inside the unit of work cannot write the rest of it unlocked
    from the transaction on a new connection (half a batch)."""
    from core.storage.postgres_connection import StoreConnectionError

    records = ws.records
    with pytest.raises(StoreConnectionError, match="roll it back"):
        with records.unit_of_work():
            add_document(records, "d1")
            restart(cluster)
            with pytest.raises(StoreConnectionError, match="lost during a write"):
                add_document(records, "d2")
            records.set_meta("half", "written")  # refused: the unit of work is gone
    assert doc_ids(records) == [] and records.get_meta("half") == ""


def test_a_writer_whose_lock_session_died_stops(cluster, ws, tmp_path):
    from core.storage.postgres_connection import StoreConnectionError
    from core.workspace import Workspace

    with ws.writer():
        with ws.records.unit_of_work():
            add_document(ws.records, "d1")
        restart(cluster)  # the advisory lock went with its session: another writer could take it now
        with pytest.raises(StoreConnectionError, match="writer lock"):
            with ws.records.unit_of_work():
                add_document(ws.records, "d2")
        other = Workspace(tmp_path / "other", embedder=HashEmbedder(), store=ws.backend.dsn)
        try:
            with other.writer():  # the lock is free again: a second writer gets it
                pass
        finally:
            other.close()
    assert doc_ids(ws.records) == ["d1"]
    with ws.writer():  # a new writer session works
        with ws.records.unit_of_work():
            add_document(ws.records, "d2")
    assert doc_ids(ws.records) == ["d1", "d2"]


def test_a_server_that_stays_down_is_a_clear_error(cluster, tmp_path):
    from core.storage.postgres_connection import StoreConnectionError
    from core.workspace import Workspace

    folder = Path(tempfile.mkdtemp(prefix="ragscope-pg-down-", dir="/tmp"))
    done = _script("start", str(folder))
    assert done.returncode == 0, done.stderr
    try:
        ws = Workspace(tmp_path / "ws", embedder=HashEmbedder(), store=done.stdout.strip().splitlines()[-1])
        with ws.records.unit_of_work():
            add_document(ws.records, "d1")
        _script("stop", str(folder))
        with pytest.raises(StoreConnectionError, match="cannot be reached.*server runs"):
            ws.records.documents()
        ws.close()
    finally:
        _script("stop", str(folder))
