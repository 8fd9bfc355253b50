"""Page, section and line places of character spans, and the citation text answers use.

A document with pages (a PDF) keeps, per page, the offset where that page starts in the extracted
text (``SourceDocument.page_starts``, stored in ``doc_positions``). A chunk is an exact substring of its
document (``Chunk.start_char``), so its pages are the pages its first and last character fall on.
Formats without pages keep other positions in the same table: the offset of each section heading
(DOCX, HTML, Markdown: kind ``section``, the heading read back from the stored text) and, for text and
Markdown, one ``line`` row that says the document is cited by line (line 1 starts at 0; every other
line start is computed from the stored text when it is read, not stored). An HTML or DOCX file in which no
heading was found keeps one ``kept`` row, so it is not taken for a file indexed before positions were
kept. A citation names the most
precise place known: ``p. 12``, else ``§ Heading`` (the section the span starts in), else ``l. 40`` /
``ll. 40–52``, else ``chunk n`` (JSONL records, LightRAG imports, spans before the first heading of an HTML/DOCX file, unknown offsets).
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, NamedTuple, Optional, Sequence

LOCATE_WORDS = 12  # a quoted sentence is found in its chunk by (at most) its first words
LOOSE_WORDS = 5  # the fewest first words that place a quoted sentence whose later words differ from the text
HEADING_CHARS = 60  # a section heading in a citation is cut to this many characters
MAX_QUOTE_CHARS = 2000  # the longest quote the source viewer looks for (its box holds as many; issue 38)


@dataclass(frozen=True)
class DocPositions:
    """Where a document's pages, sections (offset and heading text) and lines start in its text."""

    pages: Sequence[int] = ()
    sections: Sequence[tuple[int, str]] = ()
    lines: Sequence[int] = ()
    kept: bool = False  # positions were looked for when the file was parsed, even where none were found

    def __bool__(self) -> bool:
        return bool(self.pages or self.sections or self.lines or self.kept)


class Where(NamedTuple):
    """The place of a span: pages (PDF), else its section, else its lines (all 1-based; None: unknown)."""

    page_start: Optional[int] = None
    page_end: Optional[int] = None
    section: Optional[str] = None
    line_start: Optional[int] = None
    line_end: Optional[int] = None


def heading_title(raw: str) -> str:
    """A section heading as a citation shows it: its first line, Markdown ``#`` marks and brackets
    dropped, spaces collapsed, cut to ``HEADING_CHARS``."""
    line = (raw or "").strip().split("\n", 1)[0].strip()
    line = re.sub(r"^#{1,6}\s*", "", line)
    line = re.sub(r"\s+#+\s*$", "", line)
    line = " ".join(line.replace("[", " ").replace("]", " ").split())
    return line if len(line) <= HEADING_CHARS else line[: HEADING_CHARS - 1].rstrip() + "\u2026"


def line_starts(text: str) -> list[int]:
    """The offset where each line of ``text`` starts (line 1 at 0)."""
    return [0] + [m.end() for m in re.finditer("\n", text) if m.end() < len(text)]


SECTIONED_SUFFIXES = (".html", ".htm", ".docx")  # formats whose loaders look for section headings only


def source_positions(doc_id: str, source: Any) -> list[tuple[str, str, list[int]]]:
    """``(doc_id, kind, starts)`` to store for a loaded document (``core.types.SourceDocument``): its
    pages, its section headings, one ``line`` row (line 1 at 0) when it is cited by line (the other
    lines are computed from the stored text on read)."""
    out = [(doc_id, kind, list(starts)) for kind, starts in (("page", source.page_starts),
                                                            ("section", source.section_starts)) if starts]
    if source.by_line and source.text:
        out.append((doc_id, "line", [0]))
    if not out and str(source.source or source.name).lower().endswith(SECTIONED_SUFFIXES):
        out.append((doc_id, "kept", [0]))
    return out


