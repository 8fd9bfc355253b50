"""How far along an indexing run is: one overall fraction, a time-left estimate and "batch b of B".

``OverallProgress`` wraps the run's progress callback (``core.indexing.pipeline.process_pending``).
Every event it forwards carries ``fraction`` (0–1 of the whole run), ``eta_s`` (seconds left, None
until there is something to extrapolate from) and ``batch``/``batches``. The fraction weighs each
batch by its tokens and, inside a batch, each stage by its share of the batch's time: the default
shares below until a batch has finished, then the shares measured on the run's finished batches
(``IndexReport.timings_s``), so a run whose embedding dominates is not 90 % "done" after extraction.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable, Mapping, Optional, Sequence

from core.types import ProgressCallback, ProgressEvent

# a batch's stages in the order they run, with their default shares of its time: measured on the sample
# corpus (offline, local embedder, 2 batches: embed 79 %, extract 17 %); the run's own measured shares
# replace these once a batch has finished
STAGES: tuple[str, ...] = ("chunk", "extract", "write", "merge", "tree", "embed")
DEFAULT_SHARES: dict[str, float] = {"chunk": 0.01, "extract": 0.17, "write": 0.03, "merge": 0.01, "tree": 0.02,
                                    "embed": 0.76}
MIN_FRACTION_FOR_ETA = 0.02  # below this the extrapolation is noise
MIN_SECONDS_FOR_ETA = 1.0


def stage_shares(timings_s: Optional[Mapping[str, float]]) -> dict[str, float]:
    """Each stage's share of a batch's time: measured ``timings_s`` when they add up to something, else the defaults."""
    measured = {s: max(float((timings_s or {}).get(s, 0.0)), 0.0) for s in STAGES}
    total = sum(measured.values())
    if total <= 0:
        return dict(DEFAULT_SHARES)
    return {s: v / total for s, v in measured.items()}


def within_batch(step: str, done: int, total: int, shares: Mapping[str, float], reached: float = 0.0) -> float:
    """The fraction of a batch done when ``step`` reports ``done`` of ``total`` (never below ``reached``:
    a stage's opening event does not move the bar back)."""
    if step not in STAGES:
        return reached
    before = sum(shares.get(s, 0.0) for s in STAGES[:STAGES.index(step)])
    inner = 1.0 if total <= 0 else min(max(done / total, 0.0), 1.0)
    return max(reached, min(before + shares.get(step, 0.0) * inner, 1.0))


def eta_seconds(fraction: float, elapsed_s: float) -> Optional[float]:
    """Seconds left at a constant rate, or None while too little is done to say."""
    if fraction < MIN_FRACTION_FOR_ETA or elapsed_s < MIN_SECONDS_FOR_ETA or fraction >= 1.0:
        return 0.0 if fraction >= 1.0 else None
    return elapsed_s * (1.0 - fraction) / fraction


class OverallProgress:
    """A progress callback that adds the run's overall fraction, time left and batch number to each event."""

    def __init__(self, inner: ProgressCallback, batch_tokens: Sequence[int],
                 timings_s: Optional[Mapping[str, float]] = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.inner = inner
        self.weights = [max(int(t), 1) for t in batch_tokens] or [1]
        self.total = float(sum(self.weights))
        self.timings_s = timings_s  # the report's cumulative stage seconds (read at each batch start)
        self.clock = clock
        self.started = clock()
        self.batch = 0  # 0-based index of the batch running
        self.shares = dict(DEFAULT_SHARES)
        self.reached = 0.0  # fraction of the current batch done

    def start_batch(self, index: int) -> None:
        """Batch ``index`` (0-based) starts; the stage shares become those measured so far."""
        self.batch = index
        self.reached = 0.0
        if index > 0:
            self.shares = stage_shares(self.timings_s)

    def fraction(self) -> float:
        done_before = sum(self.weights[:self.batch])
        current = self.weights[self.batch] if self.batch < len(self.weights) else 0
        return min((done_before + current * self.reached) / self.total, 1.0)

    def __call__(self, event: ProgressEvent) -> None:
        if event.step == "index":
            if event.done:  # a batch committed (its documents are indexed): count it whole
                self.reached = 1.0
        else:
            self.reached = within_batch(event.step, event.done, event.total, self.shares, self.reached)
        fraction = self.fraction()
        eta = eta_seconds(fraction, self.clock() - self.started)
        self.inner(replace(event, fraction=fraction, eta_s=eta, batch=min(self.batch + 1, len(self.weights)),
                           batches=len(self.weights)))
