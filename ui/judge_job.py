"""A judge run (``core.api.run_judge``) on a background thread, for the Evaluate page.

The page keeps the job in the session and polls ``snapshot()``; its Cancel button calls ``cancel()``,
which sets the LLM client's cancel event: calls in flight finish (and are cached), no new call starts,
and the job ends as 'cancelled' with the questions finished so far. Running the same configuration
again resumes: every call already answered is a cache hit. This module never calls Streamlit.
"""
from __future__ import annotations

import threading
import time
import traceback
from typing import TYPE_CHECKING, Any, Optional, Sequence

from core import api
from core.auth import LOCAL_ADMIN, Principal
from core.types import ProgressEvent

if TYPE_CHECKING:
    from core.api import Workspace


class JudgeJob:
    """Runs one judge protocol on a daemon thread; thread-safe snapshots for the page."""

    def __init__(self, ws: "Workspace", questions: Sequence[Any], modes: Sequence[str], chat: Any,
                 cancel_event: threading.Event, estimate: Optional[dict[str, Any]] = None,
                 principal: Principal = LOCAL_ADMIN, **options: Any) -> None:
        self.ws = ws
        self.principal = principal  # who started the run: it runs as that caller (core.api)
        self.questions = list(questions)
        self.modes = list(modes)
        self.chat = chat
        self.cancel_event = cancel_event
        self.options = options
        self.estimate = estimate  # shown before the run; kept with the report
        self.state = "new"  # new → running → done | cancelled | error
        self.report: Any = None
        self.error: Optional[BaseException] = None
        self.error_traceback = ""
        self.started_at = 0.0
        self._event = ProgressEvent("judge", 0, 0, "starting…")
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="ragscope-judge", daemon=True)

    def start(self) -> "JudgeJob":
        self.started_at = time.perf_counter()
        self.state = "running"
        self._thread.start()
        return self

    def cancel(self) -> None:
        self.cancel_event.set()

    @property
    def running(self) -> bool:
        return self.state in ("new", "running")

    def join(self, timeout: Optional[float] = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def progress(self, event: ProgressEvent) -> None:
        with self._lock:
            self._event = event

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            event = self._event
        return {"state": self.state, "done": event.done, "total": event.total, "message": event.message,
                "cancelling": self.cancel_event.is_set() and self.running,
                "seconds": time.perf_counter() - self.started_at}

    def _run(self) -> None:
        state = "done"
        try:
            self.report = api.run_judge(self.principal, self.ws, self.questions, self.modes, self.chat, progress=self.progress,
                                    **self.options)
            self.report.estimate = self.estimate
            if self.report.cancelled:
                state = "cancelled"
        except Exception as exc:  # noqa: BLE001 - shown on the page by the script thread
            state, self.error, self.error_traceback = "error", exc, traceback.format_exc()
        finally:
            with self._lock:
                self.state = state
