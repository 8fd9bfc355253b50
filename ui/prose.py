"""Untrusted document text (profiles, summaries, chunks) rendered as readable, escaped prose.

``readable_paragraphs`` removes Markdown markup a document brought along (heading hashes, list
bullets, emphasis and code markers, link targets), joins lines into paragraphs and drops a
sentence that repeats another one or is a cut-off copy of a longer one. ``prose_html`` escapes
every paragraph (``html.escape``: a ``<script>`` in a document stays text) and wraps them in
``<p>`` tags of ours for ``st.html``.
"""
from __future__ import annotations

import html
import re

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`+)(?=\S)(.+?)(?<=\S)\1")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_RULE = re.compile(r"^\s*(?:[-*_]\s*){3,}$")
_SENTENCE = re.compile(r"(?<=[.!?…])\s+(?=[\"'“(A-Z0-9])")
_SPACES = re.compile(r"[ \t]+")
_INLINE_DASH = re.compile(r"\s+-\s+")
_ELLIPSIS = re.compile(r"(?:…|\.\.\.)$")

STYLE = ("font-size:0.95rem;line-height:1.55;max-height:{h}px;overflow-y:auto;padding:0.5rem 0.75rem;"
         "border:1px solid rgba(49,51,63,0.15);border-radius:0.5rem;background:#fafbfc;")


def _clean_line(line: str) -> str:
    line = _HEADING.sub("", line)
    line = _BULLET.sub("", line)
    line = _LINK.sub(r"\1", line)
    line = _EMPHASIS.sub(r"\2", line)
    line = _INLINE_DASH.sub(" – ", line)
    return _SPACES.sub(" ", line).strip()


def _key(sentence: str) -> str:
    return re.sub(r"\W+", " ", _ELLIPSIS.sub("", sentence.rstrip(". "))).strip().lower()


def _join_lines(lines: list[str]) -> str:
    """Join wrapped lines; a line without end punctuation followed by a capitalised line is a
    fragment of its own (cut-off description fragments are stored one per line)."""
    out = ""
    for line in lines:
        if out and line[:1].isupper() and not out.endswith((".", "!", "?", "…", ",", ";", ":", "–")):
            out += ". "  # ends the fragment, so it splits into a sentence (and a cut-off copy is found)
        elif out:
            out += " "
        out += line
    return out


def readable_paragraphs(text: str) -> list[str]:
    """Paragraphs of plain sentences: markup removed, repeated and cut-off sentences dropped."""
    blocks: list[list[str]] = [[]]
    for raw in (text or "").replace("\r\n", "\n").split("\n"):
        if not raw.strip() or _RULE.match(raw):
            blocks.append([])
            continue
        line = _clean_line(raw)
        if not line:
            continue
        if _HEADING.match(raw) and not line.endswith((".", ":", "!", "?")):
            line += "."  # a heading becomes a short sentence of its own
        blocks[-1].append(line)
    sentences_by_block = [[s for s in _SENTENCE.split(_join_lines(block)) if s.strip()] for block in blocks if block]
    keys = [_key(s) for block in sentences_by_block for s in block]
    seen: set[str] = set()
    paragraphs: list[str] = []
    for block in sentences_by_block:
        kept = []
        for sentence in block:
            key = _key(sentence)
            if not key or key in seen:
                continue
            if any(other != key and other.startswith(key) for other in keys):
                continue  # a cut-off copy of a longer sentence
            seen.add(key)
            kept.append(sentence.strip())
        if kept:
            paragraphs.append(" ".join(kept))
    return paragraphs


def prose_html(text: str, empty: str = "(empty)", max_height_px: int = 320) -> str:
    """Escaped paragraphs in a light, scrollable box, for ``st.html``."""
    paragraphs = readable_paragraphs(text)
    body = "".join(f'<p style="margin:0 0 0.6em 0">{html.escape(p, quote=True)}</p>' for p in paragraphs)
    if not body:
        body = f'<p style="margin:0;color:#777">{html.escape(empty)}</p>'
    return f'<div class="rs-prose" style="{STYLE.format(h=int(max_height_px))}">{body}</div>'
