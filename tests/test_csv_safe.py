"""No CSV the app or the CLI writes can carry a live spreadsheet formula (OWASP's CSV-injection rule):
cells starting with =, +, -, @, tab or carriage return get a leading quote, in the CLI's
``eval --per-question`` file and the Evaluate page's download, and no other CSV writer exists."""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from core.csv_safe import csv_text, safe_cell

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ['=HYPERLINK("http://evil.example/","gold")', "+1+2", "-2+3", "@SUM(A1)", "\tx", "\rx"]


@pytest.mark.parametrize("value", HOSTILE)
def test_formula_looking_text_is_neutralised(value):
    assert safe_cell(value) == "'" + value


def test_plain_text_and_numbers_are_left_alone():
    assert safe_cell("Port Sallow") == "Port Sallow" and safe_cell(-3) == -3 and safe_cell(0.5) == 0.5
    assert safe_cell(None) is None and safe_cell("a=b") == "a=b"


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def test_csv_text_neutralises_every_cell_and_header():
    text = csv_text([{"qid": v, "gold": v} for v in HOSTILE], ["qid", "gold"])
    cells = _cells(text)[2:]
    assert cells and all(c.startswith("'") for c in cells), cells


def test_the_cli_per_question_file_carries_no_formula(tmp_path):
    from core.cli.evaluate import write_rows

    path = tmp_path / "rows.csv"
    write_rows([{"qid": HOSTILE[0], "mode": "naive", "gold": [HOSTILE[0]], "question_type": "@x", "recall@2": -0.0}],
               path)
    cells = _cells(path.read_text(encoding="utf-8"))
    assert not any(c.startswith(("=", "+", "@", "\t", "\r")) for c in cells), cells
    assert "'" + HOSTILE[0] in cells and "'@x" in cells


def test_every_csv_writer_goes_through_csv_safe():
    """A new ``to_csv``/``csv.writer``/``DictWriter`` in the app or the library must use core.csv_safe
    (LightRAG's prompt cells in core/retrieval/csv_cells.py are prompt text, not a file anyone opens)."""
    allowed = {ROOT / "core" / "csv_safe.py", ROOT / "core" / "retrieval" / "csv_cells.py"}
    offenders = []
    for folder in ("core", "pages", "ui"):
        for path in (ROOT / folder).rglob("*.py"):
            if path in allowed:
                continue
            if re.search(r"\.to_csv\(|csv\.writer\(|DictWriter\(", path.read_text(encoding="utf-8")):
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, offenders


def test_streamlits_own_table_export_is_off():
    """Streamlit's table toolbar downloads any st.dataframe as CSV (and copies it to the clipboard) with
    the cells as they are — a document named ``=HYPERLINK(…)`` in the Documents table would reach the
    spreadsheet as a formula — so the app's config turns that export off (its own CSV goes through
    ``core.csv_safe``)."""
    import tomllib

    from streamlit import config as st_config

    assert "client.disableDataExport" in st_config._config_options_template  # the option this Streamlit reads
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["disableDataExport"] is True
