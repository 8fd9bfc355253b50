"""Exact cl100k token counts of rendered contexts without re-encoding the index's text each question.

cl100k splits text into pieces with one regular expression before its byte-pair merges, and no piece
runs across a line break that is followed by a non-space character (every alternative of the pattern
that can hold a line break ends in whitespace). A text's count is therefore the sum of the counts of
its *segments*, the text cut after each such line break (``segments``). A context is made of the
index's own lines (chunk text lines, entity and relation rows) plus a few headers, so the counts of
every segment the index can contribute are worked out once per workspace generation
(``segment_counts``, via ``views.derived``, like the rows' budget costs) and a question only encodes
the segments not in that table (its headers, its own question line). Nothing of one question is
kept for the next: the table holds only what the index holds.

A row's index column is its own piece and one token for 1–3 digits (cl100k has every number below
1000 as a token), so a segment that starts with such a number and a comma costs what the same
segment numbered 1 costs; the table stores rows numbered 1.

Within a segment, text the index holds only in pieces (a compacted description or summary: the pieces
it keeps joined by single spaces, then a pointer) is counted from a *piece table* (``PieceCounts``), by
the same rule one level down: no alternative of cl100k's pattern matches a non-space character followed
by a space (a space is only ever a piece's optional first character, or part of a whitespace-only
piece), the pattern looks behind nothing, and its one lookahead (``\s+(?!\S)``) comes after whitespace.
So when ``a`` ends with a non-space character and ``b`` starts with a space, the pieces of ``a + b`` are
those of ``a`` then those of ``b``, and ``count(a + b) == count(a) + count(b)``. A text cut only at such
points counts as the sum of its parts; the parts the table knows are added from it, the others are
joined in order (which keeps those cuts) and encoded. The pieces are a text's sentences and "; "
clauses (``pieces``; ``context_dedup`` shows each once). What differs between the two users is only how
a text is cut and which forms of a piece the table holds: the tree mode cuts an unknown segment before
every space that follows a sentence's end (``sentence_parts``; table ``summary_sentences``: each summary
sentence alone and after a space); the LightRAG tables cut a compacted row around the pieces it kept
(``compacted_row_parts``; table ``description_pieces``: each description piece as its cell shows it,
after a space and from its first space on). Exactness never depends on the table being complete or on
what the compaction kept: a part not in the table is encoded (``tests/test_piece_counts.py``).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Sequence

from core.retrieval.csv_cells import clean_cell
from core.tokens import encoding

if TYPE_CHECKING:
    from core.types import ChunkHit
    from core.workspace import Workspace

_CUT = re.compile(r"(?<=\n)(?=\S)")  # after a line break, before a non-space character
_ROW_NUMBER = re.compile(r"\d{1,3},")  # a table row's index column (1-3 digits, then the comma)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")  # a description's pieces: sentences or "; " clauses
_AFTER_SENTENCE = re.compile(r"(?<=[.!?;])(?= )")  # before a space that follows a sentence's end


def segments(text: str) -> list[str]:
    """``text`` cut after every line break that is followed by a non-space character."""
    return _CUT.split(text) if text else []


class PieceCounts:
    """The token counts of pieces of text, for texts cut only before a space that follows a non-space
    character (the module's docstring: such parts' counts add up)."""

    def __init__(self, table: Mapping[str, int]) -> None:
        self.table = table

    @classmethod
    def of(cls, pieces: Iterable[str], forms: Callable[[str], Iterable[str]]) -> "PieceCounts":
        """The table of every form (``forms(piece)``: as the piece sits in the texts to count) of ``pieces``."""
        wanted = dict.fromkeys(form for piece in pieces for form in forms(piece))
        encode = encoding().encode_ordinary
        return cls({form: len(encode(form)) for form in wanted})

    def add_up(self, parts: Iterable[str]) -> tuple[int, str]:
        """The tokens of the ``parts`` the table knows, and the other parts joined in order (to be encoded;
        the joins keep the cuts: each part but the last ends with a non-space character, each but the
        first starts with a space). ``parts``: a text cut only before spaces that follow a non-space
        character."""
        table = self.table
        total = 0
        left: list[str] = []
        for part in parts:
            found = table.get(part)
            if found is None:
                left.append(part)
            else:
                total += found
        return total, "".join(left)


def normalise(text: str) -> str:
    """Whitespace collapsed to single spaces (chunks keep line breaks, descriptions do not)."""
    return " ".join(str(text).split())


def pieces(description: str) -> list[str]:
    """A description cut into sentences (and "; " clauses), whitespace-normalised, empty ones dropped."""
    return list(cached_pieces(str(description or "")))


@lru_cache(maxsize=1 << 15)
def cached_pieces(description: str) -> tuple[str, ...]:
    """``pieces`` memoised: the descriptions are the index's, cut again by every LightRAG mode."""
    return tuple(p for p in (normalise(s) for s in _SENTENCE_END.split(description)) if p)


