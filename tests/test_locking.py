"""One writer at a time, across processes: a second writer is told who holds the workspace (or waits
with --wait), a lock left by a SIGKILLed process is recovered, and readers keep working while an
indexing subprocess is inside its write transaction."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import ROOT
from lock_holder import ENV, start_holder

# Runs the real CLI, but the first vector upsert (inside the batch's SQLite write transaction)
# announces itself in argv[1] and then waits until the file argv[2] exists.
PAUSING_CLI = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    import core.storage.vectors as vectors
    marker, release = Path(sys.argv[1]), Path(sys.argv[2])
    original = vectors.VectorStore.upsert
    def paused_upsert(self, *args, **kwargs):
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            deadline = time.time() + 600
            while not release.exists() and time.time() < deadline:
                time.sleep(0.05)
        return original(self, *args, **kwargs)
    vectors.VectorStore.upsert = paused_upsert
    from core.cli.main import main
    sys.exit(main(sys.argv[3:]))
""")


def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=ENV, capture_output=True,
                          text=True, timeout=timeout)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)


def wait_for(predicate, timeout: float, what: str, proc: subprocess.Popen | None = None) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"process ended before {what}: {proc.stderr.read()[-3000:]}")
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture()
def small_doc(tmp_path) -> Path:
    doc = tmp_path / "in" / "harbour.txt"
    doc.parent.mkdir()
    doc.write_text("The harbourmaster Tobias Wren inspected the breakwater at Port Sallow in 2021. "
                   "Tobias Wren reported to Velmora County Council that repairs were needed.\n", encoding="utf-8")
    return doc


def test_a_second_writer_gets_workspace_busy_with_pid_and_since(tmp_path, small_doc):
    ws = tmp_path / "ws"
    holder = start_holder(ws)
    try:
        busy = cli("index", "--quiet", "--workspace", str(ws), str(small_doc), timeout=300)
        assert busy.returncode == 2, busy.stderr[-2000:]
        match = re.search(r"workspace busy \(pid (\d+), since (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\)", busy.stderr)
        assert match, busy.stderr[-2000:]
        assert int(match.group(1)) == holder.pid
        assert "Traceback" not in busy.stderr
        # other writing commands are refused the same way
        delete = cli("delete", "--workspace", str(ws), "doc-none", timeout=300)
        assert delete.returncode == 2 and f"pid {holder.pid}" in delete.stderr
    finally:
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"
        stop(holder)
    # the refused run registered nothing
    status = json.loads(cli("status", "--workspace", str(ws), "--json", timeout=300).stdout)
    assert status["documents"] == 0


@pytest.mark.slow
def test_wait_blocks_until_the_first_writer_finishes(tmp_path, small_doc):
    ws = tmp_path / "ws"
    holder = start_holder(ws)
    waiter = subprocess.Popen([sys.executable, "-m", "core", "index", "--quiet", "--wait", "--workspace", str(ws),
                               str(small_doc)], cwd=ROOT, env=ENV, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    try:
        time.sleep(4.0)
        assert waiter.poll() is None, "--wait returned while another writer held the lock: " + waiter.stderr.read()
        released_at = time.time()
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"
        out, err = waiter.communicate(timeout=600)
        assert waiter.returncode == 0, err[-2000:]
        assert "1 new document(s)" in err and "1 indexed" in err
    finally:
        stop(holder)
        stop(waiter)
    docs = json.loads(cli("docs", "--workspace", str(ws), "--json").stdout)
    assert [(d["name"], d["status"]) for d in docs] == [("harbour.txt", "processed")]
    from core.workspace import Workspace

    reader = Workspace(ws)
    try:  # the waiting run registered its document only after the first writer let go
        assert reader.store.documents()[0].created_at >= released_at - 0.5
    finally:
        reader.close()


@pytest.mark.slow
def test_a_lock_left_by_a_killed_process_is_recovered(tmp_path, small_doc):
    from core.workspace import LOCK_FILE, LOCK_INFO

    ws = tmp_path / "ws"
    holder = start_holder(ws)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=30)
    assert holder.returncode == -signal.SIGKILL
    # the killed writer left its lock file and its (now stale) pid record behind
    assert (ws / LOCK_FILE).exists()
    assert json.loads((ws / LOCK_INFO).read_text(encoding="utf-8"))["pid"] == holder.pid
    run = cli("index", "--quiet", "--workspace", str(ws), str(small_doc))
    assert run.returncode == 0, run.stderr[-2000:]
    assert "1 indexed" in run.stderr
    assert not (ws / LOCK_INFO).exists()  # a clean exit removes the pid record
    status = json.loads(cli("status", "--workspace", str(ws), "--json").stdout)
    assert status["processed"] == 1 and status["chunks"] == 1


@pytest.mark.slow
def test_readers_work_while_an_indexing_process_is_writing(sample_ws_copy, tmp_path, small_doc):
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.errors import WorkspaceBusyError
    from core.workspace import Workspace

    path = sample_ws_copy.path
    before = sample_ws_copy.status()
    sample_ws_copy.close()
    marker, release = tmp_path / "in-transaction", tmp_path / "release"
    writer = subprocess.Popen([sys.executable, "-c", PAUSING_CLI, str(marker), str(release), "index", "--quiet",
                               "--workspace", str(path), str(small_doc)], cwd=ROOT, env=ENV, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(marker.exists, 600, "the indexer to enter its write transaction", writer)
        assert int(marker.read_text()) == writer.pid
        # CLI reader in another process: not blocked (a blocked open would fail after SQLite's 30 s
        # busy timeout), and it sees the last committed state
        status_proc = cli("status", "--workspace", str(path), "--json", timeout=300)
        assert status_proc.returncode == 0, status_proc.stderr[-2000:]
        status = json.loads(status_proc.stdout)
        assert status["documents"] == before["documents"] + 1  # registered (committed) ...
        assert status["processed"] == before["processed"]  # ... but not yet indexed
        assert status["chunks"] == before["chunks"] and status["entities"] == before["entities"]
        # in-process reader: open the workspace, browse it and run a naive query
        started = time.time()
        reader = Workspace(path)
        assert time.time() - started < 20, "opening the workspace waited for the writer"
        try:
            assert len(reader.documents_table()) == before["documents"] + 1
            assert reader.knowledge_graph().number_of_nodes() == before["entities"]
            results = run_modes(LOCAL_ADMIN, reader, "Who inspected the breakwater at Port Sallow?", ["naive"])
            assert results["naive"].chunks, "naive query returned nothing during indexing"
            assert all(c.doc_name != "harbour.txt" for c in results["naive"].chunks)
            # while the indexer writes, this reader cannot become a writer
            with pytest.raises(WorkspaceBusyError, match=rf"pid {writer.pid}"):
                with reader.writer():
                    pass
        finally:
            reader.close()
        assert writer.poll() is None  # still paused inside its transaction
    finally:
        release.write_text("go")
    out, err = writer.communicate(timeout=600)
    assert writer.returncode == 0, err[-2000:]
    after = json.loads(cli("status", "--workspace", str(path), "--json").stdout)
    assert after["processed"] == before["processed"] + 1 and after["chunks"] == before["chunks"] + 1
