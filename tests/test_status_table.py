"""The Documents page's status table during a job and its lists of failure reasons stay bounded
(``ui.status_table``): a 100,000-record JSONL sent the whole table every second while it indexed."""
from __future__ import annotations

import pandas as pd

from ui.status_table import JOB_TABLE_ROWS, MAX_REASONS, capped_reasons, rows_while_indexing


def _frame(n: int) -> pd.DataFrame:
    return pd.DataFrame({"doc_id": [f"d{i}" for i in range(n)], "name": [f"Record {i}" for i in range(n)]})


def test_a_running_job_sends_the_newest_rows_and_says_how_many_are_left_out():
    frame = _frame(100_000)
    shown, note = rows_while_indexing(frame, running=True)
    assert len(shown) == JOB_TABLE_ROWS < len(frame)
    assert list(shown["doc_id"][:2]) == ["d0", "d1"]  # the frame comes newest first: its head is kept
    assert note is not None and "100,000" in note and f"{JOB_TABLE_ROWS:,}" in note


def test_without_a_job_or_with_a_small_table_every_row_is_shown():
    frame = _frame(JOB_TABLE_ROWS + 1)
    assert rows_while_indexing(frame, running=False) == (frame, None)
    small = _frame(JOB_TABLE_ROWS)
    shown, note = rows_while_indexing(small, running=True)
    assert len(shown) == JOB_TABLE_ROWS and note is None


def test_failure_reasons_are_listed_up_to_the_cap_then_counted():
    lines = [f"✗ n{i}.txt: empty file" for i in range(20_000)]
    shown = capped_reasons(lines, "the status table's error column")
    assert len(shown) == MAX_REASONS + 1 and shown[:MAX_REASONS] == lines[:MAX_REASONS]
    assert shown[-1] == f"… and {20_000 - MAX_REASONS:,} more (every reason is in the status table's error column)."
    assert capped_reasons(lines[:3]) == lines[:3]
    assert capped_reasons(lines[: MAX_REASONS + 2])[-1] == "… and 2 more."
