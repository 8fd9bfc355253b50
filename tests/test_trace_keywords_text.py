"""The keywords trace line reads as words: a list of keywords joined, an empty one "none" (it showed
Python's ``['Kestrel Point', 'keeper']`` and ``[]`` on Compare and Inspect)."""
from __future__ import annotations

import core.retrieval.query  # noqa: F401 - registers the trace events' wording
from core.trace import TraceEvent


def test_keywords_line_joins_the_lists_and_says_none() -> None:
    line = TraceEvent("keywords", "keywords", {"extractor": "spacy", "low": ["Kestrel Point", "keeper"],
                                                "high": []}).text()
    assert line == "keywords (spacy): low-level Kestrel Point, keeper, high-level none"
    assert "[" not in line and "'" not in line
