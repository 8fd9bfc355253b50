"""The parsing worker: untrusted files are parsed in a separate process under hard limits.

The worker is a fresh interpreter (``python -m core.parsing.worker``) that imports only the parsers,
not the app that started it. It sets, on itself:

* ``RLIMIT_AS`` to ``parse_memory_mb`` (an allocation past it fails with ``MemoryError``), once;
* ``RLIMIT_CPU``'s soft limit to the CPU it has used so far plus ``parse_cpu_seconds``, before each
  file (the kernel stops the process with ``SIGXCPU`` past it);
* ``RLIMIT_CORE`` to 0 (a killed worker leaves no core file).

The parent waits at most ``parse_timeout_s`` for each file and kills the worker past it, or as soon as
the indexing run is cancelled (``core.types.checkpoint`` while it waits). A worker
that died or was killed is replaced for the next file, so a hostile file fails alone. Requests go
to the worker pickled (the parent is trusted); results come back as JSON, so a worker that a hostile
file subverted still cannot hand the parent a pickle. One worker serves the whole process, one file
at a time (callers queue on a lock), which also bounds the memory parsing takes to one worker's.
The pipes are handed over with ``pass_fds``: POSIX systems only (Linux, macOS), as is ``resource``.

``call_isolated(func, args, limits)`` runs any function (by reference, importable in the worker) under
the same limits and returns its JSON-able value: the LightRAG importer reads GraphML and JSON files
this way (``core.importers.lightrag.reader.read_index_isolated``), so a file that expands in parsing
meets the worker's memory and CPU limits, not the app's process.
"""
from __future__ import annotations

import atexit
import json
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Callable, Iterator, NoReturn, Optional

from core.parsing.limits import LimitExceeded, ParseLimits, number
from core.parsing.registry import Loader
from core.parsing.text import Result, short
from core.types import Cancelled, LoadFailure, SourceDocument, checkpoint

ROOT = Path(__file__).resolve().parent.parent.parent
START_TIMEOUT_S = 60.0  # a loaded machine can take seconds to start an interpreter
POLL_S = 0.05


# ----------------------------------------------------------------------------- inside the worker

def _set_limits(memory_mb: int) -> None:
    try:
        import resource
    except ImportError:  # not on Windows
        return
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    memory = memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def _limit_cpu(seconds: int) -> None:
    try:
        import resource
    except ImportError:
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(usage.ru_utime + usage.ru_stime) + max(1, int(seconds))
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.getrlimit(resource.RLIMIT_CPU)[1]))


def _encode(result: Result) -> bytes:
    docs, failures = result
    return json.dumps({"status": "ok",
                       "documents": [[d.name, d.text, d.doc_id, d.source, list(d.page_starts), list(d.section_starts),
                                      d.by_line] for d in docs],
                       "failures": [[f.name, f.reason] for f in failures]}).encode("utf-8")


def _serve(inbox: Connection, outbox: Connection) -> None:
    while True:
        try:
            request = inbox.recv_bytes()
        except (EOFError, OSError):  # the parent went away
            return
        try:
            job = pickle.loads(request)
            call = job[0] == "call"  # ("call", func, args, limits) or (loader, name, data, limits)
            limits = job[-1]
        except Exception as exc:  # noqa: BLE001 - e.g. the loader's module does not import here
            outbox.send_bytes(json.dumps({"status": "error", "message": f"the parsing worker could not "
                                          f"load the parser: {short(exc)}"}).encode("utf-8"))
            continue
        _limit_cpu(limits.parse_cpu_seconds)
        try:
            if call:
                reply = json.dumps({"status": "ok", "value": job[1](*job[2])}).encode("utf-8")
            else:
                reply = _encode(job[0](job[1], job[2], limits))
        except MemoryError:
            del request, job
            outbox.send_bytes(b'{"status": "memory"}')
            return  # a fresh worker for the next file: this one's heap may be in pieces
        except LimitExceeded as exc:
            reply = json.dumps({"status": "limit", "message": str(exc)}).encode("utf-8")
        except Exception as exc:  # noqa: BLE001 - reported as the file's failure
            reply = json.dumps({"status": "error", "message": str(exc)[:2000] if call else short(exc)}).encode("utf-8")
        outbox.send_bytes(reply)


def main(argv: Optional[list[str]] = None) -> None:
    """Worker entry point: ``python -m core.parsing.worker READ_FD WRITE_FD MEMORY_MB``."""
    read_fd, write_fd, memory_mb = (int(arg) for arg in (argv or sys.argv[1:])[:3])
    inbox, outbox = Connection(read_fd, writable=False), Connection(write_fd, readable=False)
    extra_path = inbox.recv()  # the parent's import path: its loaders must import here too
    sys.path.extend(p for p in extra_path if p not in sys.path)
    _set_limits(memory_mb)
    outbox.send_bytes(b'{"status": "ready"}')
    _serve(inbox, outbox)


# ----------------------------------------------------------------------------- in the parent

class WorkerFailed(Exception):
    """The worker did not answer for a file; the message is the file's failure reason."""


