"""The LightRAG context tables go through ``csv.writer`` (``core/retrieval/csv_cells.py``) and keep the
cell rule they always had: newlines become spaces, double quotes single quotes, and a cell holding a
comma or a space is quoted. ``_by_hand`` is that rule as it was written before (the reference)."""
from __future__ import annotations

import csv
import random

import pytest

from core.retrieval import csv_cells
from core.retrieval.csv_cells import csv_table, record_line
from core.retrieval.lightrag_context import csv_line


def _by_hand(header, rows) -> str:
    def cell(value) -> str:
        text = str(value).replace("\n", " ").replace('"', "'")
        return f'"{text}"' if ("," in text or " " in text) else text
    return "\n".join([",".join(header), *(",".join(cell(v) for v in row) for row in rows)])


@pytest.mark.parametrize("row,line", [
    (("1", "Port Sallow", "GPE"), '1,"Port Sallow",GPE'),
    (("2", 'the "Kestrel" light', "a,b"), "2,\"the 'Kestrel' light\",\"a,b\""),
    (("3", "two\nlines", ""), '3,"two lines",'),
    ((4, 0.5, None), "4,0.5,None"),
    (("tab\there", "semi;colon", "it's"), "tab\there,semi;colon,it's"),
])
def test_known_cells(row, line):
    assert record_line(row) == line
    assert csv_table(("id", "entity", "type"), [row]) == "id,entity,type\n" + line


def test_the_csv_module_writes_the_same_bytes_as_the_hand_written_rule():
    rng = random.Random(7)
    alphabet = list('ab ,"\n\r\t\'\\;|é中\x0b\x0c\u2028\u00a0xyz09.-')
    for _ in range(20000):
        rows = [["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(0, 5))]
                for _ in range(rng.randint(0, 3))]
        header = rng.choice([(), ("id", "entity"), ("id", "source", "target", "keywords")])
        assert csv_table(header, rows) == _by_hand(header, rows), (header, rows)


def test_the_lines_come_from_the_csv_writer(monkeypatch):
    """Replace the writer and the tables change: the cells are not built by hand any more."""
    written = []
    real_writer = csv.writer

    class Spy:
        def __init__(self, buffer, dialect):
            self.real = real_writer(buffer, dialect=dialect)

        def writerow(self, cells):
            written.append(list(cells))
            return self.real.writerow(cells)

    monkeypatch.setattr(csv_cells.csv, "writer", Spy)
    csv_line.cache_clear()
    assert csv_line(("7", "Great Velmora Flood", "EVENT")) == '7,"Great Velmora Flood",EVENT'
    assert written == [["7", "Great Velmora Flood", "EVENT"]]
    csv_line.cache_clear()
