"""Page ranges of character spans and the citation text answers use.

A document with pages (a PDF) keeps, per page, the offset where that page starts in the extracted
text (``SourceDocument.page_starts``, stored in ``doc_positions``). A chunk is an exact substring of its
document (``Chunk.start_char``), so its pages are the pages its first and last character fall on.
Documents without pages (text, Markdown, HTML, DOCX, JSONL records, LightRAG imports) and chunks
whose offset is unknown (-1) have no page: the citation then names the chunk, as before.
"""
from __future__ import annotations

from bisect import bisect_right
from typing import Optional, Sequence


def page_of(page_starts: Sequence[int], offset: int) -> Optional[int]:
    """The 1-based page holding character ``offset`` of the text (None: no pages or unknown offset)."""
    if not page_starts or offset < 0:
        return None
    return max(1, bisect_right(list(page_starts), offset))


def page_range(page_starts: Sequence[int], start_char: int, length: int) -> tuple[Optional[int], Optional[int]]:
    """``(page_start, page_end)`` of the span ``[start_char, start_char + length)``, 1-based and
    inclusive; ``(None, None)`` when the document has no pages or the span's offset is unknown."""
    first = page_of(page_starts, start_char)
    if first is None:
        return None, None
    last = page_of(page_starts, start_char + max(1, length) - 1)
    return first, last if last is not None else first


def pages_label(page_start: Optional[int], page_end: Optional[int]) -> str:
    """``p. 3`` or ``pp. 3-4``; empty when the pages are not known."""
    if page_start is None:
        return ""
    if page_end is None or page_end == page_start:
        return f"p. {page_start}"
    return f"pp. {page_start}\u2013{page_end}"


def format_citation(doc_name: str, page_start: Optional[int] = None, page_end: Optional[int] = None,
                    chunk_order: Optional[int] = None) -> str:
    """The citation an answer writes after a quoted sentence: ``[doc, p. 12]`` when the pages are
    known, else ``[doc, chunk n]`` (``chunk_order`` is 0-based), else ``[doc]``."""
    where = pages_label(page_start, page_end)
    if not where and chunk_order is not None:
        where = f"chunk {chunk_order + 1}"
    return f"[{doc_name}, {where}]" if where else f"[{doc_name}]"