class _Worker:
    """One worker process and its two pipes."""

    def __init__(self, memory_mb: int) -> None:
        self.memory_mb = memory_mb
        child_in, self._to_child = os.pipe()
        self._from_child, child_out = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "core.parsing.worker", str(child_in), str(child_out), str(memory_mb)],
                pass_fds=(child_in, child_out), cwd=str(ROOT), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)
        finally:
            os.close(child_in)
            os.close(child_out)
        self.outbox = Connection(self._to_child, readable=False)
        self.inbox = Connection(self._from_child, writable=False)
        self.outbox.send([os.path.abspath(p) for p in sys.path])
        if self._reply(START_TIMEOUT_S).get("status") != "ready":
            self.close()
            raise WorkerFailed("the parsing worker did not start")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _reply(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while not self.inbox.poll(POLL_S):
            checkpoint("parsing")  # a Cancel of the run: the caller stops the worker (``parse_isolated``)
            if not self.alive() and not self.inbox.poll(0):
                return {"status": "died"}
            if time.monotonic() > deadline:
                return {"status": "timeout"}
        try:
            return json.loads(self.inbox.recv_bytes())
        except (EOFError, OSError, ValueError):
            return {"status": "died"}

    def _ask(self, request: tuple, limits: ParseLimits) -> dict[str, Any]:
        """Send one request; the reply when it is "ok", "limit" or "error", else ``WorkerFailed``."""
        try:
            self.outbox.send(request)
        except (BrokenPipeError, OSError):
            self._died(limits)
        reply = self._reply(limits.parse_timeout_s)
        status = reply.get("status")
        if status in ("ok", "limit", "error"):
            return reply
        if status == "timeout":
            self.close()
            raise WorkerFailed(f"parsing took longer than the {number(limits.parse_timeout_s)}-second limit; "
                               "raise `parse_timeout_s` in Settings if the file is genuine")
        if status == "memory":
            self.close()
            raise WorkerFailed(_memory_message(limits))
        self._died(limits)
        raise AssertionError("unreachable")  # _died always raises

    def parse(self, loader: Loader, name: str, data: bytes, limits: ParseLimits) -> Result:
        reply = self._ask((loader, name, data, limits), limits)
        status = reply.get("status")
        if status == "ok":
            docs = [SourceDocument(name=n, text=t, doc_id=i, source=s, page_starts=tuple(int(p) for p in pages),
                                   section_starts=tuple(int(h) for h in heads), by_line=bool(by_line))
                    for n, t, i, s, pages, heads, by_line in reply["documents"]]
            return docs, [LoadFailure(n, r) for n, r in reply["failures"]]
        raise WorkerFailed(reply["message"] if status == "limit" else f"could not read the file: {reply['message']}")

    def _died(self, limits: ParseLimits) -> NoReturn:
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # its pipe closed but it lingers: stop it
            self.proc.kill()
            code = self.proc.wait(timeout=10)
        self.close()
        if code in (-getattr(signal, "SIGXCPU", 24), -signal.SIGKILL):
            raise WorkerFailed(f"parsing used more than the {number(limits.parse_cpu_seconds)}-second CPU limit; "
                               "raise `parse_cpu_seconds` in Settings if the file is genuine")
        raise WorkerFailed(f"the parser stopped (exit status {code}), most likely out of memory; "
                           + _memory_message(limits).split("; ", 1)[1])

    def close(self) -> None:
        if self.alive():
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for conn in (self.outbox, self.inbox):
            conn.close()


def _memory_message(limits: ParseLimits) -> str:
    return (f"parsing needed more than the {number(limits.parse_memory_mb)} MB memory limit; "
            "raise `parse_memory_mb` in Settings if the file is genuine")


_LOCK = threading.Lock()
_CURRENT: list[_Worker] = []  # zero or one worker, reused from file to file


def _current(limits: ParseLimits) -> _Worker:
    """The process's worker (started, or replaced when it died or its memory limit changed); under _LOCK."""
    worker = _CURRENT[0] if _CURRENT else None
    if worker is not None and (not worker.alive() or worker.memory_mb != limits.parse_memory_mb):
        worker.close()
        _CURRENT.clear()
        worker = None
    if worker is None:
        worker = _Worker(limits.parse_memory_mb)
        _CURRENT.append(worker)
    return worker


@contextmanager
def _turn() -> Iterator[None]:
    """The worker, once the file before is done: a Cancel of the run is honoured while waiting for it
    (another run's hostile file may hold the worker for up to its ``parse_timeout_s``)."""
    while not _LOCK.acquire(timeout=POLL_S):
        checkpoint("parsing")
    try:
        yield
    finally:
        _LOCK.release()


def _dropped(worker: Optional[_Worker], stop: bool = False) -> None:
    if worker is not None and stop:
        worker.close()
    if worker is not None and not worker.alive():
        _CURRENT.clear()


def parse_isolated(loader: Loader, name: str, data: bytes, limits: ParseLimits) -> Result:
    """Run ``loader(name, data, limits)`` in the worker; a file the worker fails on (limit, crash,
    timeout) becomes one ``LoadFailure`` and the next file gets a fresh worker."""
    with _turn():
        worker = None
        try:
            worker = _current(limits)
            return worker.parse(loader, name, data, limits)
        except Cancelled:  # the run was cancelled while this file was parsed: the worker is stopped mid-file
            _dropped(worker, stop=True)
            raise
        except WorkerFailed as exc:
            _dropped(worker)
            return [], [LoadFailure(name, str(exc))]


def call_isolated(func: Callable[..., Any], args: tuple, limits: ParseLimits) -> Any:
    """``func(*args)`` in the worker under ``limits``; its value must be JSON-able (it comes back as
    JSON). Raises ``WorkerFailed`` with the limit's message (memory, CPU, time) or the function's own
    error message."""
    with _turn():
        worker = None
        try:
            worker = _current(limits)
            reply = worker._ask(("call", func, args, limits), limits)
        except Cancelled:
            _dropped(worker, stop=True)
            raise
        except WorkerFailed:
            _dropped(worker)
            raise
    if reply.get("status") != "ok":
        raise WorkerFailed(reply["message"])
    return reply["value"]


def shutdown() -> None:
    """Stop the worker (it also stops by itself when this process exits: its pipe closes)."""
    with _LOCK:
        for worker in _CURRENT:
            worker.close()
        _CURRENT.clear()


atexit.register(shutdown)

if __name__ == "__main__":
    main()
