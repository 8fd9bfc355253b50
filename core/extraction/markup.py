"""Plain text for NLP: Markdown-style markup removed, block structure kept as paragraph breaks.

The stored chunk text stays exactly as the user wrote it; spaCy, the extractive profiles and
relation descriptions and the summary tree read ``plain_text(chunk.text)`` instead, so that
"## Foundation", "- Port Sallow - …", "**bold**" or table pipes never reach an entity name, a
profile or a summary. Headings, list items, block quotes and table rows each become a paragraph
of their own (a blank line after them), which the spaCy pipeline turns into a sentence boundary
(see ``core.extraction.nlp``), so a heading never runs into the sentence below it.

A short title-like line directly followed by text (a JSONL corpus indexes "title\\ntext") also
gets its own paragraph, so "Peter Bonetti\\nPeter Phillip Bonetti (born …" is not parsed as one name.
Plain prose passes through unchanged apart from these paragraph breaks.
"""
from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_LIST = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(.*)$")
_QUOTE = re.compile(r"^\s*>+\s?(.*)$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_TARGET = r"\((?:[^()]|\([^()]*\))*\)"  # a link's target, which may hold one level of parentheses
_IMAGE = re.compile(r"!\[([^\]]*)\]" + _TARGET)
_LINK = re.compile(r"\[([^\]]+)\]" + _TARGET)
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS_STAR = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_EMPHASIS_UNDERSCORE = re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_TERMINAL = re.compile(r"[.!?:;,…\"'’”]\s*$")  # "WILM (AM)" and "Brand (play)" are titles
TITLE_MAX_WORDS = 12
_TITLE_END = re.compile(r"[.!?:;,…]\s*$")  # stricter than _TERMINAL: a quoted title still counts here


def is_title(paragraph: str) -> bool:
    """A short capitalised line without closing punctuation: a document's or a section's title (the parse's
    rule for a title paragraph, and the Summary tree's rule for setting a heading apart). ``_is_title`` below
    is the looser line rule that decides where plain text starts a paragraph."""
    line = paragraph.strip()
    words = line.split()
    return 0 < len(words) <= 8 and "\n" not in line and not _TITLE_END.search(line) and line[:1].isupper() \
        and any(ch.isalpha() for ch in line)


def _inline(text: str) -> str:
    """Remove inline markup, keeping the words."""
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _HTML_TAG.sub("", text)
    text = _INLINE_CODE.sub(r"\1", text)
    for pattern in (_STRONG, _STRIKE):
        text = pattern.sub(lambda m: m.group(2) if m.lastindex and m.lastindex >= 2 else m.group(1), text)
    text = _EMPHASIS_STAR.sub(r"\1", text)
    text = _EMPHASIS_UNDERSCORE.sub(r"\1", text)
    return text


def _table_row(line: str) -> str:
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    return "; ".join(c for c in cells if c)


def _is_title(line: str, following: str) -> bool:
    """A short line without closing punctuation, followed by a line of text: a title or heading."""
    words = line.split()
    return (0 < len(words) <= TITLE_MAX_WORDS and not _TERMINAL.search(line) and bool(following.strip())
            and line[:1].isupper() and following.strip()[:1].isupper())


def plain_text(text: str) -> str:
    """``text`` without Markdown markup; block elements end with a blank line (a paragraph)."""
    if not text:
        return ""
    lines = text.splitlines()
    out: list[str] = []
    in_fence = False

    def block(content: str) -> None:
        content = _inline(content).strip()
        if content:
            out.append(content)
            out.append("")

    for i, raw in enumerate(lines):
        if _FENCE.match(raw):
            in_fence = not in_fence
            out.append("")
            continue
        if in_fence:
            out.append(raw)
            continue
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if _RULE.match(raw) or _TABLE_SEPARATOR.match(raw) and "|" in raw:
            out.append("")
            continue
        if _SETEXT.match(following) and raw.strip() and not _LIST.match(raw):
            block(raw)  # "Title" underlined by === or ---: the underline is dropped as a rule above
            continue
        heading = _HEADING.match(raw)
        if heading:
            block(heading.group(1))
            continue
        item = _LIST.match(raw)
        if item:
            block(item.group(1))
            continue
        quote = _QUOTE.match(raw)
        if quote:
            block(quote.group(1))
            continue
        if raw.count("|") >= 2 and raw.strip().startswith("|"):
            block(_table_row(raw))
            continue
        if _is_title(_inline(raw).strip(), _inline(following)) and (i == 0 or not lines[i - 1].strip()):
            block(raw)
            continue
        out.append(_inline(raw))
    joined = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", joined).strip("\n")
