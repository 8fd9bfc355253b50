"""HTML files: the visible text of the page, paragraph by paragraph, with where each heading (h1-h6)
starts in it (run in the parsing worker: BeautifulSoup's tree of a large page takes many times the
file's size in memory)."""
from __future__ import annotations

import re
from typing import Union

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import Comment, Declaration, Doctype, ProcessingInstruction

from core.parsing.limits import ParseLimits
from core.parsing.text import BOMS, Result, binary_reason, decode_text, document, fail, magic_kind, normalise, short

_DROP_TAGS = {"script", "style", "noscript", "template", "iframe", "object", "svg", "canvas", "head"}
_BLOCK_TAGS = {"p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "blockquote",
               "pre", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "dl", "dt", "dd", "table",
               "tr", "caption", "figure", "figcaption", "form", "fieldset", "address", "hr", "title",
               "body", "details", "summary"}
_PARA, _LINE = "\u2029", "\u2028"  # private block / line-break markers (Unicode separators)
_HEAD = "\ue000"  # private marker at the start of a heading block (h1-h6): where a section starts
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_PARA_MARK = object()


def _html_text(root: object) -> str:
    """Visible text of a parsed HTML tree, walked iteratively (deep nesting is fine), with markers."""
    hidden_strings = (Comment, Declaration, Doctype, ProcessingInstruction)
    parts: list[str] = []
    stack: list[object] = [root]
    while stack:
        item = stack.pop()
        if item is _PARA_MARK:
            parts.append(_PARA)
        elif isinstance(item, NavigableString):
            if not isinstance(item, hidden_strings):
                parts.append(str(item).replace(_HEAD, ""))
        elif isinstance(item, Tag):
            name = (item.name or "").lower()
            if name in _DROP_TAGS:
                if name == "head":  # of the head, only the <title> is visible text
                    stack.extend(reversed(item.find_all("title")))
                continue
            if name in ("br", "pre"):  # line breaks inside <pre> are kept
                text = normalise(item.get_text()).replace("\n", _LINE) if name == "pre" else ""
                parts.append(_LINE if name == "br" else _PARA + text + _PARA)
                continue
            if name in _BLOCK_TAGS:
                parts.append(_PARA + (_HEAD if name in _HEADINGS else ""))
                stack.append(_PARA_MARK)
            stack.extend(reversed(item.contents))
    return "".join(parts)


def load_html(name: str, data: bytes, limits: ParseLimits) -> Result:
    """An HTML page's visible text."""
    kind = magic_kind(data)
    if kind:
        return fail(name, binary_reason(kind))
    try:
        markup: Union[str, bytes] = data  # bytes: BeautifulSoup honours <meta charset>
        if data.startswith(tuple(bom for bom, _ in BOMS)) or b"\x00" in data:
            text, reason = decode_text(data)
            if text is None:
                return fail(name, reason or binary_reason())
            markup = text
        try:
            soup = BeautifulSoup(markup, "lxml")
        except Exception:  # noqa: BLE001 - lxml missing or unusable
            soup = BeautifulSoup(markup, "html.parser")
        raw = _html_text(soup)
    except Exception as exc:  # noqa: BLE001
        return fail(name, f"could not read the HTML: {short(exc)}")
    paragraphs: list[str] = []
    headings: list[int] = []  # offsets of the heading paragraphs in the joined text
    offset = 0
    for block in raw.split(_PARA):
        joined = "\n".join(" ".join(line.split()) for line in block.replace(_HEAD, "").split(_LINE)).strip("\n")
        if joined.strip():
            if block.startswith(_HEAD):
                headings.append(offset)
            paragraphs.append(re.sub(r"\n{3,}", "\n\n", joined))
            offset += len(paragraphs[-1]) + 2
    docs, failures = document(name, "\n\n".join(paragraphs), limits)
    for doc in docs:
        doc.section_starts = tuple(headings)
    return docs, failures

