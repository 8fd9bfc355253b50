"""Every chunk row, document position and chunk place of a generation, read once before the tree
mode's first question of that generation instead of chunk by chunk as questions ask for them.

``fill_chunk_texts`` and ``cite_sources`` read through the generation's ``ChunkRows`` and
``SourceLabels`` (``core.retrieval.generation_rows``): a chunk not asked for before costs a store
query inside the question (three short SQLite reads per tree question: the chunks, their documents'
positions, their places for the citations). A question of the tree mode reaches up to 2k chunks and
summaries spread over the whole corpus, so most of its chunks are new to the generation until many
questions have been asked. ``preload_rows`` fills both tables with every chunk in a few batched reads,
once per generation (``views.derived``); the values are the store's, read by the same calls, so every
result is the same. Inside a unit of work (a writer's own reads) the views are private to each call and
nothing is kept, so nothing is read ahead either. Nor above ``PRELOAD_MAX_CHUNKS`` chunks: a question
reaches at most a few thousand of them, and on a corpus of a hundred thousand small documents reading every
row at each new generation (every indexing batch) would cost more than it saves; there rows are read as
questions reach them, as before.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from core.retrieval.generation_rows import chunk_rows, source_labels

if TYPE_CHECKING:
    from core.workspace import Workspace

PRELOAD_MAX_CHUNKS = 20_000


class PreloadedRows:
    """Marker kept for the generation once its rows are read (``ws.views.derived(PreloadedRows)``)."""

    def __init__(self, ws: "Workspace") -> None:
        chunk_ids = list(ws.chunk_order())
        self.chunks = 0
        if len(chunk_ids) > PRELOAD_MAX_CHUNKS:
            return
        rows = chunk_rows(ws)
        chunks = rows.chunks(chunk_ids)
        rows.doc_positions({chunk.doc_id for chunk in chunks.values()})
        source_labels(ws).load(chunk_ids)
        self.chunks = len(chunks)


def preload_rows(ws: "Workspace") -> int:
    """Read the generation's chunk rows, positions and places once (later calls do nothing); the
    number of chunks read (0 inside a unit of work, where views are never kept, and above
    ``PRELOAD_MAX_CHUNKS``)."""
    if ws.records.in_unit_of_work():
        return 0
    return ws.views.derived(PreloadedRows).chunks
