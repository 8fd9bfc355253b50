"""tree's evidence lines (issue 31 (a)): a leaf's other sentence (naming no query entity) that holds the
asked-for type near the question scores with the summary sentences' role bonus (``TYPED_LEAF_BONUS``),
so the second hop's answer no longer trails a summary sentence that only restates the neighbourhood."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.answers import chunk_modes
from core.answers.chunk_modes import tree_answer
from core.answers.scoring import ROLE, Pick
from core.answers.sentences import Sentence
from core.types import ChunkHit, RetrievalResult

QUESTION = "David Jones played rugby union and another sport that was started when?"
# per leaf chunk, in tree's rank order: (text, score before any bonus, wanted-type surfaces)
LEAVES = {
    "c1": [("David Jones was a Welsh dual-code international rugby union and rugby league footballer.", 2.0, []),
           ("Jones is the only Welsh player to have beaten the All Blacks in both codes.", 1.4, [])],
    "c2": [("Rugby league has been played in Lancashire since its inception in 1895.", 1.3, ["1895"])],
}


class _Bank:
    aliases: dict[str, str] = {}

    def get(self, chunk_ids: list[str]) -> dict[str, list[Sentence]]:
        out: dict[str, list[Sentence]] = {}
        for cid in chunk_ids:
            out[cid] = []
            for i, (text, _, _) in enumerate(LEAVES.get(cid, [])):
                keys = frozenset({"david jones"}) if "David Jones" in text else frozenset()
                out[cid].append(Sentence(text, cid, i, f"{cid}.md, chunk 1", keys=keys))
        return out


class _Inputs:
    bank = _Bank()
    graph: dict[str, dict[str, str]] = {}
    frame = SimpleNamespace(entity_keys=frozenset({"david jones"}))

    def score(self, sentence: Sentence, role: str, rank: int, label: str) -> Pick:
        _, score, typed = LEAVES[sentence.chunk_id][sentence.ord]
        return Pick(sentence, score + ROLE.get(role, 0.0), role, label, list(typed))


def _lines() -> list[str]:
    result = RetrievalResult(mode="tree", query=QUESTION,
                             chunks=[ChunkHit.make(cid, 1.0, "leaf") for cid in LEAVES])
    _, entries = tree_answer(_Inputs(), result)  # type: ignore[arg-type]
    return [entry.text for entry in entries]


def test_a_typed_leaf_sentence_outranks_an_untyped_one_it_trailed_by_less_than_the_bonus():
    lines = _lines()
    assert lines[0].startswith("leaf (david jones)")
    assert "1895" in lines[1] and "All Blacks" in lines[2]


def test_without_the_bonus_the_untyped_sentence_comes_first(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(chunk_modes, "TYPED_LEAF_BONUS", 0.0)
    lines = _lines()
    assert "All Blacks" in lines[1] and "1895" in lines[2]
