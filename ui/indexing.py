"""Indexing jobs of the Documents page, run on a background thread.

The page starts an ``IndexJob`` (a list of indexing calls, e.g. one per uploaded file), keeps it in
the session and polls ``snapshot()`` to draw progress; its Cancel button calls ``cancel()``, which
sets the LLM client's cancel event: calls in flight finish (and are cached), no new call starts,
the unfinished documents stay 'pending' and the job ends as 'cancelled' (see ``core.types.Cancelled``).
Without an LLM the same event stops the job between batches and between calls.

A running job is also registered per workspace path (``running_job_on``): after a reload (a new
browser session) the Documents page reattaches to it instead of losing its progress and Cancel button.

This module never calls Streamlit (``growth_figure`` only builds a plotly figure): Streamlit
elements belong to the script thread, so the job only records events, counters and growth points,
and the page renders them.
"""
from __future__ import annotations

import threading
import time
import traceback
from typing import TYPE_CHECKING, Any, Callable, Optional

import plotly.graph_objects as go

from core import api
from core.api import IndexReport
from core.auth import LOCAL_ADMIN, Principal
from core.types import Cancelled, ProgressEvent
from ui.own_writes import note_own_write

if TYPE_CHECKING:
    from core.api import Workspace

STEPS = {"load": "Load models", "register": "Register documents", "index": "Documents", "extract": "Extract (spaCy / LLM)", "merge": "Merge entities and relations",
         "tree": "Summary tree", "embed": "Embed and store vectors", "repair": "Repair vectors"}
IndexCall = Callable[..., IndexReport]  # call(progress, *, report, llm, cancel) -> IndexReport
_ACTIVE: dict[str, int] = {}  # workspace path -> indexing jobs of this process running on it
_ACTIVE_LOCK = threading.Lock()
STATUS_EVERY_S = 2.0  # the job re-reads the workspace counters at most this often between documents


_RUNNING: dict[str, "IndexJob"] = {}  # workspace path -> the job of this process running on it (for a reload)


def running_job_on(path: str) -> Optional["IndexJob"]:
    """The job this process is running on the workspace at ``path``, if any: a reloaded page (a new
    browser session) reattaches to it and shows its progress and Cancel button."""
    with _ACTIVE_LOCK:
        job = _RUNNING.get(str(path))
    return job if job is not None and job.running else None


def active_paths() -> set[str]:
    """Workspaces this process is indexing right now (``ui.state`` never reopens their vectors)."""
    with _ACTIVE_LOCK:
        return {path for path, n in _ACTIVE.items() if n > 0}


def snapshot_point(status: dict[str, Any]) -> dict[str, int]:
    """The numbers of one point of the graph-growth chart, from ``Workspace.status()``."""
    return {"documents": int(status["processed"]), "chunks": int(status["chunks"]),
            "entities": int(status["entities"]), "relations": int(status["relations"]),
            "summaries": int(status["tree_nodes"])}


