"""Tables whose CSV download cannot run a formula.

Streamlit puts a "Download as CSV" button on every ``st.dataframe`` and writes the cells as they are
(Streamlit 1.67's exporter quotes commas and quotes, nothing else). Document names, entity names,
descriptions, questions and answers come from uploaded files, so a document named
``=HYPERLINK("http://…")`` became a live formula in the CSV a viewer downloads from the Documents table.
``safe_dataframe`` shows a table with every text cell through ``core.csv_safe.safe_cell`` (the rule the
app's own CSV files follow: a text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
gets a leading ``'``), except a lone dash and a number written as text, which no spreadsheet runs.
Numbers and the column names (written by the app) are left as they are; whole-number count columns are
displayed with thousands separators (``ui.numbers``), still numbers to sort by and to download."""
from __future__ import annotations

import re
from typing import Any

import pandas as pd
import streamlit as st

from core.csv_safe import safe_cell
from ui.numbers import COUNT_FORMAT, count_columns

PLAIN_NUMBER = re.compile(r"[-+]?\d[\d,]*(\.\d+)?%?|[-+]")


def display_safe_cell(value: Any) -> Any:
    """``value`` as ``safe_cell`` makes it, but a lone sign or a plain number stays as written."""
    if isinstance(value, str) and PLAIN_NUMBER.fullmatch(value.strip()):
        return value
    return safe_cell(value)


def spreadsheet_safe(data: Any) -> Any:
    """``data`` (a DataFrame, or rows a DataFrame is built from) with its text cells made safe."""
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    frame = frame.copy()
    for column in frame.columns:
        if frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column]):
            frame[column] = frame[column].map(display_safe_cell)
    return frame


def safe_dataframe(data: Any, **kwargs: Any) -> Any:
    """``st.dataframe`` of ``data`` with its text cells made safe for the CSV download and its count columns
    shown with thousands separators (a ``column_config`` given for a column wins)."""
    frame = spreadsheet_safe(data)
    config = dict(kwargs.pop("column_config", None) or {})
    for column in count_columns(frame):
        config.setdefault(column, st.column_config.NumberColumn(column, format=COUNT_FORMAT))
    return st.dataframe(frame, column_config=config or None, **kwargs)