def where_of(positions: Optional[DocPositions], start_char: int, length: int) -> Where:
    """The place of the span ``[start_char, start_char + length)``: its pages when the document has
    pages, else the section its first character is in, else its lines; empty when none is known."""
    if not positions or start_char < 0:
        return Where()
    if positions.pages:
        return Where(*page_range(positions.pages, start_char, length))
    if positions.sections:
        at = bisect_right([s for s, _ in positions.sections], start_char)
        if at > 0 and positions.sections[at - 1][1]:
            return Where(section=positions.sections[at - 1][1])
    if positions.lines:
        return Where(line_start=page_of(positions.lines, start_char),
                     line_end=page_of(positions.lines, start_char + max(1, length) - 1))
    return Where()


def page_of(page_starts: Sequence[int], offset: int) -> Optional[int]:
    """The 1-based page holding character ``offset`` of the text (None: no pages or unknown offset)."""
    if not page_starts or offset < 0:
        return None
    return max(1, bisect_right(page_starts, offset))  # any sorted sequence: a document's lines are not copied


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


def lines_label(line_start: Optional[int], line_end: Optional[int]) -> str:
    """``l. 40`` or ``ll. 40–52``; empty when the lines are not known."""
    if line_start is None:
        return ""
    if line_end is None or line_end == line_start:
        return f"l. {line_start}"
    return f"ll. {line_start}\u2013{line_end}"


def where_label(page_start: Optional[int] = None, page_end: Optional[int] = None,
                chunk_order: Optional[int] = None, section: Optional[str] = None,
                line_start: Optional[int] = None, line_end: Optional[int] = None) -> str:
    """Where in its document a source sits: ``p. 12`` / ``pp. 3–4`` when the pages are known, else
    ``§ Heading``, else ``l. 40`` / ``ll. 40–52``, else ``chunk n`` (``chunk_order`` is 0-based), else empty."""
    where = pages_label(page_start, page_end)
    if not where and section:
        where = f"\u00a7 {section}"
    if not where:
        where = lines_label(line_start, line_end)
    if not where and chunk_order is not None and chunk_order >= 0:
        where = f"chunk {chunk_order + 1}"
    return where


def citation_body(doc_name: str, page_start: Optional[int] = None, page_end: Optional[int] = None,
                  chunk_order: Optional[int] = None, section: Optional[str] = None,
                  line_start: Optional[int] = None, line_end: Optional[int] = None) -> str:
    """The citation without its brackets: ``doc, p. 12``, ``doc, § Heading``, ``doc, l. 40``,
    ``doc, chunk n`` or ``doc``."""
    where = where_label(page_start, page_end, chunk_order, section, line_start, line_end)
    return f"{doc_name}, {where}" if where else doc_name


def hit_citation(hit: Any) -> str:
    """The citation body of a chunk hit (or any record with ``doc_name``, ``order`` and the place fields)."""
    return citation_body(getattr(hit, "doc_name", "") or getattr(hit, "doc_id", ""), getattr(hit, "page_start", None),
                         getattr(hit, "page_end", None), getattr(hit, "order", None), getattr(hit, "section", None),
                         getattr(hit, "line_start", None), getattr(hit, "line_end", None))


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
    where = quote_where(DocPositions(pages=page_starts), chunk_start, chunk_text, quote)
    return where.page_start, where.page_end


def quote_where(positions: Optional[DocPositions], chunk_start: int, chunk_text: str, quote: str) -> Where:
    """The place (pages, section or lines) of a sentence quoted from a chunk: of its own characters
    when it is found in the chunk's text, else the chunk's; empty without positions or a known offset."""
    if not positions or chunk_start < 0:
        return Where()
    start, end = locate(chunk_text, quote)
    if start < 0:
        start, end = locate_head(chunk_text, quote)
    if start < 0:
        return where_of(positions, chunk_start, len(chunk_text))
    return where_of(positions, chunk_start + start, end - start)


