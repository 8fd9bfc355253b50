"""How much of a large Documents status table the page sends, and how many failure reasons it lists.

While a job runs, the Documents page redraws its status table every second (``POLL_S``). With a JSONL
corpus of 100,000 records that was the whole 100,000-row table each second: made formula-safe
(``ui.safe_tables``), serialised and sent to every watching browser, on the server that is indexing.
``rows_while_indexing`` keeps the most recently changed ``JOB_TABLE_ROWS`` rows during a job (the table
is sorted newest first, so these are the rows that move) and says how many are left out; the whole
table comes back when the job ends. ``capped_reasons`` lists at most ``MAX_REASONS`` failure lines
(one ``st.text`` each; 20,000 failed files were 20,000 elements) and says how many more there are.

No Streamlit here: the Documents page shows the rows and lines.
"""
from __future__ import annotations

from typing import Optional, Sequence

import pandas as pd

JOB_TABLE_ROWS = 500  # status-table rows sent each second while a job runs
MAX_REASONS = 50  # failure lines listed under the table or the run's report


def rows_while_indexing(frame: pd.DataFrame, running: bool) -> tuple[pd.DataFrame, Optional[str]]:
    """The rows of ``frame`` (newest first) to show, and a note naming what is left out (None: all shown).
    Every row is shown when no job runs."""
    if not running or len(frame) <= JOB_TABLE_ROWS:
        return frame, None
    return frame.head(JOB_TABLE_ROWS), (f"The {JOB_TABLE_ROWS:,} most recently changed of {len(frame):,} documents "
                                        "are shown while indexing runs; the whole table comes back when it ends.")


def capped_reasons(lines: Sequence[str], where: Optional[str] = None) -> list[str]:
    """At most ``MAX_REASONS`` of ``lines``, then one line saying how many more there are (and ``where``
    every reason can be read, when given)."""
    shown = list(lines[:MAX_REASONS])
    if len(lines) > MAX_REASONS:
        shown.append(f"… and {len(lines) - MAX_REASONS:,} more" + (f" (every reason is in {where})." if where else "."))
    return shown
