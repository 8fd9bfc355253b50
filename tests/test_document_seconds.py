"""The status table's seconds per document: the batch's time shared by text size, not its average (issue 32, item 1)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.indexing.batch import document_seconds


def _chunks(*lengths: int) -> list[SimpleNamespace]:
    return [SimpleNamespace(text="x" * n) for n in lengths]


def test_a_long_document_gets_more_of_the_batch_than_a_short_one():
    shares = document_seconds(10.0, {"long": _chunks(600, 300), "short": _chunks(100)})
    assert shares == pytest.approx({"long": 9.0, "short": 1.0})
    assert sum(shares.values()) == pytest.approx(10.0)


def test_empty_texts_fall_back_to_the_average():
    assert document_seconds(4.0, {"a": _chunks(0), "b": []}) == {"a": 2.0, "b": 2.0}


def test_the_sample_workspace_shows_different_seconds_per_document(sample_ws):
    seconds = [d["seconds"] for d in sample_ws.documents_table() if d["status"] == "processed"]
    assert len(seconds) >= 5 and len(set(seconds)) > len(seconds) // 2, seconds
