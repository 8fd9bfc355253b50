"""An extractive answer's first line as escaped HTML, its short answers in bold (``first_line_html``).

The line is untrusted document text with the answer's ``**…**`` markers; everything is escaped and only
the markers of the answer's own short answers (``Answer.bold``) become ``<b>``; a ``**`` the document or
its name wrote stays as written.
"""
from __future__ import annotations

import html
import re
from typing import Optional

from core.citations import cited_places

_BOLD = re.compile(r"\*\*(.+?)\*\*")


def _bolded(text: str, bold: Optional[list[str]]) -> str:
    wanted = None if bold is None else {b.strip().lower() for b in bold}

    def mark(m: re.Match) -> str:
        if wanted is not None and m.group(1).strip().lower() not in wanted:
            return html.escape(m.group(0), quote=True)  # the document's own "**…**", not the answer
        return f"<b>{html.escape(m.group(1), quote=True)}</b>"

    out, pos = [], 0
    for m in _BOLD.finditer(text):
        out += [html.escape(text[pos:m.start()], quote=True), mark(m)]
        pos = m.end()
    return "".join(out) + html.escape(text[pos:], quote=True)


def first_line_html(line: str, bold: Optional[list[str]] = None) -> str:
    """An extractive answer's first line as HTML: everything escaped, then the ``**…**`` markers
    of the short answer turned into bold (their content is escaped text too). ``bold`` (the answer's
    own list, ``Answer.bold``) limits the bold to those short answers: a ``**`` the quoted document
    wrote itself (Markdown emphasis, a hostile name) stays as written, never a bold that reads as the
    answer; None bolds every pair. A citation's text is the document's name, which the uploader chose:
    its ``**`` always stay as written."""
    parts, pos = [], 0
    for written, _, _, _ in cited_places(line):
        at = line.find(written, pos)
        if at < 0:
            continue
        parts += [_bolded(line[pos:at], bold), html.escape(written, quote=True)]
        pos = at + len(written)
    return '<div style="line-height:1.5">' + "".join(parts) + _bolded(line[pos:], bold) + "</div>"
