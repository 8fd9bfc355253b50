"""Entity-name keys and display forms, without spaCy (so storage and read-only commands never load it).

``normalize_name`` is *the* entity key of both the knowledge graph and the E2GraphRAG mention graph, so
the two graphs line up; ``display_name`` cleans a surface form for showing it. ``core.extraction.nlp``
re-exports both next to the spaCy pipeline that produces the names.
"""
from __future__ import annotations

import re
import unicodedata

_WS = re.compile(r"\s+")
_POSSESSIVE = re.compile(r"\s*['’]s$")
_LEADING_THE = re.compile(r"^the\s+", re.IGNORECASE)


def _is_edge_junk(ch: str) -> bool:
    """Whitespace and punctuation (quotes, brackets, dashes, dots …) stripped from name edges."""
    return ch.isspace() or unicodedata.category(ch).startswith("P")


def _strip_edges(text: str) -> str:
    start, end = 0, len(text)
    while start < end and _is_edge_junk(text[start]):
        start += 1
    while end > start and _is_edge_junk(text[end - 1]):
        end -= 1
    return text[start:end]


def _clean(text: str) -> str:
    """Collapse whitespace, strip edge punctuation and a trailing possessive (case kept)."""
    text = _strip_edges(_WS.sub(" ", unicodedata.normalize("NFKC", text or "")))
    previous = None
    while previous != text:
        previous = text
        text = _strip_edges(_POSSESSIVE.sub("", text))
    return text


def _has_letter(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def normalize_name(text: str) -> str:
    """The entity key: casefolded, edge punctuation/quotes stripped, no leading "the ",
    no trailing possessive, single spaces. Returns "" for junk (no letter at all)."""
    key = _clean(text).casefold()
    stripped = _LEADING_THE.sub("", key)
    if stripped != key:
        key = _clean(stripped)
    return key if _has_letter(key) else ""


def display_name(text: str) -> str:
    """A surface form fit for display: like ``normalize_name`` but keeping case, and dropping a
    leading *lowercase* "the" only ("the United States" → "United States", "The Beatles" kept)."""
    name = _clean(text)
    if name.startswith("the "):
        name = _clean(name[4:])
    return name if _has_letter(name) else ""