def row_forms(shown: str) -> tuple[str, ...]:
    """A description piece as ``compacted_row_parts`` leaves it (``shown``: as the cell shows it): after a
    space, and from its first space on (the first kept piece follows the cell's quote, which cl100k may
    join to its first word)."""
    _, space, rest = shown.partition(" ")
    return (" " + shown, " " + rest) if space else (" " + shown,)


def description_pieces(descriptions: Iterable[str]) -> PieceCounts:
    """The piece table of ``descriptions`` (``row_forms`` of every piece as a cell shows it)."""
    return PieceCounts.of((clean_cell(piece) for description in descriptions
                           for piece in cached_pieces(str(description or ""))), row_forms)


def compacted_row_parts(line: str, kept: Sequence[str]) -> Optional[list[str]]:
    """A compacted row's line cut where cl100k cannot join two pieces (before a space that follows a
    non-space character), around the pieces it kept: the cells before them with the first word, the
    first piece from its first space on, every other piece after its space, then the pointer and the
    cells after. None: not cut (the kept text is not found exactly once, or not followed by a space)."""
    shown = [clean_cell(piece) for piece in kept]
    body = " ".join(shown)
    at = line.find(body) if shown else -1
    if at < 0 or line.find(body, at + 1) >= 0 or line[at + len(body) : at + len(body) + 1] != " ":
        return None
    first, space, rest = shown[0].partition(" ")
    return [line[:at] + first, *([" " + rest] if space else []), *(" " + piece for piece in shown[1:]),
            line[at + len(body) :]]


def sentence_parts(text: str) -> list[str]:
    """``text`` cut before every space that follows a sentence's end (``.``, ``!``, ``?``, ``;``): where
    ``TextOnce.compact`` joins the sentences it keeps."""
    return _AFTER_SENTENCE.split(text)


def sentence_forms(sentence: str) -> tuple[str, str]:
    """A sentence as ``sentence_parts`` leaves it: first in its text, or after a space."""
    return sentence, " " + sentence


class SegmentCounts:
    """The token counts of known segments; ``count`` adds them up and encodes only the unknown ones.
    ``pieces``: a piece table; with ``cut`` (how a segment is cut, only before spaces that follow a
    non-space character) ``count`` takes a segment the table does not know by its parts (the tree
    mode's counter). The LightRAG counter has no ``cut``: ``context_dedup.compact_context`` reads its
    ``pieces`` (``description_pieces``) with the rows' own cut (``compacted_row_parts``)."""

    def __init__(self, table: Mapping[str, int], pieces: Optional[PieceCounts] = None,
                 cut: Optional[Callable[[str], Sequence[str]]] = None) -> None:
        self.table = table
        self.pieces = pieces
        self.cut = cut
        self.blocks: dict[tuple[str, Any], int] = {}

    def block_cost(self, chunk: "ChunkHit") -> int:
        """``lightrag_context.chunk_cost`` with this counter, memoised for the generation by the
        block's citation and text (all the numbered block is made of): the budgets of every LightRAG
        mode cost the same gathered chunks again."""
        from core.citations import hit_citation
        from core.retrieval.lightrag_context import chunk_cost

        key = (hit_citation(chunk), chunk.text)
        found = self.blocks.get(key)
        if found is None:
            found = self.blocks[key] = chunk_cost(chunk, self.count)
        return found

    def count(self, text: str) -> int:
        """cl100k tokens of ``text`` (equal to ``core.tokens.count_tokens``). The unknown segments are
        encoded together in one call: joined in order they keep their cuts (each but the text's last
        ends in a line break, each but its first starts with a non-space character)."""
        table, pieces, cut = self.table, self.pieces, self.cut
        total = 0
        unknown: list[str] = []
        for segment in segments(text):
            found = table.get(segment)
            if found is None:
                number = _ROW_NUMBER.match(segment)
                if number is not None and number.end() > 2:
                    found = table.get("1" + segment[number.end() - 1 :])
            if found is None and cut is not None and pieces is not None:
                found = _by_parts(pieces, cut(segment))
            if found is None:
                unknown.append(segment)
            else:
                total += found
        if unknown:
            total += len(encoding().encode_ordinary("".join(unknown)))
        return total


