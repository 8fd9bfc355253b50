"""ppr's evidence lines (issue 31 (a)): each passage's best sentence in HippoRAG 2's passage order, except a
passage whose best sentence scores below ``chunk_modes.PPR_WEAK_HEAD``: its line competes by score with the
other passages' further sentences. naive keeps every passage's line in rank order."""
from __future__ import annotations

from typing import Any

import pytest

from core.answers import chunk_modes
from core.answers.chunk_modes import chunk_lines, naive_answer, ppr_answer
from core.answers.scoring import Pick
from core.answers.sentences import Sentence
from core.types import ChunkHit, RetrievalResult

# (text, score) per passage, in PPR order; the first sentence of each is its best
PASSAGES = {
    "p1": [("Signmark is a Finnish rapper who competed in Finland's national qualifications.", 1.6)],
    "p2": [("The company supplies coffee to hundreds of cafes in the US, Canada and Korea.", 0.3)],
    "p3": [("The euro is the sole currency of nineteen member states of the union.", 1.3),
           ("The markka was the currency of Finland from 1860 until 2002.", 1.1)],
    "p4": [("A small bakery opened near the harbour in the spring.", 0.2)],
}


class _Bank:
    def get(self, chunk_ids: list[str]) -> dict[str, list[Sentence]]:
        return {cid: [Sentence(text, cid, i, f"{cid}.md, chunk 1") for i, (text, _) in enumerate(PASSAGES[cid])]
                for cid in chunk_ids if cid in PASSAGES}


class _Inputs:
    """The two things the chunk builders read: the sentence bank and the scorer."""

    bank = _Bank()

    def score(self, sentence: Sentence, role: str, rank: int, label: str) -> Pick:
        return Pick(sentence, dict(PASSAGES[sentence.chunk_id])[sentence.text], role, label)


def _result(mode: str) -> RetrievalResult:
    chunks = [ChunkHit.make(cid, 1.0 / (i + 1), f"personalised PageRank (rank {i + 1})") for i, cid in enumerate(PASSAGES)]
    return RetrievalResult(mode=mode, query="What currency predated the euro in the country Signmark is from?",
                           chunks=chunks)


def _texts(builder: Any) -> list[str]:
    _, entries = builder(_Inputs(), _result("ppr"))
    return [entry.text for entry in entries]


def test_a_weak_passage_line_gives_its_place_to_a_further_sentence_that_scores_higher():
    lines = _texts(ppr_answer)
    assert [line.split(":")[0] for line in lines] == ["chunk #1", "chunk #3", "chunk #3", "chunk #2", "chunk #4"]
    assert "markka" in lines[2]  # the markka sentence now comes before the weak coffee and bakery lines


def test_naive_keeps_every_passage_line_in_rank_order():
    labels = [line.split(":")[0] for line in _texts(naive_answer)]
    assert labels == ["chunk #1", "chunk #2", "chunk #3", "chunk #4", "chunk #3"]


def test_the_setting_at_zero_gives_ppr_naive_order(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(chunk_modes, "PPR_WEAK_HEAD", 0.0)
    assert _texts(ppr_answer) == _texts(naive_answer)


def test_chunk_lines_quote_each_sentence_once():
    heads = [Pick(Sentence("A strong line about the question.", "a", 0, "a.md, chunk 1"), 2.0, "chunk", "chunk #1"),
             Pick(Sentence("A weak line.", "b", 0, "b.md, chunk 1"), 0.1, "chunk", "chunk #2")]
    lines = chunk_lines(heads, heads, weak_below=0.7)
    assert [e.text.split(":")[0] for e in lines] == ["chunk #1", "chunk #2"]


def test_the_ppr_mode_is_answered_by_its_own_builder():
    from core.retrieval.registry import find_spec

    spec = find_spec("ppr")
    assert spec is not None and spec.offline_builder() is ppr_answer
