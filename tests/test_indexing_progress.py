"""Indexing shows movement inside the long steps: the spaCy extraction reports the characters parsed
after each paragraph, so a large document's Extract bar moves instead of sitting at 0/1."""
from __future__ import annotations

from pathlib import Path

from core.indexing.pipeline import process_pending, register_documents
from core.loaders import load_path
from core.workspace import Workspace

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "samples" / "07-great-velmora-flood.md"


def test_extraction_reports_characters_parsed(tmp_path):
    ws = Workspace(tmp_path / "ws")
    events = []
    try:
        docs, failures = load_path(SAMPLE)
        with ws.writer():
            register_documents(ws, docs, failures)
            report = process_pending(ws, progress=events.append)
        assert report.processed == 1
    finally:
        ws.close()
    parsed = [(e.done, e.total) for e in events if e.step == "extract" and e.message == "characters parsed"]
    assert len(parsed) >= 5  # one per paragraph at least
    assert [d for d, _ in parsed] == sorted(d for d, _ in parsed) and parsed[-1][0] == parsed[-1][1]
    assert parsed[0][0] < parsed[-1][1] // 2  # movement from early on
