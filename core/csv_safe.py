"""CSV cells a spreadsheet will not run: every cell the app or the CLI writes to a CSV file goes through
``safe_cell``, which neutralises a text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return (OWASP's rule for CSV injection) by putting a single quote before it. Document ids, question ids
and question types come from uploaded files, so a ``doc_id`` of ``=HYPERLINK(…)`` would otherwise become
a live formula in the file a viewer downloads. Numbers are written as numbers (a negative number is not
text and is left alone)."""
from __future__ import annotations

import csv
import io
from typing import Any, Iterable, Mapping, Sequence

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """``value`` with a leading ``'`` when it is text a spreadsheet would read as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def safe_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row of cells, each through ``safe_cell``."""
    return {key: safe_cell(value) for key, value in row.items()}


def csv_text(rows: Iterable[Mapping[str, Any]], fieldnames: Sequence[str]) -> str:
    """The CSV text of ``rows`` (header first), every cell and header through ``safe_cell``."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=[safe_cell(k) for k in fieldnames], extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({safe_cell(k): safe_cell(v) for k, v in row.items()})
    return buffer.getvalue()
