"""Which evidence lines an offline answer shows after its first line (issue 31, answer-in-answer):
tree's summary sentences compete with its leaf sentences by score."""
from __future__ import annotations

import pytest

from core.answers import chunk_modes
from core.answers.chunk_modes import tree_lines
from core.answers.scoring import Pick
from core.answers.sentences import Sentence


def pick(text: str, score: float, role: str, label: str, chunk: str = "c1", ord_: int = 0) -> Pick:
    return Pick(Sentence(text, chunk, ord_, f"{chunk}.md, chunk 1"), score, role, label)


SUMMARY = pick("The region's ports grew through the nineteenth century as trade expanded.", 1.1, "summary",
               "summary, level 1", "s", 0)
LEAF = pick("The harbour was designed by the engineer Mara Holt in 1871.", 2.4, "leaf", "leaf (Harbour)", "c2", 0)
OTHER = pick("Fishing boats still land their catch at the north quay every morning.", 0.4, "chunk",
             "leaf chunk #1", "c2", 1)


def test_tree_lines_put_a_leaf_sentence_that_outscores_a_summary_sentence_first():
    lines = [entry.text.split(":")[0] for entry in tree_lines([SUMMARY], [LEAF], [OTHER])]
    assert lines == ["leaf (Harbour)", "summary, level 1", "leaf chunk #1"]


def test_tree_lines_keep_summaries_first_with_the_setting(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(chunk_modes, "SUMMARIES_FIRST", True)
    lines = [entry.text.split(":")[0] for entry in tree_lines([SUMMARY], [LEAF], [OTHER])]
    assert lines == ["summary, level 1", "leaf (Harbour)", "leaf chunk #1"]