class IndexJob:
    """Runs indexing calls one after the other on a daemon thread; thread-safe snapshots for the page."""

    def __init__(self, ws: "Workspace", calls: list[IndexCall], what: str, llm: Any = None,
                 cancel_event: Optional[threading.Event] = None, points: Optional[list[dict[str, int]]] = None,
                 principal: Principal = LOCAL_ADMIN) -> None:
        self.ws = ws
        self.principal = principal  # who started the job: its counters are read as that caller
        self.calls = list(calls)
        self.what = what
        self.llm = llm
        self.cancel_event = cancel_event or getattr(llm, "cancel_event", None) or threading.Event()
        self.state = "new"  # new → running → done | cancelled | error
        self.error: Optional[BaseException] = None
        self.error_traceback = ""
        self.summary: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._events: dict[str, ProgressEvent] = {}
        self._calls_finished = 0
        self._docs_before = 0  # documents indexed by the finished calls
        self._call_done = 0
        self._overall: Optional[ProgressEvent] = None
        self._points = list(points or [])
        self._status: dict[str, Any] = {}
        self._documents: Optional[list[dict[str, Any]]] = None  # the status table's rows, read with the status
        self._generation: Optional[int] = None  # the workspace generation those rows were read at
        self._status_at = 0.0
        self._thread = threading.Thread(target=self._run, name="ragscope-index", daemon=True)
        self.started_at = 0.0
        self._key = str(getattr(ws, "path", id(ws)))  # the workspace's entry in the active-jobs registry

    # --- control (script thread) -------------------------------------------------------------
    def start(self) -> "IndexJob":
        self.started_at = time.perf_counter()
        self.state = "running"
        with _ACTIVE_LOCK:
            _ACTIVE[self._key] = _ACTIVE.get(self._key, 0) + 1
            _RUNNING[self._key] = self
        self._record_status()
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Ask the job to stop at the next safe point (see the module docstring)."""
        self.cancel_event.set()

    @property
    def cancelling(self) -> bool:
        return self.cancel_event.is_set() and self.running

    @property
    def running(self) -> bool:
        return self.state in ("new", "running")

    def join(self, timeout: Optional[float] = None) -> bool:
        """Wait for the job's thread; True when it has finished."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def snapshot(self) -> dict[str, Any]:
        """A consistent copy of the progress: events per step, calls, documents, status, points, usage."""
        with self._lock:
            return {"state": self.state, "events": dict(self._events), "n_calls": len(self.calls),
                    "calls_finished": self._calls_finished, "docs_before": self._docs_before,
                    "call_done": self._call_done, "overall": self._overall, "status": dict(self._status), "points": list(self._points),
                    "documents": self._documents, "generation": self._generation,
                    "usage": self.llm.snapshot() if self.llm is not None else {},
                    "cancelling": self.cancel_event.is_set(), "seconds": time.perf_counter() - self.started_at}

    # --- the job's thread ----------------------------------------------------------------------
    def progress(self, event: ProgressEvent) -> None:
        """The progress callback handed to the pipeline (runs on the job's thread). It only records:
        the counters are re-read after each document and at most every ``STATUS_EVERY_S`` seconds
        otherwise, so they move during a long first document without querying on every event."""
        with self._lock:
            self._events[event.step] = event
            if event.fraction is not None:
                self._overall = event  # the latest word on the whole call's fraction, time left and batch
            if event.step == "index":
                self._call_done = event.done
        if (event.step == "index" and event.done) or time.perf_counter() - self._status_at >= STATUS_EVERY_S:
            self._record_status()

    def _record_status(self) -> None:
        """Re-read the counters and, when the workspace changed since, the status table's rows: the
        page's counters, its table and the sidebar all draw from this one snapshot while the job runs
        (a table read on its own said 2 failed while the counters, read earlier, said 1)."""
        self._status_at = time.perf_counter()
        status = api.status(self.principal, self.ws)
        documents = self._documents
        generation = self._generation
        if hasattr(self.ws, "records"):  # a real workspace (test doubles have only status())
            generation = api.generation(self.principal, self.ws)
            if generation != self._generation or documents is None:
                documents = api.documents_table(self.principal, self.ws)
        point = snapshot_point(status)
        with self._lock:
            self._status = status
            self._documents, self._generation = documents, generation
            # one point per count of processed documents, the first seen: a batch merges its graph
            # before it marks its documents processed, so a later read at the same count would draw
            # the whole batch's entities above "0 documents" (a vertical jump, not growth)
            if not self._points or self._points[-1]["documents"] != point["documents"]:
                self._points.append(point)

    def _load_models(self) -> None:
        """Load the spaCy pipeline and the local embedding model (once per process) as a step of its own,
        before the first document: on a busy machine that takes tens of seconds, which the page showed
        as counters stuck at 0 with no step named."""
        from core.extraction.nlp import load_nlp, nlp_loaded

        settings = getattr(self.ws, "settings", None)
        if settings is None:  # not a workspace (a test double): nothing to load
            return
        todo = [what for what, needed in (("language", not nlp_loaded()),
                                          ("embedding", local_model_pending(settings))) if needed]
        for done, what in enumerate(todo):
            self.progress(ProgressEvent("load", done, len(todo), f"loading the {what} model…"))
            if what == "language":
                load_nlp()
            else:
                api.load_embedder(self.principal, self.ws)
        if todo:
            self.progress(ProgressEvent("load", len(todo), len(todo), "models loaded"))

    def _run(self) -> None:
        totals: dict[str, Any] = {"processed": 0, "unchanged": 0, "replaced": 0, "failed": [], "chunks": 0,
                                  "dropped": 0, "skipped": []}
        state = "done"
        try:
            self._load_models()
            for call in self.calls:
                if self.cancel_event.is_set():
                    raise Cancelled("cancelled before the next indexing call")
                report = IndexReport()
                try:
                    call(self.progress, report=report, llm=self.llm, cancel=self.cancel_event)
                finally:
                    totals["processed"] += report.processed
                    totals["unchanged"] += report.unchanged
                    totals["replaced"] += report.replaced
                    totals["failed"] += list(report.failed)
                    totals["skipped"] += list(report.skipped)
                    totals["chunks"] += report.chunks_embedded
                    totals["dropped"] += report.dropped_records
                    with self._lock:
                        self._calls_finished += 1
                        self._docs_before += self._call_done
                        self._call_done = 0
                        self._overall = None
        except Cancelled:
            state = "cancelled"
        except Exception as exc:  # noqa: BLE001 - shown on the page by the script thread
            state, self.error, self.error_traceback = "error", exc, traceback.format_exc()
        finally:
            try:
                self._record_status()
                note_own_write(self.ws, self.principal)  # this process's own write: no "changed outside this page" notice
            except Exception:  # noqa: BLE001 - the workspace may have been closed meanwhile
                pass
            usage = self.llm.snapshot() if self.llm is not None else {}
            self.summary = totals | {"seconds": round(time.perf_counter() - self.started_at, 1),
                                     "cancelled": state == "cancelled", "usage": usage,
                                     "pending": int(self._status.get("pending", 0)),
                                     "model": getattr(self.llm, "model", "") if self.llm is not None else ""}
            with self._lock:
                self.state = state
            with _ACTIVE_LOCK:
                _ACTIVE[self._key] = max(_ACTIVE.get(self._key, 1) - 1, 0)
                if _RUNNING.get(self._key) is self:
                    del _RUNNING[self._key]


