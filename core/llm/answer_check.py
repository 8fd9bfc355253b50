"""Is a generated answer's short answer stated by a passage it cites?

An LLM answer may bold its short answer (``**Josiah Harland**``), as the offline answers do. A bold is a
claim, so it is held to the offline rule: it must be stated by a passage the answer cites. A short answer
(a bold of at most ``SHORT_WORDS`` words) is *supported* when a chunk of the result that one of the
answer's citations names (``[document, chunk n]``, ``[document, p. n]``: the document's chunk of that
number, or its chunks whose page range holds that page) contains it, compared without case, spacing
and quote style. An answer that bolds without citing anything, or bolds what no cited passage says, gets
a note; the page shows it next to the answer. An answer without a bold claims no short answer and is
not checked here (its citations are checked by ``core.citations``).
"""
from __future__ import annotations

import re
from typing import Sequence

from core.types import ChunkHit, RetrievalResult

SHORT_WORDS = 6
NOT_CITED = "The short answer is not backed by a citation: the answer bolds {spans} but cites no passage."
NOT_STATED = "The short answer is not stated in a passage the answer cites: {spans}."

_BOLD = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
_CITED = re.compile(r"\[([^\[\]\n]{1,200}?),\s*(?:(?:pp?)\.\s*(\d+)(?:\s*[\u2013-]\s*(\d+))?|chunk\s+(\d+))\s*\]")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _plain(text: str) -> str:
    return " ".join((text or "").translate(_QUOTES).lower().split())


def short_answers(text: str) -> list[str]:
    """The answer's bolded spans of at most ``SHORT_WORDS`` words, in order, without repeats."""
    spans = [" ".join(m.group(1).split()) for m in _BOLD.finditer(text or "")]
    return list(dict.fromkeys(s for s in spans if s and len(s.split()) <= SHORT_WORDS))


def cited_chunks(text: str, chunks: Sequence[ChunkHit]) -> list[ChunkHit]:
    """The result's chunks the answer's citations name (document by name or id; chunk by its 1-based
    number, or page by the chunk's page range)."""
    out: list[ChunkHit] = []
    for m in _CITED.finditer(text or ""):
        doc = m.group(1).strip().lower()
        for chunk in chunks:
            if doc not in ((chunk.doc_name or "").lower(), (chunk.doc_id or "").lower()):
                continue
            if m.group(4) is not None:
                hit = chunk.order + 1 == int(m.group(4))
            else:
                first, last = int(m.group(2)), int(m.group(3) or m.group(2))
                hit = chunk.page_start is not None and chunk.page_start <= last and first <= (chunk.page_end or chunk.page_start)
            if hit and chunk not in out:
                out.append(chunk)
    return out


def unsupported_short_answers(text: str, chunks: Sequence[ChunkHit]) -> tuple[list[str], bool]:
    """(the short answers no cited passage states, whether the answer writes any citation at all; one
    naming a source outside the context counts as a citation that states nothing)."""
    spans = short_answers(text)
    if not spans:
        return [], True
    cited = cited_chunks(text, chunks)
    said = [_plain(c.text) for c in cited]
    return [s for s in spans if not any(_plain(s) in body for body in said)], bool(_CITED.search(text or ""))


def support_note(result: RetrievalResult, text: str) -> str:
    """The note a generated answer carries when its short answer is not stated by a cited passage, else ""."""
    missing, cites = unsupported_short_answers(text, result.chunks)
    if not missing:
        return ""
    spans = ", ".join(f'"{s}"' for s in missing)
    return (NOT_STATED if cites else NOT_CITED).format(spans=spans)
