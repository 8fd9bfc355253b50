"""Page furniture of a PDF's text layer: running headers, footers and page numbers, dropped before indexing.

A PDF's text layer repeats on every page the lines that are layout, not text: the book's or the
chapter's name at the top, "Page 12 of 40" or a bare "12" at the bottom. Left in, they are glued into the
sentence that runs across the page break, split a name ("Josiah 12 Harland"), become the first line of a
quoted answer and, named on every page, an entity hub. ``strip_furniture`` removes them page by page, so
the page offsets the loader records (``SourceDocument.page_starts``) are counted on the text that is kept.

The rule (RAGScope's choice): only the first and the last ``EDGE_LINES`` non-blank lines of a page are
candidates. A candidate is furniture when
* it is a bare page number ("12", "- 12 -", "Page 12", "12 of 40", "xii"), in a document of two or more
  pages; or
* its shape (spaces and case ignored; in a line of at most ``SHAPE_MAX_WORDS`` words, every number read as
  the same number) is a candidate line on at least
  ``MIN_REPEATS`` pages and on at least half of the pages ("The Salt Road 12" / "The Salt Road 13").
A line in the middle of a page is never touched, and a page whose every line would go keeps its text.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

EDGE_LINES = 2  # lines at the top and at the bottom of a page that may be a header or a footer
MIN_REPEATS = 3  # pages a running line must appear on

_PAGE_NUMBER = re.compile(r"^[\s\-–—(\[]*(?:page\s+|p\.\s*)?(?:\d{1,4}|(?-i:[ivxlc]{1,7}))(?:\s+(?:of|/)\s+\d{1,4})?"
                          r"[\s\-–—)\]]*$", re.IGNORECASE)


SHAPE_MAX_WORDS = 8  # a longer line repeats only verbatim: "Sentence 1 of page 2 …" is text, not a header


def _shape(line: str) -> str:
    words = line.lower().split()
    return re.sub(r"\d+", "#", " ".join(words)) if len(words) <= SHAPE_MAX_WORDS else " ".join(words)


def _edges(lines: list[str]) -> list[int]:
    """Indexes of the first and the last ``EDGE_LINES`` non-blank lines."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    return sorted(set(filled[:EDGE_LINES] + filled[-EDGE_LINES:]))


def is_page_number(line: str) -> bool:
    """A line that is only a page number ("12", "- 12 -", "Page 12", "12 of 40", "xii")."""
    return bool(line.strip()) and bool(_PAGE_NUMBER.match(line.strip()))


def strip_furniture(pages: Sequence[str]) -> list[str]:
    """Each page's text without its running headers/footers and page numbers (see the module docstring)."""
    split = [page.split("\n") for page in pages]
    edges = [_edges(lines) for lines in split]
    seen = Counter(shape for lines, idx in zip(split, edges) for shape in {_shape(lines[i]) for i in idx})
    running = {shape for shape, n in seen.items() if n >= MIN_REPEATS and 2 * n >= len(pages)}
    out = []
    for page, lines, idx in zip(pages, split, edges):
        drop = {i for i in idx if (len(pages) >= 2 and is_page_number(lines[i])) or _shape(lines[i]) in running}
        kept = "\n".join(line for i, line in enumerate(lines) if i not in drop).strip()
        out.append(kept if kept else page)
    return out
