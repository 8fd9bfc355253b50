"""Counts as the app shows them: ``10000`` documents read "10,000 documents" everywhere.

``count`` is the one text form (Python's ``,`` grouping, as the app's captions and reasons already wrote
``f"{n:,}"``): captions, status lines, metrics, button labels and error messages use it. Tables keep their
numbers as numbers (sortable, and exported as plain digits in the CSV download) and are *displayed* grouped:
``count_columns`` gives a table's whole-number columns the same grouping as a column format (``ui.safe_tables``
applies it to every table). Identifier-like columns (``…id``, ``year``) are left as written.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

COUNT_FORMAT = "%,d"  # Streamlit's printf-style column format: 10000 -> 10,000 (a number still)
UNGROUPED = ("id", "year", "qid")  # column names (or endings) whose whole numbers are labels, not counts


def count(value: Any) -> str:
    """A count as text with thousands separators: ``10000`` -> ``"10,000"`` (a non-number is returned as text)."""
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return str(value)


def grouped(column: str) -> bool:
    """Whether a whole-number column of this name is a count (shown grouped) rather than a label."""
    name = str(column).strip().lower()
    return not any(name == label or name.endswith(label) for label in UNGROUPED)


def count_columns(frame: pd.DataFrame) -> list[str]:
    """The whole-number columns of ``frame`` that are counts (``grouped``)."""
    return [str(c) for c in frame.columns
            if pd.api.types.is_integer_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]) and grouped(c)]
