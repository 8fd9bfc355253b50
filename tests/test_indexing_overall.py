"""An indexing run says how far along it is: one fraction of the whole run (stages weighted, so it moves
inside a batch), a time-left estimate and "batch b of B", on the Documents page and in the CLI bar."""
from __future__ import annotations

from pathlib import Path

from core.cli.base import StderrProgress
from core.indexing.overall import DEFAULT_SHARES, OverallProgress, stage_shares, within_batch
from core.indexing.pipeline import process_pending, register_documents
from core.loaders import load_path
from core.types import ProgressEvent
from core.workspace import Workspace
from ui.indexing import progress_bars

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _one_batch(overall: OverallProgress, clock: Clock, index: int, docs_done: int, docs_total: int) -> None:
    overall.start_batch(index)
    for done in (0, 50, 100):
        clock.now += 1
        overall(ProgressEvent("extract", done, 100, "characters parsed"))
    overall(ProgressEvent("merge", 0, 10))
    overall(ProgressEvent("tree", 0, 2))
    for done in (0, 5, 10):
        clock.now += 1
        overall(ProgressEvent("embed", done, 10, "embedding"))
    overall(ProgressEvent("index", docs_done, docs_total, "a document"))


def test_fraction_moves_inside_each_batch_and_says_the_batch():
    clock, seen = Clock(), []
    overall = OverallProgress(seen.append, [100, 100, 200], clock=clock)
    overall(ProgressEvent("index", 0, 6, "6 document(s) to index"))
    _one_batch(overall, clock, 0, 2, 6)
    first = [e for e in seen if e.batch == 1]
    fractions = [e.fraction for e in seen]
    assert fractions == sorted(fractions)  # never moves back
    assert seen[0].fraction == 0.0 and seen[-1].fraction == 0.25  # a batch of 100 of 400 tokens
    assert len({e.fraction for e in first}) >= 6  # moves with extraction and embedding, not 0 then done
    embed_half = next(e for e in first if e.step == "embed" and e.done == 5)
    assert embed_half.fraction < 0.25 * (1 - DEFAULT_SHARES["embed"] / 2) + 1e-9  # embedding weighs a half
    assert seen[-1].eta_s is not None and abs(seen[-1].eta_s - 18.0) < 1e-6  # 6 s for a quarter: 18 s left
    assert all(e.batches == 3 for e in seen)
    _one_batch(overall, clock, 1, 4, 6)
    _one_batch(overall, clock, 2, 6, 6)
    assert [e.batch for e in seen if e.step == "index" and e.done] == [1, 2, 3]
    assert seen[-1].fraction == 1.0 and seen[-1].eta_s == 0.0
    assert [e.fraction for e in seen] == sorted(e.fraction for e in seen)


def test_measured_stage_shares_replace_the_defaults():
    assert stage_shares({}) == DEFAULT_SHARES
    shares = stage_shares({"extract": 1.0, "embed": 3.0})
    assert shares["embed"] == 0.75 and shares["extract"] == 0.25
    assert within_batch("embed", 0, 10, shares) == 0.25
    assert within_batch("extract", 0, 10, shares, reached=0.5) == 0.5  # an opening event does not move back
    timings = {"extract": 0.0, "embed": 0.0}
    overall = OverallProgress(lambda e: None, [1, 1], timings)
    timings.update(extract=1.0, embed=3.0)  # measured during the first batch
    overall.start_batch(1)
    assert overall.shares["embed"] == 0.75


def test_a_real_run_reports_fraction_batches_and_time_left(tmp_path):
    ws = Workspace(tmp_path / "ws")
    events: list[ProgressEvent] = []
    try:
        docs = []
        for name in sorted(p.name for p in SAMPLES.glob("*.md"))[:3]:
            docs += load_path(SAMPLES / name)[0]
        with ws.writer():
            register_documents(ws, docs)
            process_pending(ws, progress=events.append, batch_tokens=1)  # one document per batch
    finally:
        ws.close()
    run = [e for e in events if e.fraction is not None]
    assert run and run[-1].fraction == 1.0 and {e.batches for e in run} == {3}
    assert [e.fraction for e in run] == sorted(e.fraction for e in run)
    first_done = next(i for i, e in enumerate(run) if e.step == "index" and e.done)
    assert 0 < run[first_done - 1].fraction < 0.5  # the first batch moved the bar before it was committed
    assert [e.done for e in run if e.step == "index" and e.done and e.message != "done"] == [1, 2, 3]
    assert {e.batch for e in run if e.step == "embed"} == {1, 2, 3}


def _snap(events: dict, overall) -> dict:
    return {"events": events, "n_calls": 1, "calls_finished": 0, "docs_before": 0, "call_done": 2,
            "overall": overall}


def test_documents_bar_shows_run_fraction_batch_and_time_left():
    embed = ProgressEvent("embed", 5, 10, "embedding", fraction=0.45, eta_s=120.0, batch=2, batches=3)
    index = ProgressEvent("index", 2, 6, "b.md", fraction=0.3, eta_s=150.0, batch=1, batches=3)
    bars = dict((step, (f, t)) for step, f, t in progress_bars(_snap({"index": index, "embed": embed}, embed)))
    fraction, text = bars["index"]
    assert fraction == 0.45  # the weighted fraction, not 2 of 6 documents
    assert "Documents: 2 indexed" in text and "45 % of the run" in text and "batch 2 of 3" in text
    assert "about 2 min left" in text
    assert "batch 2 of 3" in bars["embed"][1]  # a second batch does not silently restart the stage bars


def test_documents_bar_without_an_estimate_is_unchanged():
    index = ProgressEvent("index", 0, 1, "1 document(s) to index")
    snap = _snap({"index": index}, None) | {"call_done": 0}
    assert progress_bars(snap)[0][2] == "Documents: 0 indexed — starting…"


def test_cli_index_bar_moves_with_the_run_fraction(capsys):
    bar = StderrProgress(enabled=True)
    bar(ProgressEvent("index", 0, 6, "6 document(s) to index", fraction=0.0, batch=1, batches=2))
    bar(ProgressEvent("extract", 50, 100, "characters parsed", fraction=0.2, eta_s=30.0, batch=1, batches=2))
    assert bar.bars["index"].n == 20.0  # moved inside the first batch (was 0/6 until the batch ended)
    bar(ProgressEvent("embed", 1, 2, "embedding", fraction=0.7, eta_s=10.0, batch=2, batches=2))
    assert bar.bars["index"].n == 70.0
    bar.close()
    err = capsys.readouterr().err
    assert "batch 2 of 2" in err and "about 10 s left" in err and "0/6 docs" in err
