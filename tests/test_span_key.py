"""``entity_linking.span_key``: the question spans of ``dictionary_names`` get ``normalize_name``'s key,
lowercasing plain ASCII spans directly (issue 36: ~48 spans per question)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from core.extraction.names import normalize_name
from core.retrieval import entity_linking
from core.retrieval.entity_linking import _WORD, span_key

EDGE_CASES = [
    "The Beatles", "the beatles", "THE WHO", "Theodore Roosevelt", "Thee", "the", "The", "Smith's", "SMITH'S",
    "Smith’s", "Jones's's", "O'Neil", "Jean-Luc Picard", "A.B. Smith", "U.S", "1990", "1990-91", "3 4", "R&B",
    "Café Nero", "ﬁre Station", "Ｆｕｌｌ", "x  y", "x\ty", " Edge", "Edge ", "-Edge", "Edge.", "'Quoted'", "_x_",
    "Mary-Kate and Ashley", "Don't Stop", "it's", "a's", "Bob 's", "İstanbul", "ß Straße",
]


def spans(question: str) -> list[str]:
    """Every span of consecutive words, as ``dictionary_names`` cuts them."""
    words = list(_WORD.finditer(question))
    return [question[words[i].start() : words[j].end()] for i in range(len(words)) for j in range(i, len(words))]


def question_spans() -> list[str]:
    root = Path(__file__).resolve().parent.parent
    found: list[str] = []
    for path in sorted((root / "data").glob("*questions*.jsonl")) + sorted((root / "benchmarks/questions").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                found += spans(json.loads(line)["question"])
    return found


@pytest.mark.parametrize("surface", EDGE_CASES)
def test_edge_cases_get_the_entity_key(surface: str) -> None:
    assert span_key(surface) == normalize_name(surface)


def test_question_spans_and_random_strings_get_the_entity_key() -> None:
    rng = random.Random(36)
    alphabet = "aZ9 .'-’&_éß\t"
    generated = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9))) for _ in range(5000)]
    generated += ["the" + s for s in generated[:500]] + [s + "'s" for s in generated[500:1000]]
    surfaces = question_spans() + generated
    assert len(surfaces) > 5000
    assert [span_key(s) for s in surfaces] == [normalize_name(s) for s in surfaces]


def test_plain_spans_skip_the_general_normalisation(monkeypatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(entity_linking, "normalize_name", lambda text: calls.append(text) or normalize_name(text))
    assert span_key("Velmora Coastal Railway") == "velmora coastal railway"
    assert span_key("Jean-Luc O'Neil") == "jean-luc o'neil"
    assert calls == []
    assert span_key("The Velmora Coastal Railway") == "velmora coastal railway"
    assert span_key("Café") == "café"
    assert calls == ["The Velmora Coastal Railway", "Café"]