def progress_bars(snap: dict[str, Any], escape: Callable[[str], str] = str) -> list[tuple[str, float, str]]:
    """(step, fraction, text) of each progress bar, from a job snapshot, in pipeline order
    (``escape`` is applied to the pipeline's messages, which may quote document names)."""
    events: dict[str, ProgressEvent] = snap["events"]
    n_calls = max(int(snap["n_calls"]), 1)
    order = list(STEPS)
    current = max((order.index(s) for s in events if s in order and s != "index"), default=0)
    bars: list[tuple[str, float, str]] = []
    for step in order:
        event = events.get(step)
        if event is None:
            continue
        label = STEPS[step]
        message = escape(event.message[:120]) if event.message else ""
        if step == "index":  # call_done is 0 once a call has finished (its documents are in docs_before)
            call_done = int(snap.get("call_done", event.done))
            latest: Optional[ProgressEvent] = snap.get("overall")
            within = call_done / event.total if event.total else 0.0
            if latest is not None and latest.fraction is not None:  # stages weighted: moves inside a batch
                within = latest.fraction
            overall = min((snap["calls_finished"] + within) / n_calls, 1.0)
            started = [s for s in order if s in events and s not in ("index", "repair")]
            now = f" — {STEPS[started[-1]].lower()}…" if started else " — starting…"  # the first document's step
            last = (" — done" if event.message == "done" else f" — last: {message}") if event.done else now
            where = f" (call {min(snap['calls_finished'] + 1, n_calls):,} of {n_calls:,})" if n_calls > 1 else ""
            bars.append((step, overall, f"{label}: {snap['docs_before'] + call_done:,} indexed{where}"
                                        f"{overall_text(overall, latest)}{last}"))
        elif step != "repair" and order.index(step) < current:
            bars.append((step, 1.0, f"{label}: done"))
        else:
            fraction = 1.0 if event.total <= 0 else min(event.done / event.total, 1.0)
            suffix = f" ({event.done:,}/{event.total:,})" if event.total else ""
            if event.batches > 1:  # a new batch restarts the stage bars: say which one they are on
                suffix += f" — batch {event.batch:,} of {event.batches:,}"
            bars.append((step, fraction, f"{label}{suffix} {message}".rstrip()))
    return bars


def overall_text(fraction: float, latest: Optional[ProgressEvent]) -> str:
    """' — 45 % of the run, batch 2 of 3, about 1 min left' for the Documents bar ('' before any estimate)."""
    if latest is None or latest.fraction is None:
        return ""
    parts = [f"{fraction * 100:.0f} % of the run"]
    if latest.batches > 1:
        parts.append(f"batch {latest.batch:,} of {latest.batches:,}")
    left = latest.eta_text()
    if left:
        parts.append(left)
    return " — " + ", ".join(parts)


def models_to_load(ws: Workspace) -> bool:
    """Will this job still have to load the spaCy pipeline or the local embedding model (once per server
    process)? Then the page says so; once they are loaded it does not."""
    from core.extraction.nlp import nlp_loaded

    return not nlp_loaded() or local_model_pending(getattr(ws, "settings", None))


def local_model_pending(settings: object) -> bool:
    """Is the settings' embedder a local model (torch or int8 MiniLM) this process has not loaded yet?"""
    from core import embeddings, onnx_embeddings

    kind = getattr(settings, "embedder", "local-minilm")
    if kind == "local-minilm":
        return not embeddings.local_embedder_loaded()
    return kind == "local-minilm-int8" and not onnx_embeddings.int8_embedder_loaded()


def growth_figure(points: list[dict[str, int]]) -> go.Figure:
    """Entities (nodes) and relations (edges) against documents processed."""
    xs = [p["documents"] for p in points]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=xs, y=[p["entities"] for p in points], mode="lines+markers", name="entities (nodes)"))
    fig.add_trace(go.Scatter(x=xs, y=[p["relations"] for p in points], mode="lines+markers", name="relations (edges)"))
    fig.update_layout(height=280, margin=dict(l=10, r=10, t=30, b=10), title="Knowledge graph growth",
                      xaxis_title="documents processed", yaxis_title="count", legend=dict(orientation="h"))
    # whole documents only: integer ticks (about ten at most), never 0.5 or 2.5
    fig.update_xaxes(tickmode="linear", tick0=0, dtick=max(1, -(-max(xs + [1]) // 10)), tickformat="d")
    return fig
