"""What every mode does with its ``RetrievalResult``: start it with the settings it reads
(``new_result``), fill its chunk records from the store in one query (``fill_chunk_texts``) and set
the rendered context, its token count and the evidence list (``finish``). Above the question object
(``core.retrieval.query``) and below the modes."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Optional, Sequence

from core.citations import where_of
from core.retrieval.generation_rows import chunk_rows, source_labels
from core.tokens import count_tokens
from core.types import ChunkHit, RetrievalResult, SummaryHit, _GraphHit

if TYPE_CHECKING:
    from core.retrieval.query import QueryContext
    from core.workspace import Workspace


def new_result(ctx: QueryContext, mode: str, param_names: Sequence[str]) -> RetrievalResult:
    """An empty result of ``mode`` for the context's question, recording the settings it reads."""
    params = {name: getattr(ctx.settings, name) for name in param_names}
    return RetrievalResult(mode=mode, query=ctx.question, params=params)


def fill_chunk_texts(ws: Workspace, records: list[ChunkHit]) -> list[ChunkHit]:
    """Fill doc ids, names, places (pages, section, lines) and texts of chunk records (the generation's
    chunk rows, ``core.retrieval.generation_rows``: one query for the chunks not read yet); drop vanished chunks."""
    rows = chunk_rows(ws)  # read from the store once per generation
    chunks = rows.chunks(r.chunk_id for r in records)
    names = ws.doc_names()
    positions = rows.doc_positions({c.doc_id for c in chunks.values()})
    out = []
    for record in records:
        chunk = chunks.get(record.chunk_id)
        if chunk is None:
            continue
        record.doc_id, record.doc_name, record.order = chunk.doc_id, names.get(chunk.doc_id, chunk.doc_id), chunk.order
        record.text = record.text or chunk.text
        if chunk.doc_id in positions:
            (record.page_start, record.page_end, record.section, record.line_start,
             record.line_end) = where_of(positions[chunk.doc_id], chunk.start_char, len(chunk.text))
        out.append(record)
    return out


CITED_CHUNKS = 60  # a hit's citation is read from at most this many of its source chunks (a corpus summary has all)


def cite_sources(ws: Workspace, result: RetrievalResult) -> RetrievalResult:
    """Set ``cited`` on the result's entities, relations and summaries and ``hop_cited`` on its paths:
    where (document and pages, or chunk numbers for a document without pages) the chunks they rest on
    are, read in one query without the chunk texts. Hits without source chunks (LightRAG imports
    without chunk ids) are left without a citation."""
    wanted: list[list[str]] = []
    hits: list[_GraphHit | SummaryHit] = []
    for hit in [*result.entities, *result.relations]:
        hits.append(hit)
        wanted.append(list(hit.source_chunk_ids)[:CITED_CHUNKS])
    for summary in result.summaries:
        hits.append(summary)
        wanted.append(list(summary.leaf_chunk_ids)[:CITED_CHUNKS])
    hops: list[list[list[str]]] = []
    if result.paths:
        graph = ws.views.graph
        for path in result.paths:
            hops.append([list(graph.relation_attributes(e.source_key, e.target_key).get("source_chunk_ids") or [])
                         [:CITED_CHUNKS] if graph.has_relation(e.source_key, e.target_key) else []
                         for e in path.relations])
    ids = {c for group in wanted for c in group} | {c for path in hops for hop in path for c in hop}
    if not ids:
        return result
    labels = source_labels(ws)  # places and labels kept for the generation: the same lists recur
    labels.load(ids)
    label = labels.label

    for target, group in zip(hits, wanted):
        if group:
            target.cited = label(group)
    for path, path_hops in zip(result.paths, hops):
        path.hop_cited = ["; ".join(label(hop)) for hop in path_hops]
    return result


def finish(result: RetrievalResult, context_text: str, evidence: Iterable[str],
           counter: Optional[Callable[[str], int]] = None) -> RetrievalResult:
    """Set the rendered context, its token count (``counter``, exact: default ``count_tokens``; the
    modes pass the generation's ``core.retrieval.token_counts`` counter) and the ordered,
    de-duplicated evidence chunk ids."""
    result.context_text = context_text
    result.context_tokens = (counter or count_tokens)(context_text)
    result.evidence_chunk_ids = list(dict.fromkeys(c for c in evidence if c))
    return result
