"""Chunking (cl100k tokens): windows of at most ``chunk_tokens`` tokens overlapping by about
``overlap`` tokens, never across documents and never inside a word.

Boundaries snap to a sentence end (``.``, ``!``, ``?``, ``…`` or a line break, followed by
whitespace); a sentence longer than the budget is cut at whitespace; only a single "word" longer
than the whole budget (a base64 blob, a 5,000-character URL) is cut by tokens. The overlap is made
of the previous chunk's last whole sentences (or words) that fit in ``overlap`` tokens.

Every chunk is an exact substring of the document (``start_char`` is its offset), so
``join_without_overlap`` rebuilds the document text exactly. LightRAG and E2GraphRAG cut fixed
token windows, which start chunks mid-word ("ting expanded" became an entity); RAGScope keeps
their sizes (1,200 / 100) and snaps the cut points.

Short documents (``chunk_document`` with ``short_document_chunk_tokens`` set): a document of at most
``short_document_tokens`` tokens is one 1,200-token chunk, so every mode retrieves the same text for
it. With the setting, its paragraphs (blank-line separated; a Markdown heading stays with the
paragraph after it) are packed into chunks of at most that many tokens, cut only between paragraphs;
a paragraph longer than that is chunked as above with that budget. Longer documents are unchanged.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from typing import Any

from core.tokens import MAX_TOKEN_CHARS, count_tokens, decode, encode
from core.types import Chunk, checkpoint

# A sentence ends after terminal punctuation (optionally closed by quotes/brackets) followed by
# whitespace, at a blank line, or at a line break before a Markdown heading, list item or table row;
# the whitespace belongs to the sentence before it. A single line break inside a paragraph is
# whitespace (hard-wrapped text such as Project Gutenberg books wraps lines mid-sentence).
_SENTENCE_END = re.compile(r"[.!?…。！？][\"'’”)\]]*\s+|\n[ \t]*\n\s*|\n[ \t]*(?=[#>|*+-]|\d+[.)]\s)")
_WHITESPACE = re.compile(r"\s+")
# a "word" longer than this is cut by tokens slice by slice, with a cancel check between slices
# (one tokenizer call on a 19 MB word took about 90 s and could not be interrupted)
WORD_SLICE_CHARS = 100_000


def chunk_id_for(doc_id: str, order: int, text: str) -> str:
    """Content-derived, document-scoped chunk id."""
    digest = hashlib.sha256(f"{doc_id}\x00{order}\x00{text}".encode("utf-8")).hexdigest()
    return "chunk-" + digest[:20]


@dataclass
class _Unit:
    """A piece of the document that is never split further: [start, end) with its token count."""

    start: int
    end: int
    tokens: int


def _pieces(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """[start, end) cut after every match of ``pattern`` (the match stays with the piece before it)."""
    out: list[tuple[int, int]] = []
    position = start
    for match in pattern.finditer(text, start, end):
        if match.end() > position:
            out.append((position, match.end()))
            position = match.end()
    if position < end:
        out.append((position, end))
    return out


def _count_within(text: str, budget: int) -> int:
    """``count_tokens(text)`` when the text may fit in ``budget``; ``budget + 1`` without counting when
    it is too long to (a huge sentence or word is never tokenized whole just to learn it is too long)."""
    if len(text) > budget * MAX_TOKEN_CHARS:
        return budget + 1
    return count_tokens(text)


def _token_cut(text: str, start: int, end: int, budget: int, units: list[_Unit]) -> None:
    """Cut one word longer than a whole chunk into units of ``budget`` tokens (a word longer than
    ``WORD_SLICE_CHARS`` is tokenized slice by slice, checking for Cancel between slices)."""
    position = start
    for s_start in range(start, end, WORD_SLICE_CHARS):
        checkpoint("chunking")
        s_end = min(end, s_start + WORD_SLICE_CHARS)
        ids = encode(text[s_start:s_end])
        position = s_start
        for i in range(0, len(ids), budget):
            piece = decode(ids[i : i + budget])
            units.append(_Unit(position, position + len(piece), len(ids[i : i + budget])))
            position += len(piece)
        if position < s_end and units:  # decoding never loses characters of valid text; be safe anyway
            units[-1].end = s_end
            position = s_end


def _units(text: str, budget: int) -> list[_Unit]:
    """Sentences, cut at whitespace when one exceeds ``budget``, cut by tokens as a last resort."""
    units: list[_Unit] = []
    for n, (s_start, s_end) in enumerate(_pieces(text, 0, len(text), _SENTENCE_END)):
        if n % 256 == 0:
            checkpoint("chunking")
        tokens = _count_within(text[s_start:s_end], budget)
        if tokens <= budget:
            units.append(_Unit(s_start, s_end, tokens))
            continue
        for w_start, w_end in _pieces(text, s_start, s_end, _WHITESPACE):
            w_tokens = _count_within(text[w_start:w_end], budget)
            if w_tokens <= budget:
                units.append(_Unit(w_start, w_end, w_tokens))
                continue
            _token_cut(text, w_start, w_end, budget, units)  # one "word" longer than a whole chunk
    return units


def _overlap_start(units: list[_Unit], first: int, last: int, overlap: int) -> int:
    """Index of the first unit of the next chunk: the trailing units of ``first..last`` that fit in
    ``overlap`` tokens are repeated, but the next chunk always starts after ``first``."""
    start = last + 1
    used = 0
    while start - 1 > first and used + units[start - 1].tokens <= overlap:
        start -= 1
        used += units[start].tokens
    return start


def chunk_text(doc_id: str, text: str, chunk_tokens: int = 1200, overlap: int = 100) -> list[Chunk]:
    """Split one document into chunks of at most ``chunk_tokens`` tokens, snapped to sentence ends
    (else whitespace), each repeating about ``overlap`` tokens of whole sentences of the previous one."""
    if overlap >= chunk_tokens:
        raise ValueError("chunk overlap must be smaller than the chunk size")
    if not text or not text.strip():
        return []
    units = _units(text, chunk_tokens)
    chunks: list[Chunk] = []
    first = 0
    token_offset = 0
    while first < len(units):
        checkpoint("chunking")
        last, used = first, units[first].tokens
        while last + 1 < len(units) and used + units[last + 1].tokens <= chunk_tokens:
            last += 1
            used += units[last].tokens
        piece = text[units[first].start : units[last].end]
        tokens = count_tokens(piece)
        while tokens > chunk_tokens and last > first:  # unit counts are additive up to a token or two
            last -= 1
            piece = text[units[first].start : units[last].end]
            tokens = count_tokens(piece)
        while last + 1 < len(units):  # separately counted units overestimate (" word" is one token)
            longer = text[units[first].start : units[last + 1].end]
            longer_tokens = count_tokens(longer)
            if longer_tokens > chunk_tokens:
                break
            last, piece, tokens = last + 1, longer, longer_tokens
        order = len(chunks)
        chunks.append(Chunk(chunk_id_for(doc_id, order, piece), doc_id, order, piece, tokens, token_offset,
                            start_char=units[first].start))
        if last + 1 >= len(units):
            break
        nxt = _overlap_start(units, first, last, overlap)
        token_offset += sum(u.tokens for u in units[first:nxt])
        first = nxt
    return chunks


_PARAGRAPH_END = re.compile(r"\n[ \t]*\n\s*")


def _paragraphs(text: str) -> list[tuple[int, int]]:
    """[start, end) of each paragraph, the blank lines after it included (so they tile the text); a
    heading line ("# …") is joined to the paragraph after it."""
    pieces = _pieces(text, 0, len(text), _PARAGRAPH_END)
    out: list[tuple[int, int]] = []
    for start, end in pieces:
        if out and text[out[-1][0]:out[-1][1]].lstrip().startswith("#") and "\n" not in text[out[-1][0]:out[-1][1]].strip():
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def paragraph_chunks(doc_id: str, text: str, chunk_tokens: int, overlap: int = 0) -> list[Chunk]:
    """Paragraphs packed into chunks of at most ``chunk_tokens`` tokens, cut only between paragraphs;
    a paragraph longer than that is cut by ``chunk_text`` (with ``overlap``). Chunks tile the text."""
    if not text or not text.strip():
        return []
    groups: list[tuple[int, int, int]] = []  # (start, end, tokens) of runs of whole paragraphs, or one long one
    for start, end in _paragraphs(text):
        tokens = count_tokens(text[start:end])
        if groups and groups[-1][2] + tokens <= chunk_tokens and groups[-1][2] <= chunk_tokens:
            merged = count_tokens(text[groups[-1][0]:end])
            if merged <= chunk_tokens:
                groups[-1] = (groups[-1][0], end, merged)
                continue
        groups.append((start, end, tokens))
    chunks: list[Chunk] = []
    token_offset = 0
    for start, end, tokens in groups:
        piece = text[start:end]
        parts = [(piece, tokens, 0)] if tokens <= chunk_tokens else \
            [(c.text, c.tokens, c.start_char) for c in chunk_text(doc_id, piece, chunk_tokens, overlap)]
        for part_text, part_tokens, offset in parts:
            if not part_text.strip():
                continue
            order = len(chunks)
            chunks.append(Chunk(chunk_id_for(doc_id, order, part_text), doc_id, order, part_text, part_tokens,
                                token_offset, start_char=start + offset))
            token_offset += part_tokens
    return chunks


def chunk_document(doc_id: str, text: str, settings: Any) -> list[Chunk]:
    """A document's chunks under the settings: ``chunk_text`` with the chunk size and overlap, or, for a
    short document when ``short_document_chunk_tokens`` is set, ``paragraph_chunks`` (module docstring)."""
    short = int(getattr(settings, "short_document_chunk_tokens", 0) or 0)
    short_tokens = int(getattr(settings, "short_document_tokens", 0) or 0)
    if short and _count_within(text, short_tokens) <= short_tokens:
        return paragraph_chunks(doc_id, text, short, min(settings.chunk_overlap, short // 4))
    return chunk_text(doc_id, text, settings.chunk_tokens, settings.chunk_overlap)


def split_overlap(chunks: list[Chunk]) -> list[tuple[str, str]]:
    """Consecutive chunks of one document in order, each as (the leading text it repeats from the
    chunks before it, its new text)."""
    ordered = sorted(chunks, key=lambda c: c.order)
    out: list[tuple[str, str]] = []
    if all(c.start_char >= 0 for c in ordered):
        end = -1
        for chunk in ordered:
            skip = max(0, end - chunk.start_char) if out else 0
            out.append((chunk.text[:skip], chunk.text[skip:]))
            end = max(end, chunk.start_char + len(chunk.text))
        return out
    # chunks read back from an older workspace (token windows): the overlap is counted in tokens
    end = 0
    for chunk in ordered:
        skip = max(0, end - chunk.start_token) if out else 0
        ids = encode(chunk.text) if skip else []
        out.append((decode(ids[:skip]), decode(ids[skip:])) if skip else ("", chunk.text))
        end = chunk.start_token + chunk.tokens
    return out


def join_without_overlap(chunks: list[Chunk]) -> str:
    """Concatenate consecutive chunks of one document, dropping the overlapping text."""
    return "".join(new for _, new in split_overlap(chunks))