def locate_head(text: str, quote: str) -> tuple[int, int]:
    """Where a quoted sentence whose characters differ from ``text`` starts: its word tokens in order
    with only non-word characters between (``_you_`` is ``you``), all of them when they match (however
    few), else the longest run of its first ones (``LOOSE_WORDS`` at least); ``end`` is the match's end
    when all matched, else the start plus the quote's length, capped. A stored sentence drops markup the text
    keeps (Gutenberg's ``_emphasis_``, ``{<object definition>}`` read as ``{}``, ``<https://…>``), so
    ``locate`` misses it and the citation fell back to the whole chunk's pages. ``(-1, -1)`` when even
    the shortest run is absent."""
    tokens = re.findall(r"[^\W_]+", quote)
    for size in [len(tokens)] + list(range(min(len(tokens) - 1, LOCATE_WORDS), LOOSE_WORDS - 1, -1)):
        if not size:
            break
        match = re.search(r"[\W_]*".join(re.escape(w) for w in tokens[:size]), text)
        if match is not None:
            return match.start(), match.end() if size == len(tokens) else min(len(text), match.start() + len(quote))
    return -1, -1


_CITED = re.compile(r"\[([^\[\]\n]{1,200}?),\s*(?:(pp?)\.\s*(\d+)(?:\s*[\u2013-]\s*(\d+))?|chunk\s+(\d+)"
                    r"|(ll?)\.\s*(\d+)(?:\s*[\u2013-]\s*(\d+))?|\u00a7\s*([^\[\]\n]{1,80}?))\s*\]")


class Source(NamedTuple):
    """Where a chunk is: its document's name, pages, chunk order (0-based), section and lines."""

    doc: str
    page_start: Optional[int]
    page_end: Optional[int]
    order: Optional[int]
    section: Optional[str] = None
    line_start: Optional[int] = None
    line_end: Optional[int] = None


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


def _numbered(singular: str, plural: str, numbers: Sequence[int]) -> str:
    return f"{plural if len(set(numbers)) > 1 else singular} {_runs(numbers)}" if numbers else ""


def sources_label(places: Sequence[Source]) -> list[str]:
    """One citation body per document for the chunks an entity, relation, path hop or summary rests
    on, documents in first-seen order: ``report.pdf, pp. 3, 5–6`` (the pages of all its chunks) or,
    for a document without pages, its sections (``guide.md, § Setup, § Usage``), then the lines
    (``notes.txt, ll. 3–9, 40``) and chunk numbers (``records, chunks 2, 4``, 1-based) of the rest."""
    found: dict[str, tuple[list[int], list[str], list[int], list[int]]] = {}
    for place in places:
        source = Source(*place)
        pages, sections, lines, orders = found.setdefault(source.doc, ([], [], [], []))
        if source.page_start is not None:
            pages.extend(range(source.page_start, (source.page_end or source.page_start) + 1))
        elif source.section:
            sections.append(source.section)
        elif source.line_start is not None:
            lines.extend(range(source.line_start, min((source.line_end or source.line_start), source.line_start + 999) + 1))
        elif source.order is not None and source.order >= 0:
            orders.append(source.order + 1)
    out = []
    for doc, (pages, sections, lines, orders) in found.items():
        if pages:
            out.append(f"{doc}, {_numbered('p.', 'pp.', pages)}")
            continue
        parts = [f"\u00a7 {s}" for s in dict.fromkeys(sections)]
        parts += [p for p in (_numbered("l.", "ll.", lines), _numbered("chunk", "chunks", orders)) if p]
        out.append(", ".join([doc, *parts]))
    return out


