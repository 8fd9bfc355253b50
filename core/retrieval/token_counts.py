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
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional

from core.tokens import encoding

if TYPE_CHECKING:
    from core.types import ChunkHit
    from core.workspace import Workspace

_CUT = re.compile(r"(?<=\n)(?=\S)")  # after a line break, before a non-space character
_ROW_NUMBER = re.compile(r"\d{1,3},")  # a table row's index column (1-3 digits, then the comma)


def segments(text: str) -> list[str]:
    """``text`` cut after every line break that is followed by a non-space character."""
    return _CUT.split(text) if text else []


class SegmentCounts:
    """The token counts of known segments; ``count`` adds them up and encodes only the unknown ones."""

    def __init__(self, table: Mapping[str, int], pieces: Optional[Mapping[str, int]] = None) -> None:
        self.table = table
        self.pieces = pieces  # the graph descriptions' pieces (``context_dedup.piece_counts``), or None
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
        table = self.table
        total = 0
        unknown: list[str] = []
        for segment in segments(text):
            found = table.get(segment)
            if found is None:
                number = _ROW_NUMBER.match(segment)
                if number is not None and number.end() > 2:
                    found = table.get("1" + segment[number.end() - 1 :])
            if found is None:
                unknown.append(segment)
            else:
                total += found
        if unknown:
            total += len(encoding().encode_ordinary("".join(unknown)))
        return total


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
    a compacted row keeps (``context_dedup.piece_counts``)."""
    from core.retrieval.context_dedup import piece_counts
    from core.retrieval.csv_cells import csv_table

    records = ws.records
    chunks = records.chunks_by_id(records.all_chunk_ids())
    summaries = [node.text for node in ws.views.tree_index.values()]  # the tree mode's summary bodies
    table = count_segments([chunk.text for chunk in chunks.values()] + summaries)
    rows = ws.views.derived(graph_row_costs)
    for cells, cost in rows.items():
        table[csv_table((), [cells]).split("\n", 1)[1] + "\n"] = cost
    return SegmentCounts(table, piece_counts(cells[3] for cells in rows))


def context_counter(ws: "Workspace") -> SegmentCounts:
    """The current generation's ``SegmentCounts`` (built once per generation)."""
    return ws.views.derived(segment_counts)


def corpus_tokens(ws: "Workspace") -> int:
    """The corpus's size in tokens (the documents' own counts; built once per generation): no
    context needs more than the whole corpus."""
    return int(ws.records.total_tokens())
