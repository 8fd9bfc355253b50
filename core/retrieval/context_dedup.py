"""Each piece of text once in a LightRAG context, and never more tokens than the corpus.

Offline, an entity's or a relation's description is made of sentences copied from its source chunks,
so the rendered context used to hold the same sentence up to three times: in the entities table, in
the relationships table and in the Sources section (on the sample corpus every LightRAG mode built
23-27k tokens from a 12.5k-token corpus). ``compact_rows`` rewrites the descriptions *for rendering
only*: a sentence found in a source chunk of the context becomes a pointer to that source
("see [3]"), a sentence already shown in an earlier row becomes a pointer to that row ("see
entity 2"). What the mode selected (entities, relations, chunks, their order and evidence) is not
changed, and every word removed is still in the context, so recall@k and answer-in-context stay as
they were. ``render_compact_within`` then holds the context to ``cap`` tokens (the corpus's size):
only when the compact context is still larger than the corpus (small corpora; never on the dev sets)
it drops the last chunks, then relation rows, then entity rows, the order of the token budgets.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate
from typing import Any, Callable, Sequence, TypeVar

from core.retrieval.context_blocks import fit_to_budget, sources_text
from core.retrieval.csv_cells import LineWriter
from core.retrieval.lightrag_context import (Budgeted, RowCosts, context_from_lines, csv_line, entity_row, relation_row,
                                             render_context)
from core.retrieval.token_counts import PieceCounts, cached_pieces, compacted_row_parts, normalise, pieces
from core.types import ChunkHit, EntityHit, RelationHit

MIN_PIECE_CHARS = 24  # shorter pieces ("St.", "Ltd.") are kept: too short to stand for a sentence


class TextOnce:
    """Where each piece of text was first shown: a source (``[n]``, its number in the Sources section,
    unless ``labels`` name the sources otherwise) or an earlier row's label."""

    def __init__(self, chunks: Sequence[ChunkHit], labels: Sequence[str] | None = None) -> None:
        self.sources = [normalise(c.text or "") for c in chunks]
        self.labels = list(labels) if labels is not None else [f"[{n}]" for n in range(1, len(chunks) + 1)]
        self.rows: dict[str, str] = {}
        self.kept: dict[str, list[str]] = {}  # a compacted row's label -> the pieces it kept, in order
        self.hits = 0
        # The sources joined by line breaks, which neither a normalised source nor a piece contains: a
        # piece found in the joined text lies inside one source, and the first find is the first source.
        self._joined = "\n".join(self.sources)
        self._starts = list(accumulate((len(t) + 1 for t in self.sources[:-1]), initial=0))
        self._in_sources: dict[str, str | None] = {}  # piece -> its first source's label, None: none

    def where(self, piece: str) -> str | None:
        if len(piece) < MIN_PIECE_CHARS:
            return None
        if piece in self._in_sources:  # the sources never change, so each piece is searched once
            source = self._in_sources[piece]
        else:
            at = self._joined.find(piece)
            source = self._in_sources[piece] = self.labels[bisect_right(self._starts, at) - 1] if at >= 0 else None
        return source if source is not None else self.rows.get(piece)

    def compact(self, description: str, label: str) -> str:
        """The description without the pieces shown elsewhere, then a pointer to where they are."""
        kept: list[str] = []
        pointers: list[str] = []
        for piece in cached_pieces(str(description or "")):
            place = self.where(piece)
            if place is None:
                kept.append(piece)
                self.rows.setdefault(piece, label)
            else:
                self.hits += 1
                if place not in pointers:
                    pointers.append(place)
        if not pointers:
            return description
        self.kept[label] = kept
        see = "see " + ", ".join(pointers)
        return f"{' '.join(kept)} ({see})" if kept else f"({see})"


def compact_rows(entities: Sequence[EntityHit], relations: Sequence[RelationHit],
                 chunks: Sequence[ChunkHit]) -> tuple[list[EntityHit], list[RelationHit], int]:
    """Copies of the rows with compact descriptions (the records themselves are not changed), and how
    many pieces were replaced by a pointer."""
    out_e, out_r, seen = _compacted(entities, relations, chunks)
    return out_e, out_r, seen.hits


def _compacted(entities: Sequence[EntityHit], relations: Sequence[RelationHit],
               chunks: Sequence[ChunkHit]) -> tuple[list[EntityHit], list[RelationHit], TextOnce]:
    seen = TextOnce(chunks)
    out_e = [_described(e, seen.compact(e.description, f"entity {i}")) for i, e in enumerate(entities, 1)]
    out_r = [_described(r, seen.compact(r.description, f"relationship {i}")) for i, r in enumerate(relations, 1)]
    return out_e, out_r, seen


