"""``csv_cells.LineWriter`` writes each table row exactly as ``csv_cells.record_line`` does."""
from __future__ import annotations

from core.retrieval.csv_cells import LineWriter
from core.retrieval.csv_cells import record_line

ROWS = [
    (1, "Abraham Van Helsing", "PERSON", 'He said "no", then left.\nA second line', 7),
    (2, "Seward", "ORG", "(see [2])", 5),
    (12, "a,b", "", "", 0),
    (3, "Drac", "PERSON", "tab\there; semi", 1, "kw one, kw two", "1.5"),
    (999, "x", "y", " leading and trailing ", -1),
    (4, "Ünïcødé — name", "GEO", "日本語 text, with “curly” quotes", 2),
]


def test_every_row_as_record_line_writes_it():
    line = LineWriter()
    assert [line(row) for row in ROWS] == [record_line(row) for row in ROWS]


def test_rows_do_not_leak_into_each_other():
    line = LineWriter()
    first = line(ROWS[0])
    assert line(ROWS[1]) == record_line(ROWS[1])
    assert line(ROWS[0]) == first
