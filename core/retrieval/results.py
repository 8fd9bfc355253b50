"""What every mode does with its ``RetrievalResult``: start it with the settings it reads
(``new_result``), fill its chunk records from the store in one query (``fill_chunk_texts``) and set
the rendered context, its token count and the evidence list (``finish``). Above the question object
(``core.retrieval.query``) and below the modes."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Optional, Sequence

from core.citations import page_range
from core.tokens import count_tokens
from core.types import ChunkHit, RetrievalResult

if TYPE_CHECKING:
    from core.retrieval.query import QueryContext
    from core.workspace import Workspace


def new_result(ctx: QueryContext, mode: str, param_names: Sequence[str]) -> RetrievalResult:
    """An empty result of ``mode`` for the context's question, recording the settings it reads."""
    params = {name: getattr(ctx.settings, name) for name in param_names}
    return RetrievalResult(mode=mode, query=ctx.question, params=params)


def fill_chunk_texts(ws: Workspace, records: list[ChunkHit]) -> list[ChunkHit]:
    """Fill doc ids, names, positions and texts of chunk records in one query; drop vanished chunks."""
    chunks = ws.records.chunks_by_id(r.chunk_id for r in records)
    names = ws.doc_names()
    pages = ws.records.page_starts({c.doc_id for c in chunks.values()})
    out = []
    for record in records:
        chunk = chunks.get(record.chunk_id)
        if chunk is None:
            continue
        record.doc_id, record.doc_name, record.order = chunk.doc_id, names.get(chunk.doc_id, chunk.doc_id), chunk.order
        record.text = record.text or chunk.text
        if chunk.doc_id in pages:
            record.page_start, record.page_end = page_range(pages[chunk.doc_id], chunk.start_char, len(chunk.text))
        out.append(record)
    return out


def finish(result: RetrievalResult, context_text: str, evidence: Iterable[str],
           counter: Optional[Callable[[str], int]] = None) -> RetrievalResult:
    """Set the rendered context, its token count (``counter``, exact: default ``count_tokens``; the
    modes pass the generation's ``core.retrieval.token_counts`` counter) and the ordered,
    de-duplicated evidence chunk ids."""
    result.context_text = context_text
    result.context_tokens = (counter or count_tokens)(context_text)
    result.evidence_chunk_ids = list(dict.fromkeys(c for c in evidence if c))
    return result
