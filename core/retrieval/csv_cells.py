"""The CSV tables of the LightRAG-style contexts, written by the standard ``csv`` module.

LightRAG puts its entities, relations and sources in the prompt as small CSV tables, one record a
line. The cell rule those contexts have always used: a newline in a value becomes a space, a double
quote becomes a single quote, and a value that contains a comma or a space is put in double quotes
(anything else is written bare; no quote is ever doubled, since none is left).

``csv.writer`` reproduces that byte for byte with one dialect setting: it quotes a field that holds
the delimiter, the quote character or any character of the line terminator, so a line terminator
of a single space makes "contains a comma or a space" its quoting rule. Rows are therefore written
one at a time and that terminating space is cut off; lines are joined with ``\\n``.
"""
from __future__ import annotations

import csv
import io
from typing import Any, Iterable, Sequence

_TERMINATOR = " "


class LightRAGCells(csv.Dialect):
    """Comma-separated, minimal quoting, where a space counts as a character that needs quotes."""

    delimiter = ","
    quotechar = '"'
    doublequote = True
    escapechar = None
    skipinitialspace = False
    lineterminator = _TERMINATOR
    quoting = csv.QUOTE_MINIMAL


def clean_cell(value: Any) -> str:
    """A value as the table shows it: text, newlines as spaces, double quotes as single quotes."""
    return str(value).replace("\n", " ").replace('"', "'")


def record_line(values: Sequence[Any]) -> str:
    """One table line (no line break) for ``values``."""
    cells = [clean_cell(v) for v in values]
    if len(cells) == 1 and cells[0] == "":
        return ""  # csv writes a lone empty field as '""'; the table has always left it empty
    buffer = io.StringIO()
    csv.writer(buffer, dialect=LightRAGCells).writerow(cells)
    return buffer.getvalue()[: -len(_TERMINATOR)]


def csv_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """The compact table format LightRAG places in its context: the header line, then one line a record."""
    return "\n".join([record_line(header), *(record_line(row) for row in rows)])


class LineWriter:
    """``record_line`` for many rows through one ``csv.writer`` (the rows of one context):
    the writer hands each row to ``write`` as one string, so no buffer or writer is made per row. The
    rows here have several cells, never the lone empty cell ``record_line`` treats apart."""

    def __init__(self) -> None:
        self._written: list[str] = []
        self._writer = csv.writer(self, dialect=LightRAGCells)
        self._cut = len(LightRAGCells.lineterminator)

    def write(self, text: str) -> None:
        self._written.append(text)

    def __call__(self, values: Sequence[Any]) -> str:
        self._writer.writerow([clean_cell(v) for v in values])
        return self._written.pop()[: -self._cut]
