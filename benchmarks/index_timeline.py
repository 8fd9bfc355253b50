"""Where an indexing run's wall clock goes, and how busy it keeps the cores (helper of ``index_throughput.py``).

``Timeline.install()`` records, as spans on the wall clock with their thread: every spaCy parse
(``SpacyExtractor.extract``), every wait of the main thread for the batch prepared ahead
(``Prefetcher.take``) and for the chunk windows' pass (``WindowStatesAhead.result``); the model calls come
from ``wordpieces.CountingEmbedder.calls``. A sampler thread reads each thread's CPU seconds from
``/proc/self/task`` every 0.2 s (Linux), so the CPU is split between the main thread, the prefetch
thread (the next batch's parse), the window-pass thread and onnxruntime's own pool thread.

``summary()`` gives the busy time of each activity (the union of its spans), the time the parse and the
model overlap, the time neither runs (the main thread's merge, tree and writes alone), and CPU per thread.
"""
from __future__ import annotations

import os
import re
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Optional

Span = tuple[float, float]


def union(spans: list[Span]) -> list[Span]:
    """The spans merged where they overlap, sorted."""
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def length(spans: list[Span]) -> float:
    return sum(end - start for start, end in union(spans))


def intersection(a: list[Span], b: list[Span]) -> float:
    """Seconds covered by both span lists."""
    total, ua, ub = 0.0, union(a), union(b)
    i = j = 0
    while i < len(ua) and j < len(ub):
        lo, hi = max(ua[i][0], ub[j][0]), min(ua[i][1], ub[j][1])
        total += max(0.0, hi - lo)
        if ua[i][1] < ub[j][1]:
            i += 1
        else:
            j += 1
    return total


def _thread_group(name: str) -> str:
    return re.sub(r"_\d+$", "", name)


class ThreadCpu:
    """CPU seconds per thread, sampled from /proc/self/task every ``every`` seconds."""

    def __init__(self, every: float = 0.2) -> None:
        self.every = every
        self.last: dict[int, float] = {}
        self.names: dict[int, str] = {}
        self._stop = threading.Event()
        self._tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)

    def _sample(self) -> None:
        for thread in threading.enumerate():
            if thread.native_id is not None:
                self.names[thread.native_id] = thread.name
        for task in Path("/proc/self/task").iterdir():
            try:
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            self.last[int(task.name)] = (int(fields[11]) + int(fields[12])) / self._tick

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()

    def start(self) -> "ThreadCpu":
        self._sample()
        self.baseline = dict(self.last)
        self._thread.start()
        return self

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        self._sample()
        by_group: dict[str, float] = defaultdict(float)
        for tid, seconds in self.last.items():
            name = self.names.get(tid, "native (onnxruntime pool)")
            by_group[_thread_group(name)] += seconds - self.baseline.get(tid, 0.0)
        return {k: round(v, 2) for k, v in sorted(by_group.items(), key=lambda kv: -kv[1]) if v > 0.005}


class Timeline:
    """Spans of the parse and of the main thread's waits (see the module docstring)."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self._undo: list[Callable[[], None]] = []
        self._guard = threading.Lock()

    def _wrap(self, owner: Any, attribute: str, kind: str) -> None:
        original = getattr(owner, attribute)
        timeline = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                with timeline._guard:
                    timeline.spans.append({"kind": kind, "thread": threading.current_thread().name,
                                           "start": started, "end": time.perf_counter()})

        timed.__wrapped__ = original  # type: ignore[attr-defined] - inspect.signature reads the original's
        setattr(owner, attribute, timed)
        self._undo.append(lambda: setattr(owner, attribute, original))

    def install(self) -> "Timeline":
        from core.indexing.common import SpacyExtractor
        from core.indexing.prefetch import Prefetcher
        from core.sentence_vectors import WindowStatesAhead

        self._wrap(SpacyExtractor, "extract", "parse")
        self._wrap(Prefetcher, "take", "wait for the prepared batch")
        self._wrap(WindowStatesAhead, "result", "wait for the window pass")
        return self

    def uninstall(self) -> None:
        while self._undo:
            self._undo.pop()()

    def summary(self, calls: list[dict[str, Any]], started: float, ended: float,
                cpu: Optional[dict[str, float]] = None) -> dict[str, Any]:
        wall = ended - started
        of = lambda kind: [(s["start"], s["end"]) for s in self.spans if s["kind"] == kind]  # noqa: E731
        model = [(c["start"], c["end"]) for c in calls if c["start"] >= started]
        windows = [(c["start"], c["end"]) for c in calls if c["start"] >= started and c["kind"] == "chunk windows"]
        parse = of("parse")
        busy = union(model + parse)
        out = {"wall_s": round(wall, 1),
               "model_s": round(length(model), 1), "window_pass_s": round(length(windows), 1),
               "graph_texts_s": round(length([(c["start"], c["end"]) for c in calls
                                              if c["start"] >= started and c["kind"] == "graph"]), 1),
               "parse_s": round(length(parse), 1), "parse_and_model_s": round(intersection(parse, model), 1),
               "neither_s": round(wall - length(busy), 1),
               "waits_s": {k: round(length(of(k)), 1)
                           for k in ("wait for the prepared batch", "wait for the window pass")}}
        if cpu is not None:
            out["cpu_by_thread_s"] = cpu
        return out


def describe(summary: dict[str, Any]) -> str:
    """A few lines for the benchmark's output."""
    wall = summary["wall_s"] or 1.0
    pct = lambda s: f"{s:.1f}s ({100 * s / wall:.0f}%)"  # noqa: E731
    lines = [f"  timeline of {wall:.1f}s: model busy {pct(summary['model_s'])} (window pass {summary['window_pass_s']}s, "
             f"graph texts {summary['graph_texts_s']}s), spaCy parse {pct(summary['parse_s'])}, both at once "
             f"{pct(summary['parse_and_model_s'])}, neither {pct(summary['neither_s'])}",
             "  main thread waited: " + ", ".join(f"{k} {v}s" for k, v in summary["waits_s"].items())]
    if summary.get("cpu_by_thread_s"):
        lines.append("  CPU by thread: " + ", ".join(f"{k} {v}s" for k, v in summary["cpu_by_thread_s"].items()))
    return "\n".join(lines)
