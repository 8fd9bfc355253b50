"""Page ranges of character spans and the citation text answers use.

A document with pages (a PDF) keeps, per page, the offset where that page starts in the extracted
text (``SourceDocument.page_starts``, stored in ``doc_positions``). A chunk is an exact substring of its
document (``Chunk.start_char``), so its pages are the pages its first and last character fall on.
Documents without pages (text, Markdown, HTML, DOCX, JSONL records, LightRAG imports) and chunks
whose offset is unknown (-1) have no page: the citation then names the chunk, as before.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any, Iterable, Mapping, Optional, Sequence

LOCATE_WORDS = 12  # a quoted sentence is found in its chunk by (at most) its first words


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


def where_label(page_start: Optional[int] = None, page_end: Optional[int] = None,
                chunk_order: Optional[int] = None) -> str:
    """Where in its document a source sits: ``p. 12`` / ``pp. 3–4`` when the pages are known, else
    ``chunk n`` (``chunk_order`` is 0-based; the format has no pages), else empty."""
    where = pages_label(page_start, page_end)
    if not where and chunk_order is not None and chunk_order >= 0:
        where = f"chunk {chunk_order + 1}"
    return where


def citation_body(doc_name: str, page_start: Optional[int] = None, page_end: Optional[int] = None,
                  chunk_order: Optional[int] = None) -> str:
    """The citation without its brackets: ``doc, p. 12`` or ``doc, chunk n`` or ``doc``."""
    where = where_label(page_start, page_end, chunk_order)
    return f"{doc_name}, {where}" if where else doc_name


def format_citation(doc_name: str, page_start: Optional[int] = None, page_end: Optional[int] = None,
                    chunk_order: Optional[int] = None) -> str:
    """The citation an answer writes after a quoted sentence: ``[doc, p. 12]`` when the pages are
    known, else ``[doc, chunk n]`` (``chunk_order`` is 0-based), else ``[doc]``."""
    return f"[{citation_body(doc_name, page_start, page_end, chunk_order)}]"


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})  # typographic = plain


def locate(text: str, quote: str) -> tuple[int, int]:
    """``(start, end)`` of ``quote`` inside ``text``, whitespace-insensitive, matched on its first
    ``LOCATE_WORDS`` words (a quoted sentence has its spaces collapsed and may be cut with "…");
    ``(-1, -1)`` when it is not there. ``end`` is the match's end when the whole quote matched,
    else ``start`` plus the quote's length, capped at the text's end."""
    quote, text = quote.translate(_QUOTES), text.translate(_QUOTES)  # one character each: offsets kept
    words = [w for w in quote.replace("\u2026", " ").split() if w]
    if not words:
        return -1, -1
    head = words[:LOCATE_WORDS]
    match = re.search(r"\s+".join(re.escape(w) for w in head), text)
    if match is None:
        return -1, -1
    if len(head) == len(words):
        return match.start(), match.end()
    return match.start(), min(len(text), match.start() + len(quote))


def quote_pages(page_starts: Sequence[int], chunk_start: int, chunk_text: str,
                quote: str) -> tuple[Optional[int], Optional[int]]:
    """The pages of a sentence quoted from a chunk: the pages of its own characters when it is found
    in the chunk's text, else the chunk's pages; ``(None, None)`` without pages or a known offset."""
    if not page_starts or chunk_start < 0:
        return None, None
    start, end = locate(chunk_text, quote)
    if start < 0:
        return page_range(page_starts, chunk_start, len(chunk_text))
    return page_range(page_starts, chunk_start + start, end - start)


_CITED = re.compile(r"\[([^\[\]\n]{1,200}?),\s*(?:(pp?)\.\s*(\d+)(?:\s*[\u2013-]\s*(\d+))?|chunk\s+(\d+))\s*\]")

Source = tuple[str, Optional[int], Optional[int], Optional[int]]  # (doc name, page_start, page_end, chunk order)


def _runs(numbers: Sequence[int]) -> str:
    """``3, 5–7`` from 3, 5, 6, 7 (sorted, de-duplicated)."""
    nums = sorted(set(numbers))
    parts: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        parts.append(str(nums[i]) if i == j else f"{nums[i]}\u2013{nums[j]}")
        i = j + 1
    return ", ".join(parts)


def sources_label(places: Sequence[Source]) -> list[str]:
    """One citation body per document for the chunks an entity, relation, path hop or summary rests
    on, documents in first-seen order: ``report.pdf, pp. 3, 5–6`` (the pages of all its chunks) or,
    for a document without pages, ``notes.txt, chunks 2, 4`` (1-based)."""
    pages: dict[str, list[int]] = {}
    orders: dict[str, list[int]] = {}
    for doc, first, last, order in places:
        pages.setdefault(doc, [])
        orders.setdefault(doc, [])
        if first is not None:
            pages[doc].extend(range(first, (last or first) + 1))
        elif order is not None and order >= 0:
            orders[doc].append(order + 1)
    out = []
    for doc in pages:
        if pages[doc]:
            many = len(set(pages[doc])) > 1
            out.append(f"{doc}, {'pp.' if many else 'p.'} {_runs(pages[doc])}")
        elif orders[doc]:
            out.append(f"{doc}, {'chunks' if len(set(orders[doc])) > 1 else 'chunk'} {_runs(orders[doc])}")
        else:
            out.append(doc)
    return out


def cited_places(text: str) -> list[tuple[str, str, int, int]]:
    """The ``[doc, p. n]``, ``[doc, pp. n–m]`` and ``[doc, chunk n]`` citations written in ``text``:
    ``(citation as written, "page" | "chunk", first, last)`` (chunk numbers 1-based as written)."""
    out = []
    for m in _CITED.finditer(text or ""):
        if m.group(2):
            first = int(m.group(3))
            out.append((m.group(0), "page", first, int(m.group(4) or first)))
        else:
            out.append((m.group(0), "chunk", int(m.group(5)), int(m.group(5))))
    return out


def unsupported_citations(text: str, sources: Sequence[Source]) -> list[str]:
    """The citations of ``text`` (as written) that name no source of the context: a document that
    is not there, a page outside every page range of that document's sources, or a chunk number
    none of its sources has. An LLM reply's citations are checked this way before they are shown."""
    bad = []
    for written, kind, first, last in cited_places(text):
        doc = _CITED.match(written).group(1).strip().casefold()  # type: ignore[union-attr]
        mine = [s for s in sources if s[0].strip().casefold() == doc]
        if kind == "page":
            ok = last - first < 100 and all(any(s[1] is not None and s[1] <= page <= (s[2] or s[1]) for s in mine)
                                             for page in range(first, last + 1))
        else:
            ok = any(s[3] is not None and s[3] + 1 == first for s in mine)
        if not ok:
            bad.append(written)
    return list(dict.fromkeys(bad))


