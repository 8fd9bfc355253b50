"""What makes the PostgreSQL store a shared system of record (the common contract of both backends is
in ``test_storage_contract.py``): no SQLite file in the workspace folder, the advisory writer lock
(excludes a second writer, waits, is released when its holder is SIGKILLed, and a killed writer's
open unit of work leaves nothing), the versioned schema migration, clear errors for an unreachable
server, and two CLI processes with different data folders seeing each other's committed writes.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psycopg
import pytest

from conftest import ROOT, HashEmbedder
from postgres_fixture import pg_store, postgres_server  # noqa: F401 - fixtures

from core.errors import CorruptWorkspaceError, WorkspaceBusyError

ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False",
           PYTHONUNBUFFERED="1")


def open_ws(path: Path, spec: str):
    from core.workspace import Workspace

    return Workspace(path, embedder=HashEmbedder(), store=spec)


def test_folder_holds_no_sqlite_file(tmp_path, pg_store):
    from core.annotations import save_marks
    from core.storage.records import CachedReply
    from core.types import Chunk

    ws = open_ws(tmp_path / "ws", pg_store)
    assert ws.backend.name == "postgresql"
    with ws.writer():
        with ws.records.unit_of_work():
            ws.records.insert_document("d1", "d1.txt", "", "h1", "Some text.", 2)
            ws.records.insert_chunks([Chunk("d1-c0", "d1", 0, "Some text.", 2, 0)])
    save_marks(ws, "What text?", {"d1-c0": True})
    cache = ws.open_llm_cache()
    cache.put("key", CachedReply("reply", 1, 1))
    assert cache.flush()
    ws.vectors  # the namespace is recorded in the store; vectors stay in (embedded) ChromaDB
    ws.close()
    files = sorted(p.name for p in (tmp_path / "ws").rglob("*") if p.is_file() and p.parent == tmp_path / "ws")
    assert not [p for p in (tmp_path / "ws").rglob("*.sqlite3") if p.parent == tmp_path / "ws"], files
    assert "write.lock" not in files and "write.lock.json" not in files
    with psycopg.connect(pg_store) as conn:
        assert conn.execute("SELECT count(*) FROM annotations").fetchone()[0] == 1
        assert conn.execute("SELECT value FROM meta WHERE key='namespace'").fetchone()[0].startswith("ws_")


def test_advisory_lock_excludes_a_second_writer(tmp_path, pg_store):
    first, second = open_ws(tmp_path / "a", pg_store), open_ws(tmp_path / "b", pg_store)
    assert not second.writer_active()
    with first.writer():
        assert second.writer_active()
        with pytest.raises(WorkspaceBusyError, match=r"busy \(ragscope writer pid=%d" % os.getpid()):
            with second.writer():
                pass
    assert not second.writer_active()
    with second.writer():  # free again
        assert first.writer_active()

    held = threading.Event()

    def hold_briefly() -> None:
        with first.writer():
            held.set()
            time.sleep(1.5)

    holder = threading.Thread(target=hold_briefly)
    holder.start()
    assert held.wait(30)
    started = time.monotonic()
    with second.writer(wait=True, timeout_s=60):  # waits for the holder instead of failing
        waited = time.monotonic() - started
    holder.join(30)
    assert waited >= 0.5
    first.close()
    second.close()


HOLD_AND_WRITE = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[3])
    from conftest import HashEmbedder
    from core.workspace import Workspace
    ws = Workspace(sys.argv[1], embedder=HashEmbedder(), store=sys.argv[2])
    with ws.writer():
        with ws.records.unit_of_work():
            ws.records.insert_document("killed", "killed.txt", "", "h", "never committed", 2)
            print("held", flush=True)
            time.sleep(600)
""")


