"""Chunk rows, chunk places and citation labels, kept for one workspace generation.

A Compare fills the chunk records of seven modes and cites the source chunks of every entity,
relation, summary and path hop they return; the same chunks, and the same chunk lists, recur across
the modes of one question and across questions. What is read for them depends only on the index,
so it is read once per generation (``views.derived``) and served from memory after that:

* ``ChunkRows`` — each chunk's stored row (document, order, span, text) and each document's
  positions (pages, sections, lines), read from the store the first time a chunk is asked for;
* ``SourceLabels`` — each cited chunk's place (``core.citations.chunk_sources``) and the citation
  label of each chunk list (``core.citations.sources_label``), built the first time that exact list
  is cited.

Nothing of a question is kept. ``fill_chunk_texts`` and ``cite_sources`` (``core.retrieval.results``)
read through these; their results are the store's, as before.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Sequence

from core.citations import DocPositions, Source, chunk_sources, sources_label
from core.types import Chunk

if TYPE_CHECKING:
    from core.workspace import Workspace


class ChunkRows:
    """One generation's chunk rows and document positions, read on demand."""

    def __init__(self, ws: "Workspace") -> None:
        self.ws = ws
        self.rows: dict[str, Optional[Chunk]] = {}  # None: not in the store
        self.positions: dict[str, Optional[DocPositions]] = {}  # None: the document has no positions
        self.lock = threading.Lock()

    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """The stored chunks of ``chunk_ids`` that exist (as ``records.chunks_by_id``)."""
        return self._read_through(self.rows, chunk_ids, self.ws.records.chunks_by_id)

    def doc_positions(self, doc_ids: Iterable[str]) -> dict[str, DocPositions]:
        """The positions of the documents of ``doc_ids`` that have any (as ``records.positions``)."""
        return self._read_through(self.positions, doc_ids, self.ws.records.positions)

    def _read_through(self, cache: dict[str, Any], keys: Iterable[str],
                      load: Callable[[list[str]], dict[str, Any]]) -> dict[str, Any]:
        """``cache``'s values of ``keys``, the keys not asked before read with one ``load`` call (a key the
        store lacks is remembered as None and left out)."""
        ids = list(dict.fromkeys(keys))
        missing = [k for k in ids if k not in cache]
        if missing:
            with self.lock:
                found = load(missing)
            for key in missing:
                cache[key] = found.get(key)
        return {k: value for k in ids if (value := cache[k]) is not None}


def chunk_rows(ws: "Workspace") -> ChunkRows:
    """The workspace's ``ChunkRows`` for its current generation (a new one after any index change)."""
    return ws.views.derived(ChunkRows)


class SourceLabels:
    """One generation's chunk places and chunk-list labels, filled on demand."""

    def __init__(self, ws: "Workspace") -> None:
        self.ws = ws
        self.places: dict[str, Optional[Source]] = {}  # None: the chunk is not in the store
        self.labels: dict[tuple[str, ...], tuple[str, ...]] = {}
        self.lock = threading.Lock()

    def load(self, chunk_ids: Iterable[str]) -> None:
        """Read the places of the chunks not read yet, in one query."""
        missing = [c for c in dict.fromkeys(chunk_ids) if c not in self.places]
        if not missing:
            return
        with self.lock:
            found = chunk_sources(self.ws.records, self.ws.doc_names(), missing)
        for chunk_id in missing:
            self.places[chunk_id] = found.get(chunk_id)

    def label(self, chunk_ids: Sequence[str]) -> list[str]:
        """``sources_label`` of the places of ``chunk_ids`` that exist (a new list each call); the
        places must have been loaded (``load``)."""
        key = tuple(chunk_ids)
        cached = self.labels.get(key)
        if cached is None:
            places = [self.places.get(c) for c in key]
            cached = self.labels[key] = tuple(sources_label([p for p in places if p is not None]))
        return list(cached)


def source_labels(ws: "Workspace") -> SourceLabels:
    """The workspace's ``SourceLabels`` for its current generation (a new one after any index change)."""
    return ws.views.derived(SourceLabels)