def chunk_sources(records: Any, names: Mapping[str, str], chunk_ids: Iterable[str]) -> dict[str, Source]:
    """``chunk_id -> (doc name, page_start, page_end, chunk order)`` of the chunks that exist, from a
    record store's ``chunk_places`` and ``page_starts`` (two reads, no chunk text)."""
    places = records.chunk_places(chunk_ids)
    pages = records.page_starts({p[0] for p in places.values()})
    out: dict[str, Source] = {}
    for chunk_id, (doc_id, order, start, length) in places.items():
        first, last = page_range(pages.get(doc_id, ()), start, length)
        out[chunk_id] = (names.get(doc_id, doc_id), first, last, order)
    return out


def chunk_offsets(document: str, chunk_texts: Sequence[str]) -> list[int]:
    """Where each of a document's chunks (in order) starts in its text, for workspaces indexed before
    chunk spans were stored: the exact text searched from the previous chunk's start (chunks may
    overlap), else from the top, else the first words (``locate``); -1 where it is not found."""
    out: list[int] = []
    previous = 0
    for chunk in chunk_texts:
        at = document.find(chunk, previous) if chunk else -1
        if at < 0 and chunk:
            at = document.find(chunk)
        if at < 0 and chunk.strip():
            found, _ = locate(document[previous:], chunk)
            at = previous + found if found >= 0 else locate(document, chunk)[0]
        out.append(at)
        if at >= 0:
            previous = at
    return out