def _by_parts(pieces: PieceCounts, parts: Sequence[str]) -> Optional[int]:
    """A segment's count from its ``parts``: the piece table's, and the rest encoded on its own (a rest may
    start with a space, and a line break then a space is neither of the two proven cuts, so it is not joined
    to the other unknown segments); None when no part is known."""
    if len(parts) < 2:
        return None
    known, left = pieces.add_up(parts)
    if not known:
        return None
    return known + len(encoding().encode_ordinary(left)) if left else known


def count_segments(texts: Iterable[str]) -> dict[str, int]:
    """Every segment of ``texts`` with its count; a text's last segment also as it sits in a context:
    followed by a blank line (between source blocks) and by one line break (the last block)."""
    wanted: dict[str, None] = {}
    for text in texts:
        parts = segments(text)
        if not parts:
            continue
        wanted.update(dict.fromkeys(parts))
        last = parts[-1]
        wanted[last + "\n"] = None
        wanted[last + "\n\n"] = None
    encode = encoding().encode_ordinary
    return {key: len(encode(key)) for key in wanted}


def graph_row_costs(ws: Any) -> dict[tuple[Any, ...], int]:
    """The generation's entity and relation row costs (built once per generation by ``views.derived``)."""
    from core.retrieval.lightrag_context import row_cost_table

    return row_cost_table(ws.views.graph)


def segment_counts(ws: "Workspace") -> SegmentCounts:
    """The segment table of one workspace generation: every chunk text's and summary node's segments,
    and every entity and relation row of the LightRAG tables (numbered 1, with its line break; their costs are the
    generation's row costs, already counted for the budgets), and the pieces of the rows' descriptions that
    a compacted row keeps (``description_pieces``)."""
    from core.retrieval.csv_cells import csv_table

    records = ws.records
    chunks = records.chunks_by_id(records.all_chunk_ids())
    summaries = [node.text for node in ws.views.tree_index.values()]  # the tree mode's summary bodies
    table = count_segments([chunk.text for chunk in chunks.values()] + summaries)
    rows = ws.views.derived(graph_row_costs)
    for cells, cost in rows.items():
        table[csv_table((), [cells]).split("\n", 1)[1] + "\n"] = cost
    return SegmentCounts(table, description_pieces(cells[3] for cells in rows))


def context_counter(ws: "Workspace") -> SegmentCounts:
    """The current generation's ``SegmentCounts`` (built once per generation)."""
    return ws.views.derived(segment_counts)


def summary_sentences(ws: "Workspace") -> PieceCounts:
    """Every sentence of the generation's summary nodes, alone and after a space (``sentence_forms``)."""
    return PieceCounts.of((p for node in ws.views.tree_index.values() for p in pieces(node.text)), sentence_forms)


def tree_segment_counts(ws: "Workspace") -> SegmentCounts:
    """The segment table with the summary sentences' table: a summary shown with its sentences already in
    the context replaced by a pointer is new text each question, counted by its sentences."""
    return SegmentCounts(context_counter(ws).table, ws.views.derived(summary_sentences), sentence_parts)


def tree_context_counter(ws: "Workspace") -> SegmentCounts:
    """The tree mode's counter of the current generation (built once per generation)."""
    return ws.views.derived(tree_segment_counts)


def corpus_tokens(ws: "Workspace") -> int:
    """The corpus's size in tokens (the documents' own counts; built once per generation): no
    context needs more than the whole corpus."""
    return int(ws.records.total_tokens())