def cited_places(text: str) -> list[tuple[str, str, int, int]]:
    """The ``[doc, p. n]``, ``[doc, pp. n–m]``, ``[doc, l. n]``, ``[doc, ll. n–m]``, ``[doc, § Heading]``
    and ``[doc, chunk n]`` citations written in ``text``: ``(citation as written, "page" | "line" |
    "section" | "chunk", first, last)`` (chunk numbers 1-based as written; 0, 0 for a section)."""
    out = []
    for m in _CITED.finditer(text or ""):
        if m.group(2):
            first = int(m.group(3))
            out.append((m.group(0), "page", first, int(m.group(4) or first)))
        elif m.group(6):
            first = int(m.group(7))
            out.append((m.group(0), "line", first, int(m.group(8) or first)))
        elif m.group(9):
            out.append((m.group(0), "section", 0, 0))
        else:
            out.append((m.group(0), "chunk", int(m.group(5)), int(m.group(5))))
    return out


def quoted_before(text: str) -> list[tuple[str, str, str]]:
    """``(citation as written, document name, quoted text)`` for each citation of an answer: the text
    between the previous citation (or the line's start) and this one, bold marks dropped; the caller
    finds the quote in a chunk of that document (``quote_candidates`` gives its likely starts)."""
    out, pos = [], 0
    for written, _, _, _ in cited_places(text):
        at = text.index(written, pos)
        segment = text[max(pos, text.rfind("\n", 0, at) + 1):at].replace("**", "").strip()
        pos = at + len(written)
        out.append((written, _CITED.match(written).group(1).strip(), segment))  # type: ignore[union-attr]
    return out


def quote_candidates(segment: str) -> list[str]:
    """The quoted sentence of an answer line, longest first: the whole segment, then what follows a
    label (``- chunk #2: …``, ``- Ebenezer Scrooge — …``) or a path hop's opening bracket (``—[…``)."""
    out = [segment.strip()]
    for mark in (": ", "\u2014[", " \u2014 "):
        at = segment.find(mark)
        if at >= 0:
            out.append(segment[at + len(mark):].strip())
    return [c for c in dict.fromkeys(out) if c]


def _covered(first: int, last: int, ranges: Iterable[tuple[Optional[int], Optional[int]]]) -> bool:
    spans = [(a, b or a) for a, b in ranges if a is not None]
    return last - first < 1000 and all(any(a <= n <= b for a, b in spans) for n in range(first, last + 1))


def unsupported_citations(text: str, sources: Sequence[Source]) -> list[str]:
    """The citations of ``text`` (as written) that name no source of the context: a document that
    is not there, a page or line outside every range of that document's sources, a section none of
    them is in, or a chunk number none of them has. An LLM reply's citations are checked this way
    before they are shown."""
    bad = []
    for written, kind, first, last in cited_places(text):
        match = _CITED.match(written)
        doc = match.group(1).strip().casefold()  # type: ignore[union-attr]
        mine = [Source(*s) for s in sources if s[0].strip().casefold() == doc]
        if kind == "page":
            ok = _covered(first, last, ((s.page_start, s.page_end) for s in mine))
        elif kind == "line":
            ok = _covered(first, last, ((s.line_start, s.line_end) for s in mine))
        elif kind == "section":
            heading = match.group(9).strip().casefold()  # type: ignore[union-attr]
            ok = any((s.section or "").casefold() == heading for s in mine)
        else:
            ok = any(s.order is not None and s.order + 1 == first for s in mine)
        if not ok:
            bad.append(written)
    return list(dict.fromkeys(bad))


def chunk_sources(records: Any, names: Mapping[str, str], chunk_ids: Iterable[str]) -> dict[str, Source]:
    """``chunk_id -> Source`` (doc name, pages, chunk order, section, lines) of the chunks that exist,
    from a record store's ``chunk_places`` and ``positions`` (no chunk text read)."""
    places = records.chunk_places(chunk_ids)
    positions = records.positions({p[0] for p in places.values()})
    out: dict[str, Source] = {}
    for chunk_id, (doc_id, order, start, length) in places.items():
        where = where_of(positions.get(doc_id), start, length)
        out[chunk_id] = Source(names.get(doc_id, doc_id), where.page_start, where.page_end, order,
                               where.section, where.line_start, where.line_end)
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
