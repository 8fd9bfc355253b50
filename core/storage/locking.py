"""The workspace writer lock of the SQLite backend: an OS file lock (released by the OS when its holder
dies) plus a marker file, ``write.lock.json``, saying who holds it: host name, pid, the process's
start time (psutil) and since when.

The marker outlives a SIGKILLed holder, so it is checked before it is believed: a marker written on
this host whose process is gone, or whose pid now belongs to a process started at another time (the
pid was reused), is stale and is removed. A marker from another host is believed (its process cannot
be checked from here)."""
from __future__ import annotations

import json
import os
import socket
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

import psutil
from filelock import FileLock, Timeout

from core.errors import WorkspaceBusyError

LOCK_FILE = "write.lock"
LOCK_INFO = "write.lock.json"
START_TIME_SLACK_S = 1.0  # start times are compared with this tolerance (clock-tick rounding)


def process_start_time(pid: int) -> Optional[float]:
    """When process ``pid`` started (seconds since the epoch), None when there is no such process."""
    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, ValueError):
        return None


def holder_record() -> dict[str, Any]:
    """What this process writes into the marker."""
    pid = os.getpid()
    return {"host": socket.gethostname(), "pid": pid, "started": process_start_time(pid), "since": time.time()}


def read_marker(folder: Path) -> Optional[dict[str, Any]]:
    try:
        info = json.loads((folder / LOCK_INFO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def marker_is_stale(info: dict[str, Any]) -> bool:
    """True when the marker names a process of this host that is gone (or a reused pid)."""
    if info.get("host") != socket.gethostname():
        return False  # another machine's process (or an old marker without a host): cannot tell
    try:
        pid = int(info["pid"])
    except (KeyError, TypeError, ValueError):
        return True
    started = process_start_time(pid)
    if started is None:
        return True
    recorded = info.get("started")
    return recorded is not None and abs(float(recorded) - started) > START_TIME_SLACK_S


def clear_stale_marker(folder: Path) -> bool:
    """Remove a stale marker; True when one was removed. A marker whose holder still holds the OS
    lock is never removed, whatever it says."""
    info = read_marker(folder)
    if info is None or not marker_is_stale(info):
        return False
    probe = FileLock(str(folder / LOCK_FILE))
    try:
        probe.acquire(timeout=0)
    except Timeout:
        return False  # someone holds the lock: the marker is being rewritten by a live writer
    try:
        (folder / LOCK_INFO).unlink(missing_ok=True)
    finally:
        probe.release()
    return True


def writer_active(folder: Path) -> bool:
    """True while a live process holds the write lock (a stale marker is cleared and not counted)."""
    if not (folder / LOCK_INFO).exists():
        return False
    clear_stale_marker(folder)
    return (folder / LOCK_INFO).exists()


def busy_message(folder: Path, name: str) -> str:
    info = read_marker(folder) or {}
    try:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(info["since"])))
        host = f" on host {info['host']}" if info.get("host") else ""
        return (f"workspace busy (pid {info['pid']}, since {since}): another indexing run is writing to "
                f"'{name}'{host}")
    except (TypeError, KeyError, ValueError, OSError):
        return f"workspace busy: another process is writing to '{name}'"


@contextmanager
def hold_writer_lock(folder: Path, name: str, wait: bool = False, timeout_s: float = 3600.0) -> Iterator[None]:
    """Hold the lock; raise WorkspaceBusyError (or wait) when another live writer holds it."""
    lock = FileLock(str(folder / LOCK_FILE))
    try:
        lock.acquire(timeout=timeout_s if wait else 0)
    except Timeout:
        raise WorkspaceBusyError(busy_message(folder, name)) from None
    info = folder / LOCK_INFO
    try:
        info.write_text(json.dumps(holder_record()), encoding="utf-8")  # replaces a dead holder's marker
        yield
    finally:
        info.unlink(missing_ok=True)
        lock.release()