@pytest.mark.slow
def test_killed_writer_releases_the_lock_and_leaves_nothing(tmp_path, pg_store):
    child = subprocess.Popen([sys.executable, "-c", HOLD_AND_WRITE, str(tmp_path / "child"), pg_store,
                              str(ROOT / "tests")], cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout.readline().strip() == "held", child.stderr.read()
        ws = open_ws(tmp_path / "parent", pg_store)
        assert ws.writer_active()
        with pytest.raises(WorkspaceBusyError):
            with ws.writer():
                pass
        assert ws.records.documents() == []  # its unit of work is open, not committed
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
        with ws.writer(wait=True, timeout_s=30):  # PostgreSQL ends the dead session and its lock
            assert ws.records.documents() == []
        ws.close()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
        child.stdout.close()
        child.stderr.close()


def test_schema_version_table_and_migration(tmp_path, pg_store):
    from core.storage.schema import SCHEMA_VERSION

    ws = open_ws(tmp_path / "ws", pg_store)
    ws.records.insert_document("d1", "d1.txt", "", "h1", "Text.", 1)
    ws.records.commit()
    ws.close()
    with psycopg.connect(pg_store, autocommit=True) as conn:
        assert conn.execute("SELECT version FROM ragscope_schema").fetchall() == [(SCHEMA_VERSION,)]
        # an older database: a column added after version 1 is missing and no version is recorded
        conn.execute("ALTER TABLE entities DROP COLUMN aliases")
        conn.execute("DELETE FROM ragscope_schema")
    opened = []
    threads = [threading.Thread(target=lambda i=i: opened.append(open_ws(tmp_path / f"p{i}", pg_store)))
               for i in range(3)]  # several processes opening at once do not race the migration
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(opened) == 3
    with psycopg.connect(pg_store) as conn:
        assert conn.execute("SELECT version FROM ragscope_schema").fetchall() == [(SCHEMA_VERSION,)]
        columns = {r[0] for r in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name='entities'")}
        assert "aliases" in columns
        collation = conn.execute("SELECT collation_name FROM information_schema.columns "
                                 "WHERE table_name='entities' AND column_name='entity_key'").fetchone()[0]
        assert collation == "C"  # byte order: ORDER BY and tie-breaks as in SQLite and Python
    assert [d.doc_id for d in opened[0].records.documents()] == ["d1"]
    for ws in opened:
        ws.close()


def test_unreachable_server_is_a_clear_error(tmp_path):
    with pytest.raises(CorruptWorkspaceError, match=r"cannot connect to the PostgreSQL store") as caught:
        open_ws(tmp_path / "ws", "postgresql://someone:s3cret@127.0.0.1:1/nowhere?connect_timeout=2")
    assert "s3cret" not in str(caught.value) and "someone:***@127.0.0.1:1/nowhere" in str(caught.value)
    assert not list((tmp_path / "ws").glob("*.sqlite3"))


def test_store_spec_selects_the_backend(tmp_path, pg_store, monkeypatch):
    from core.storage.registry import backend_name

    assert backend_name("postgresql://u@h/db") == backend_name("postgres://u@h/db") == "postgresql"
    assert backend_name("postgresql+psycopg://u@h/db") == "postgresql" and backend_name("") == "sqlite"
    monkeypatch.setenv("RAGSCOPE_STORE", pg_store)
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "env", embedder=HashEmbedder())
    assert ws.backend.name == "postgresql"
    ws.close()


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=env or ENV, capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.slow
def test_two_cli_processes_share_one_database(tmp_path, pg_store):
    articles = sorted((ROOT / "data" / "samples").glob("*.md"))
    articles = [a for a in articles if a.name.lower() != "readme.md"][:2]
    first, second = tmp_path / "first", tmp_path / "second"
    cli("index", "--quiet", "--store", pg_store, "--workspace", str(first), str(articles[0]))
    status = json.loads(cli("status", "--json", "--store", pg_store, "--workspace", str(second)).stdout)
    assert (status["documents"], status["processed"]) == (1, 1) and status["chunks"] > 0 and status["entities"] > 0
    # the second process writes (store from the environment), the first sees it
    cli("index", "--quiet", "--workspace", str(second), str(articles[1]), env=dict(ENV, RAGSCOPE_STORE=pg_store))
    again = json.loads(cli("status", "--json", "--store", pg_store, "--workspace", str(first)).stdout)
    assert (again["documents"], again["processed"]) == (2, 2) and again["chunks"] > status["chunks"]
    for folder in (first, second):
        assert not list(folder.glob("*.sqlite3"))
