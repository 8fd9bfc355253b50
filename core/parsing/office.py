"""DOCX files: paragraphs and table rows in document order (and where each heading paragraph starts),
with the archive checked first.

A DOCX is a zip archive. Before any XML is read, the zip's central directory (a few bytes per
member) gives every member's uncompressed size (the number of members is bounded first, against
``max_archive_entries``, by counting the directory's entry signatures): their sum is checked against
``max_archive_uncompressed_mb`` and its ratio to the file's size against ``max_archive_ratio``.
The declared sizes can be trusted as an upper bound: Python's ``zipfile`` stops a member at its
declared size and fails its CRC check if the data goes on. The characters collected are checked
against ``max_document_chars`` as paragraphs are appended. Entity references (never expanded) are kept
in the text as written, and so is the text after them.
"""
from __future__ import annotations

import io
import zipfile

import docx
from docx.table import Table
from docx.text.paragraph import Paragraph
from lxml import etree

from core.parsing.limits import (LimitExceeded, ParseLimits, check_chars, check_entries, check_expansion,
                                 zip_expanded_size)
from core.parsing.text import Result, document, fail, normalise, short

MAX_TABLE_DEPTH = 5  # tables nested in cells


def check_archive(data: bytes, limits: ParseLimits, what: str = "the archive's members") -> None:
    """Refuse a zip with too many members (counted before the directory is parsed) or whose members expand
    past the size or ratio caps (reads the directory only)."""
    check_entries(data, limits, what)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        expanded = zip_expanded_size(archive)
    check_expansion(expanded, len(data), limits, what)


class _Collector:
    """Texts in order, with the running character count checked against the cap."""

    def __init__(self, limits: ParseLimits) -> None:
        self.parts: list[str] = []
        self.headings: list[int] = []  # indexes in ``parts`` of the heading paragraphs
        self.chars = 0
        self.limits = limits

    def add(self, text: str, heading: bool = False) -> None:
        self.chars += len(text) + 2
        check_chars(self.chars, self.limits)
        if heading:
            self.headings.append(len(self.parts))
        self.parts.append(text)

    def text_and_headings(self) -> tuple[str, list[int]]:
        """The parts joined by blank lines (line ends normalised) and where each heading starts in it."""
        parts = [normalise(part) for part in self.parts]
        starts, offset = [], 0
        for index, part in enumerate(parts):
            if index in self.headings:
                starts.append(offset)
            offset += len(part) + 2
        return "\n\n".join(parts), starts


def _is_heading(paragraph: Paragraph) -> bool:
    """A paragraph in a built-in heading style (Heading 1-9, Title)."""
    try:
        style = (paragraph.style.name or "") if paragraph.style is not None else ""
    except Exception:  # noqa: BLE001 - a broken style reference is not a heading
        return False
    return style.startswith("Heading") or style == "Title"


def _docx_blocks(container: object, out: _Collector, depth: int = 0) -> None:
    """Paragraph texts and table rows (cells joined by `` | ``) in document order."""
    for item in container.iter_inner_content():  # type: ignore[attr-defined]
        if isinstance(item, Paragraph):
            text = item.text
            if text.strip():
                out.add(text, heading=depth == 0 and _is_heading(item))
        elif isinstance(item, Table) and depth < MAX_TABLE_DEPTH:
            for row in item.rows:
                cells: list[str] = []
                for cell in {id(cell._tc): cell for cell in row.cells}.values():  # merged cells repeat
                    inner = _Collector(out.limits)
                    _docx_blocks(cell, inner, depth + 1)
                    cells.append(" ".join(part.strip() for part in inner.parts if part.strip()))
                if any(cells):
                    out.add(" | ".join(cell for cell in cells if cell))


def keep_entity_references(root: etree._Element) -> int:
    """Replace each entity reference node (``&name;``, left unexpanded: the parser never resolves
    entities) by its literal text, so the text after it is kept; python-docx reads only an element's text
    before such a node and silently dropped the rest. Returns how many there were."""
    found = list(root.iter(etree.Entity))
    for node in found:
        literal = str(node.text or "") + (node.tail or "")
        parent, previous = node.getparent(), node.getprevious()
        if parent is None:
            continue
        if previous is not None:
            previous.tail = (previous.tail or "") + literal
        else:
            parent.text = (parent.text or "") + literal
        parent.remove(node)
    return len(found)


def load_docx(name: str, data: bytes, limits: ParseLimits) -> Result:
    """A Word document's text, or a failure (not a DOCX, over a cap). Entity references stay in the
    text as written (``&name;``), with the text around them."""
    try:
        check_archive(data, limits, "the DOCX's zip members")
        collected = _Collector(limits)
        word = docx.Document(io.BytesIO(data))
        keep_entity_references(word.element)
        _docx_blocks(word, collected)
    except (LimitExceeded, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001
        return fail(name, f"could not read the DOCX: {short(exc)}")
    text, headings = collected.text_and_headings()
    docs, failures = document(name, text, limits)
    for doc in docs:
        doc.section_starts = tuple(headings)
    return docs, failures
