"""Exact token counts of the tree mode's context without encoding its compacted summaries again.

The tree context shows a summary with each sentence already in the context replaced by a pointer
(``core.retrieval.context_dedup.TextOnce.compact``): the sentences it keeps joined by single spaces,
then `` (see …)``. That text is new for each question, so the generation's segment table
(``core.retrieval.token_counts``) does not know it, and the whole summary (1,000-3,000 tokens on
dev_musique_full) used to be encoded again for every question.

Why a compacted summary can be counted by its sentences: cl100k cuts text into pieces with one
regular expression, then merges bytes within a piece. No alternative of that expression matches a
non-whitespace character followed by a space (a space is only ever the optional first character of a
piece, or part of a whitespace-only piece), and the expression looks nowhere behind a position and
looks ahead only after whitespace. So when ``a`` ends with a non-whitespace character and ``b`` starts
with a space, the pieces of ``a + b`` are those of ``a`` then those of ``b``, and
``count(a + b) == count(a) + count(b)``. ``count`` cuts each unknown segment of the context before
every space that follows a sentence's end (``.``, ``!``, ``?``, ``;``) and adds up the parts' counts:
each summary sentence, alone and with its leading space, is counted once per generation
(``summary_piece_counts``); a part not in that table (a pointer, a header) is encoded. The cut is valid
for any text, so the count is exact whatever the compaction kept (``tests/test_tree_tokens.py``).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from core.retrieval.context_dedup import pieces
from core.retrieval.token_counts import SegmentCounts, context_counter, segments
from core.tokens import encoding

if TYPE_CHECKING:
    from core.workspace import Workspace

_AFTER_SENTENCE = re.compile(r"(?<=[.!?;])(?= )")  # before a space that follows a sentence's end


def summary_piece_counts(ws: "Workspace") -> dict[str, int]:
    """Every sentence of the generation's summary nodes with its count, alone and after one space
    (as ``TextOnce.compact`` joins the sentences it keeps)."""
    encode = encoding().encode_ordinary
    table: dict[str, int] = {}
    for node in ws.views.tree_index.values():
        for piece in pieces(node.text):
            for text in (piece, " " + piece):
                if text not in table:
                    table[text] = len(encode(text))
    return table


class TreeContextCounter:
    """``SegmentCounts.count`` that also counts the segments it does not know by their sentences."""

    def __init__(self, known: SegmentCounts, sentences: dict[str, int]) -> None:
        self.known = known
        self.sentences = sentences

    def count(self, text: str) -> int:
        """cl100k tokens of ``text`` (equal to ``core.tokens.count_tokens``)."""
        encode = encoding().encode_ordinary
        table, sentences = self.known.table, self.sentences
        total = 0
        rest: list[str] = []  # whole segments left to the segment table's count (one encoding call)
        for segment in segments(text):
            if segment in table:
                total += table[segment]
                continue
            parts = _AFTER_SENTENCE.split(segment)
            if len(parts) < 2 or not any(part in sentences for part in parts):
                rest.append(segment)
                continue
            for part in parts:
                found = sentences.get(part)
                total += len(encode(part)) if found is None else found
        # joined in order the segments left keep their cuts (each but the last ends in a line break,
        # each but the first starts with a non-space character), as the segment table's count needs
        return total + (self.known.count("".join(rest)) if rest else 0)


def tree_context_counter(ws: "Workspace") -> TreeContextCounter:
    """The current generation's counter (its tables built once per generation)."""
    return TreeContextCounter(context_counter(ws), ws.views.derived(summary_piece_counts))
