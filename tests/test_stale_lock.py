"""The writer-lock marker (issue 20): it records host, pid and process start time; a marker whose
process is gone (or whose pid was reused by a later process) is cleared on open and on the busy
check, while a live holder's marker always stands."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from core.errors import WorkspaceBusyError
from core.storage.locking import LOCK_INFO, marker_is_stale
from core.workspace import Workspace
from lock_holder import ENV, start_holder


def test_a_sigkilled_writers_marker_is_cleared_on_the_next_open(tmp_path):
    folder = tmp_path / "ws"
    holder = start_holder(folder)
    started = psutil.Process(holder.pid).create_time()
    info = json.loads((folder / LOCK_INFO).read_text(encoding="utf-8"))
    assert info["host"] == socket.gethostname() and info["pid"] == holder.pid
    assert abs(info["started"] - started) < 1.0
    try:
        live = Workspace(folder)  # a live holder: its marker stands, a second writer is refused
        assert live.writer_active()
        with pytest.raises(WorkspaceBusyError, match=rf"pid {holder.pid}"):
            with live.writer():
                pass
        live.close()
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
    assert (folder / LOCK_INFO).exists()  # SIGKILL left the marker behind
    ws = Workspace(folder)
    try:
        assert not (folder / LOCK_INFO).exists()  # cleared on open
        assert not ws.writer_active()
        with ws.writer():  # and the workspace is writable again
            assert json.loads((folder / LOCK_INFO).read_text(encoding="utf-8"))["pid"] == os.getpid()
        assert not (folder / LOCK_INFO).exists()
    finally:
        ws.close()


def test_the_busy_check_clears_a_marker_left_after_the_workspace_was_opened(tmp_path):
    folder = tmp_path / "ws"
    ws = Workspace(folder)  # the app's long-lived handle, opened before the writer started
    try:
        holder = start_holder(folder)
        assert ws.writer_active()
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
        assert (folder / LOCK_INFO).exists()
        assert not ws.writer_active()  # the dead holder is noticed, not reported forever
        assert not (folder / LOCK_INFO).exists()
    finally:
        ws.close()


def _marker(folder: Path, **fields) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    record = {"host": socket.gethostname(), "pid": os.getpid(), "since": time.time(),
              "started": psutil.Process(os.getpid()).create_time()}
    record.update(fields)
    (folder / LOCK_INFO).write_text(json.dumps(record), encoding="utf-8")


def test_a_reused_pid_and_a_missing_process_are_stale_another_hosts_marker_is_not(tmp_path):
    me = psutil.Process(os.getpid()).create_time()
    host = socket.gethostname()
    assert not marker_is_stale({"host": host, "pid": os.getpid(), "started": me})
    assert marker_is_stale({"host": host, "pid": os.getpid(), "started": me - 3600})  # pid reused since
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert marker_is_stale({"host": host, "pid": dead.pid, "started": me})
    assert not marker_is_stale({"host": host + "-elsewhere", "pid": dead.pid, "started": me})

    reused = tmp_path / "reused"
    _marker(reused, started=me - 3600)  # the OS lock is free and the pid belongs to another process now
    Workspace(reused).close()
    assert not (reused / LOCK_INFO).exists()

    elsewhere = tmp_path / "elsewhere"
    _marker(elsewhere, host=host + "-elsewhere")  # cannot be checked from here: believed
    ws = Workspace(elsewhere)
    try:
        assert ws.writer_active() and (elsewhere / LOCK_INFO).exists()
    finally:
        ws.close()