Described = TypeVar("Described", EntityHit, RelationHit)


def _described(record: Described, description: str) -> Described:
    """``record`` itself when its description is unchanged (it is only read to render), else a shallow
    copy with the new description (the record itself is never changed)."""
    if description is record.description:
        return record
    out = object.__new__(type(record))  # a shallow copy (copy.copy's reduce protocol costs several times more)
    out.__dict__.update(record.__dict__)
    out.description = description
    return out


def render_compact(entities: Sequence[EntityHit], relations: Sequence[RelationHit],
                   chunks: Sequence[ChunkHit]) -> str:
    """``render_context`` with compact descriptions."""
    compact_e, compact_r, _ = compact_rows(entities, relations, chunks)
    return render_context(compact_e, compact_r, chunks)


def compact_context(budgeted: Budgeted, counter: Callable[[str], int], row_costs: RowCosts | None = None,
                    pieces: PieceCounts | None = None) -> tuple[str, int, int]:
    """``render_compact`` of the budgeted lists, its tokens (equal to ``counter`` of the whole text) and
    the pieces replaced by a pointer. The count is taken row by row: every table row is one line that
    starts with its number, and cl100k never merges across a line break followed by text, so the
    context's tokens are those of the context without table rows plus each row with its line break.
    A row whose description is unchanged costs what the generation's ``row_costs`` say (counted once
    per generation); only the compacted rows are encoded, in one call, less their kept pieces that
    ``pieces`` (the generation's ``token_counts.description_pieces``) counts (``compacted_row_parts``)."""
    compact_e, compact_r, seen = _compacted(budgeted.entities, budgeted.relations, budgeted.chunks)
    pointers = seen.hits
    known = [0]
    unknown: list[str] = []
    record_line = LineWriter()

    def lines(records: Sequence[Any], originals: Sequence[Any], row: Callable[[Any, int], tuple[Any, ...]],
              noun: str) -> list[str]:
        out = []
        for number, (record, original) in enumerate(zip(records, originals), 1):
            cost = counted = None
            if record is original:  # description unchanged: the memoised line and the generation's count
                line = csv_line(row(record, number))
                if row_costs is not None and number < 1000:  # 1-3 digit numbers cost what row 1 costs
                    cost = row_costs.get(row(record, 1))
            else:
                line = record_line(row(record, number))
                if pieces is not None:
                    parts = compacted_row_parts(line, seen.kept.get(f"{noun} {number}", ()))
                    counted = None if parts is None else pieces.add_up(parts)
            if counted is not None:
                known[0] += counted[0]
                unknown.append(counted[1] + "\n")
            elif cost is None:
                unknown.append(line + "\n")
            else:
                known[0] += cost
            out.append(line)
        return out

    entity_lines = lines(compact_e, budgeted.entities, entity_row, "entity")
    relation_lines = lines(compact_r, budgeted.relations, relation_row, "relationship")
    sources = sources_text(budgeted.chunks)
    tokens = counter(context_from_lines([], [], sources)) + known[0] + (counter("".join(unknown)) if unknown else 0)
    return context_from_lines(entity_lines, relation_lines, sources), tokens, pointers


def render_compact_within(budgeted: Budgeted, cap: int, counter: Callable[[str], int],
                          row_costs: RowCosts | None = None,
                          pieces: PieceCounts | None = None) -> tuple[str, int, dict[str, Any]]:
    """The compact context of the budgeted lists, at most ``cap`` tokens: while over, drop the last
    chunk, then relation, then entity, never the last of each (``budgeted``'s lists change in place). Returns the context, its
    tokens and what was done (``dropped``: records dropped for the cap; ``pointers``: pieces of text
    replaced by a pointer). ``row_costs``: the generation's row costs (``compact_context``)."""
    rendered: dict[str, Any] = {}

    def measure() -> int:
        rendered["text"], rendered["tokens"], rendered["pointers"] = compact_context(budgeted, counter, row_costs, pieces)
        return rendered["tokens"]

    # floor=1: the cap never empties a list. On a corpus smaller than the tables' own structure (a few
    # one-line documents) the context stays over the corpus by that structure rather than lose every
    # chunk, which left hybrid and mix with no evidence at all.
    dropped = fit_to_budget((budgeted.chunks, budgeted.relations, budgeted.entities), measure, max(cap, 0), floor=1)
    return rendered["text"], rendered["tokens"], {"dropped": dropped, "pointers": rendered["pointers"]}
