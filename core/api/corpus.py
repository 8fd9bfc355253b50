"""``core.api`` functions that read what was indexed: documents, their chunks and their summary trees.

All are viewer functions. The records come from the store's port: ``DocumentRow`` and ``TreeNode``
(``core.storage.store``), ``Chunk`` (``core.types``); ``documents_table`` and ``dropped_records`` are
plain mappings built for the Documents page's tables (``core.workspace``). Re-exported by ``core.api``.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

from core.auth import Principal, Role, requires
from core.storage.records import DocumentRow, TreeNode
from core.types import Chunk
from core.workspace import Workspace


# --- documents -------------------------------------------------------------------------------------
@requires(Role.viewer)
def documents(principal: Principal, ws: Workspace, doc_status: Optional[str] = None) -> list[DocumentRow]:
    """The workspace's document rows (all, or those with ``doc_status``)."""
    return ws.records.documents(doc_status)


@requires(Role.viewer)
def doc_names(principal: Principal, ws: Workspace) -> dict[str, str]:
    """Document id → file name."""
    return ws.doc_names()


@requires(Role.viewer)
def documents_table(principal: Principal, ws: Workspace) -> list[dict[str, Any]]:
    """One row per document: status, chunks, entities, dropped records, tokens, error, time (a table's
    rows: doc_id, name, status, chunks, entities, dropped, tokens, error, seconds, updated_at). A document
    left 'processing' while no process holds the write lock (its run crashed or was killed) reads
    'interrupted': Resume indexes it."""
    rows = ws.documents_table()
    if any(row["status"] == "processing" for row in rows) and not ws.writer_active():
        for row in rows:
            if row["status"] == "processing":
                row["status"] = "interrupted"
    return rows


@requires(Role.viewer)
def dropped_records(principal: Principal, ws: Workspace) -> dict[str, dict[str, Any]]:
    """Per indexed document, what the extraction parser dropped at its last indexing (``dropped``,
    ``reasons``, ``examples``, ``extractor``, ``chunks``: the logged JSON record)."""
    return ws.dropped_records()


NAMED_AT_MOST = 10  # documents named in the position message; the rest are counted


def _named(names: list[str]) -> str:
    shown = ", ".join(names[:NAMED_AT_MOST])
    return shown + (f" and {len(names) - NAMED_AT_MOST} more" if len(names) > NAMED_AT_MOST else "")


@requires(Role.viewer)
def position_gaps(principal: Principal, ws: Workspace) -> str:
    """What citations cannot say about this workspace's documents, as one message ("" when nothing):
    the PDF, text, Markdown, HTML and DOCX documents indexed before page, section or line positions were
    kept (their citations name chunks until the same file is added again, which reads the positions
    without re-embedding anything; an HTML or DOCX file parsed since, even without headings, is not
    named), and the documents with a chunk whose place in the text was not found (cited by number)."""
    pdfs, spans = ws.records.position_gaps()
    parts = []
    if pdfs:
        parts.append(f"{len(pdfs)} PDF, text, Markdown, HTML or DOCX document(s) were indexed before page, section and line "
                     f"positions were kept, so their citations name chunks, not pages, sections or lines: {_named(pdfs)}. Add the "
                     "same files again (Documents page or `python -m core index`) to read their positions; nothing "
                     "is re-embedded.")
    if spans:
        parts.append(f"{len(spans)} document(s) have chunks whose place in the document text was not found "
                     f"(cited by chunk number): {_named(spans)}. Re-indexing them gives every chunk its place.")
    return " ".join(parts)


@requires(Role.viewer)
def source_view(principal: Principal, ws: Workspace, chunk_id: str, quote: str = "", doc: str = "") -> Any:
    """A cited chunk opened in its document (``core.source_view.SourceView``, None for an unknown
    chunk): a PDF's page rendered with the quote (default: the chunk) highlighted, or the document's
    text around it, escaped, with the span marked. Without a chunk id, the chunk of document ``doc``
    (by name) that holds the quote (an answer line: ``core.citations.quote_candidates``) is opened.
    The role that may read the workspace's documents may view; nothing is written. A quote is used up to
    ``MAX_QUOTE_CHARS`` (the page's own box holds no more; a 2 MB quote crafted into the URL took seconds
    of the server's CPU to look for)."""
    from core.source_view import MAX_QUOTE_CHARS, chunk_of_quote, source_view as view

    quote = quote[:MAX_QUOTE_CHARS]
    if not chunk_id and doc:
        chunk_id, quote = chunk_of_quote(ws, doc, quote)
    return view(ws, chunk_id, quote) if chunk_id else None


# --- chunks ----------------------------------------------------------------------------------------
@requires(Role.viewer)
def chunk_count(principal: Principal, ws: Workspace) -> int:
    """How many chunks the workspace holds (0: nothing indexed yet)."""
    return ws.records.count("chunks")


@requires(Role.viewer)
def chunks_of(principal: Principal, ws: Workspace, doc_id: str) -> list[Chunk]:
    """One document's chunks, in document order."""
    return ws.records.chunks_of(doc_id)


@requires(Role.viewer)
def chunks_by_id(principal: Principal, ws: Workspace, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
    """Chunk id → chunk, for the ids that exist."""
    return ws.records.chunks_by_id(chunk_ids)


@requires(Role.viewer)
def all_chunk_ids(principal: Principal, ws: Workspace) -> list[str]:
    """Every chunk id of the workspace."""
    return ws.records.all_chunk_ids()


# --- summary trees ---------------------------------------------------------------------------------
@requires(Role.viewer)
def doc_roots(principal: Principal, ws: Workspace) -> dict[str, tuple[str, Optional[str]]]:
    """Per document: (the root of its summary tree, its summary text or None)."""
    return ws.records.doc_roots()


@requires(Role.viewer)
def tree_index(principal: Principal, ws: Workspace) -> dict[str, TreeNode]:
    """The summary trees' nodes by id."""
    return ws.tree_index()


READABLE_MAX_LEAVES = 5000  # above this, a node's text is read without its leaves' parsed sentences


def _readable_memo(ws: Workspace) -> dict[str, str]:
    """Node id → its readable summary, filled as nodes are read (one memo per generation: every rerun of
    the Summary tree page would otherwise read the sentence rows of all the node's leaves again)."""
    return {}


@requires(Role.viewer)
def readable_summary(principal: Principal, ws: Workspace, node_id: str) -> str:
    """A summary-tree node's text for reading: cut at its leaves' parsed sentences, each title line set
    apart by blank lines (``core.indexing.summarize.readable_summary``); "" for an unknown node."""
    from core.indexing.summarize import readable_summary as readable
    from core.indexing.tree import load_rows

    memo = ws.views.derived(_readable_memo)
    if node_id not in memo:
        node = ws.tree_index().get(node_id)
        if node is None:
            return ""
        leaves = list(node.leaf_chunk_ids)
        rows = load_rows(ws.records, leaves) if 0 < len(leaves) <= READABLE_MAX_LEAVES else {}
        memo[node_id] = readable(node.text or "", [s for sentences in rows.values() for s in sentences])
    return memo[node_id]
