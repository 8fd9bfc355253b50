"""How one server shares its work among sessions: a bounded pool of work slots.

Every heavy or per-question action of ``core.api`` runs inside a slot: a question (``run_modes``) as
*light* work, an indexing run, an evaluation and a graph drawing of every node as *heavy* work. There
are ``RAGSCOPE_WORK_SLOTS`` slots (default: the machine's CPU count, at least 2). Heavy work may hold
at most all slots but one, so a heavy user — however many indexing jobs or evaluations they start —
never takes the last slot: a question always finds one free, or waits only for another question.
Waiters are served first come, first served (a ticket queue), so a burst of sessions is answered in
order and the number of modes running at once — and the server's memory — stays bounded instead of
every session competing for the same cores.

This module imports nothing from ``core``; ``slots()`` is the process's one pool.
"""
from __future__ import annotations

import os
import threading
from collections import deque
from contextlib import contextmanager
from typing import Iterator, Optional

ENV = "RAGSCOPE_WORK_SLOTS"


class WorkSlots:
    """``size`` slots; heavy work holds at most ``size - 1`` of them; first come, first served."""

    def __init__(self, size: int) -> None:
        self.size = max(int(size), 2)
        self.heavy_limit = self.size - 1
        self._cond = threading.Condition()
        self._busy = 0
        self._heavy = 0
        self._queue: deque[tuple[int, bool]] = deque()  # (ticket, heavy) of the waiters, in arrival order
        self._next = 0

    def _may_start(self, ticket: int, heavy: bool) -> bool:
        if self._busy >= self.size or (heavy and self._heavy >= self.heavy_limit):
            return False
        for waiting, waiting_heavy in self._queue:  # the first waiter that could start goes first
            if waiting == ticket:
                return True
            if not (waiting_heavy and self._heavy >= self.heavy_limit):
                return False
        return True

    @contextmanager
    def slot(self, heavy: bool = False, timeout_s: Optional[float] = None) -> Iterator[None]:
        """Hold one slot for the block (waiting for it in arrival order); ``TimeoutError`` after
        ``timeout_s`` seconds without one."""
        with self._cond:
            ticket = self._next
            self._next += 1
            self._queue.append((ticket, heavy))
            try:
                if not self._cond.wait_for(lambda: self._may_start(ticket, heavy), timeout_s):
                    raise TimeoutError(f"no work slot free after {timeout_s} s ({self.size} slots)")
            finally:
                self._queue.remove((ticket, heavy))
            self._busy += 1
            self._heavy += int(heavy)
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._busy -= 1
                self._heavy -= int(heavy)
                self._cond.notify_all()

    def snapshot(self) -> dict[str, int]:
        """Slots in use (all, heavy), waiters, and the pool's size."""
        with self._cond:
            return {"size": self.size, "busy": self._busy, "heavy": self._heavy, "waiting": len(self._queue)}


class QueriesFirst:
    """One model shared by questions and bulk work (an indexing run's embedding): a question waiting
    for the model goes before the bulk work's next slice. ``question()`` holds the model for a
    question; ``bulk_slice()`` holds it for one slice of bulk work, after any waiting question. A
    question therefore waits for at most the slice running when it arrived, not the whole bulk call
    (measured before: 84.7 s for one question's embedding while the sample corpus was indexed)."""

    def __init__(self) -> None:
        self.model = threading.Lock()
        self._cond = threading.Condition()
        self._waiting = 0

    @contextmanager
    def question(self) -> Iterator[None]:
        with self._cond:
            self._waiting += 1
        try:
            self.model.acquire()
        finally:
            with self._cond:
                self._waiting -= 1
                self._cond.notify_all()
        try:
            yield
        finally:
            self.model.release()

    @contextmanager
    def bulk_slice(self, patience_s: float = 30.0) -> Iterator[None]:
        with self._cond:  # the questions waiting now go first (never longer than ``patience_s``)
            self._cond.wait_for(lambda: self._waiting == 0, patience_s)
        with self.model:
            yield

    def waiting(self) -> int:
        """Questions waiting for the model now."""
        with self._cond:
            return self._waiting


def configured_size(environ: Optional[dict[str, str]] = None) -> int:
    """``RAGSCOPE_WORK_SLOTS`` if set to a whole number >= 2, else the CPU count (at least 2)."""
    raw = (os.environ if environ is None else environ).get(ENV, "").strip()
    if raw.isdigit() and int(raw) >= 2:
        return int(raw)
    return max(os.cpu_count() or 2, 2)


_POOL: Optional[WorkSlots] = None
_POOL_LOCK = threading.Lock()


def slots() -> WorkSlots:
    """The process's pool (sized once, on first use)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = WorkSlots(configured_size())
        return _POOL
