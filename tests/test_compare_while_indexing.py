"""Issue 38: a second session reads Compare while the first indexes (results consistent, no error).

The app opens a workspace once and gives every browser session a handle on it (``core.session``), so
a viewer's Compare runs on the same stores an editor's indexing run is writing. The reader is started
from the indexing run's own progress events at fixed points — after a batch's vectors are stored but
before its transaction commits (the vector store is not part of that transaction), and between two
batches — and the run waits for it, so the points are the same on every run (no race decided by the
scheduler). Every Compare must finish without an error, and every chunk a result names must exist
with the text the result quoted, once the run has ended.
"""
from __future__ import annotations

import json
import threading

import pytest

from core import api
from core.auth import Principal, Role
from core.types import ProgressEvent
from conftest import ROOT

VIEWER = Principal("reader", "reader@example.org", Role.viewer)
EDITOR = Principal("writer", "writer@example.org", Role.editor)
READER_WAIT_S = 300.0  # a Compare of all modes on the sample corpus takes seconds; a blocked reader never ends


def _question() -> str:
    line = (ROOT / "data" / "sample_questions.jsonl").read_text(encoding="utf-8").splitlines()[0]
    return json.loads(line)["question"]


def _files() -> list[tuple[str, bytes]]:
    return [(f"extra-{i}.txt", " ".join(f"In {1850 + j}, Orla Venn {i} carried cargo {j} from Port Sallow to "
                                       f"Carrow Sound for the Harbor Guild." for j in range(50)).encode())
            for i in range(3)]


@pytest.mark.slow
def test_compare_during_an_indexing_run_is_consistent_and_raises_nothing(sample_ws_copy, monkeypatch):
    monkeypatch.setenv("RAGSCOPE_BATCH_TOKENS", "400")  # one batch per file: reads between batches too
    reader_ws = api.session_workspace(VIEWER, sample_ws_copy)
    writer_ws = api.session_workspace(EDITOR, sample_ws_copy)
    question = _question()
    before = api.run_modes(VIEWER, reader_ws, question, "all")
    runs: list[dict] = []
    errors: list[str] = []

    def read(where: str) -> None:
        try:
            results = api.run_modes(VIEWER, reader_ws, question, "all")
            runs.append({"where": where, "modes": sorted(results),
                         "chunks": {c.chunk_id: c.text for r in results.values() for c in r.chunks}})
        except Exception as exc:  # noqa: BLE001 - the assertion below names it
            errors.append(f"{where}: {exc!r}"[:400])

    def progress(event: ProgressEvent) -> None:
        uncommitted = event.step == "embed" and event.message == "vectors stored"
        between = event.step == "index" and 0 < event.done < event.total
        if uncommitted or between:
            reader = threading.Thread(target=read, args=(f"{event.step}:{event.message or event.done}",))
            reader.start()
            reader.join(READER_WAIT_S)
            assert not reader.is_alive(), f"Compare blocked by the indexing run at {event.step}"

    report = api.index_uploads(EDITOR, writer_ws, _files(), progress)
    assert report.processed == 3 and not report.failed
    assert errors == []
    assert len(runs) >= 3 and all(run["modes"] == sorted(before) for run in runs)
    named = {cid: text for run in runs for cid, text in run["chunks"].items()}
    stored = {cid: chunk.text for cid, chunk in sample_ws_copy.records.chunks_by_id(list(named)).items()}
    assert set(named) <= set(stored), f"chunks a Compare showed that do not exist: {set(named) - set(stored)}"
    assert all(stored[cid].startswith(text[:200]) for cid, text in named.items() if text)
