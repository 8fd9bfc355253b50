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
from functools import lru_cache
from itertools import accumulate
from typing import Any, Callable, Sequence, TypeVar

from core.retrieval.context_blocks import fit_to_budget
from core.retrieval.lightrag_context import Budgeted, render_context
from core.types import ChunkHit, EntityHit, RelationHit

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")  # a description's pieces: sentences or "; " clauses
MIN_PIECE_CHARS = 24  # shorter pieces ("St.", "Ltd.") are kept: too short to stand for a sentence


def normalise(text: str) -> str:
    """Whitespace collapsed to single spaces (chunks keep line breaks, descriptions do not)."""
    return " ".join(str(text).split())


def pieces(description: str) -> list[str]:
    """A description cut into sentences (and "; " clauses), whitespace-normalised, empty ones dropped."""
    return list(_pieces(str(description or "")))


@lru_cache(maxsize=1 << 15)
def _pieces(description: str) -> tuple[str, ...]:
    """``pieces`` memoised: the descriptions are the index's, cut again by every LightRAG mode."""
    return tuple(p for p in (normalise(s) for s in _SENTENCE_END.split(description)) if p)


class TextOnce:
    """Where each piece of text was first shown: a source (``[n]``, its number in the Sources section,
    unless ``labels`` name the sources otherwise) or an earlier row's label."""

    def __init__(self, chunks: Sequence[ChunkHit], labels: Sequence[str] | None = None) -> None:
        self.sources = [normalise(c.text or "") for c in chunks]
        self.labels = list(labels) if labels is not None else [f"[{n}]" for n in range(1, len(chunks) + 1)]
        self.rows: dict[str, str] = {}
        self.hits = 0
        # The sources joined by line breaks, which neither a normalised source nor a piece contains: a
        # piece found in the joined text lies inside one source, and the first find is the first source.
        self._joined = "\n".join(self.sources)
        self._starts = list(accumulate((len(t) + 1 for t in self.sources[:-1]), initial=0))

    def where(self, piece: str) -> str | None:
        if len(piece) < MIN_PIECE_CHARS:
            return None
        at = self._joined.find(piece)
        if at >= 0:
            return self.labels[bisect_right(self._starts, at) - 1]
        return self.rows.get(piece)

    def compact(self, description: str, label: str) -> str:
        """The description without the pieces shown elsewhere, then a pointer to where they are."""
        kept: list[str] = []
        pointers: list[str] = []
        for piece in _pieces(str(description or "")):
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
        see = "see " + ", ".join(pointers)
        return f"{' '.join(kept)} ({see})" if kept else f"({see})"


def compact_rows(entities: Sequence[EntityHit], relations: Sequence[RelationHit],
                 chunks: Sequence[ChunkHit]) -> tuple[list[EntityHit], list[RelationHit], int]:
    """Copies of the rows with compact descriptions (the records themselves are not changed), and how
    many pieces were replaced by a pointer."""
    seen = TextOnce(chunks)
    out_e = [_described(e, seen.compact(e.description, f"entity {i}")) for i, e in enumerate(entities, 1)]
    out_r = [_described(r, seen.compact(r.description, f"relationship {i}")) for i, r in enumerate(relations, 1)]
    return out_e, out_r, seen.hits


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


def render_compact_within(budgeted: Budgeted, cap: int, counter: Callable[[str], int]) -> tuple[str, int, dict[str, Any]]:
    """The compact context of the budgeted lists, at most ``cap`` tokens: while over, drop the last
    chunk, then relation, then entity, never the last of each (``budgeted``'s lists change in place). Returns the context, its
    tokens and what was done (``dropped``: records dropped for the cap; ``pointers``: pieces of text
    replaced by a pointer)."""
    rendered: dict[str, Any] = {}

    def measure() -> int:
        compact_e, compact_r, rendered["pointers"] = compact_rows(budgeted.entities, budgeted.relations,
                                                                  budgeted.chunks)
        rendered["text"] = render_context(compact_e, compact_r, budgeted.chunks)
        rendered["tokens"] = counter(rendered["text"])
        return rendered["tokens"]

    # floor=1: the cap never empties a list. On a corpus smaller than the tables' own structure (a few
    # one-line documents) the context stays over the corpus by that structure rather than lose every
    # chunk, which left hybrid and mix with no evidence at all.
    dropped = fit_to_budget((budgeted.chunks, budgeted.relations, budgeted.entities), measure, max(cap, 0), floor=1)
    return rendered["text"], rendered["tokens"], {"dropped": dropped, "pointers": rendered["pointers"]}
