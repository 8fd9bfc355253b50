"""Counts are shown with thousands separators everywhere the app shows them (``ui.numbers``): the sidebar read
"80256 document(s) waiting" and its metrics "1200"; tables keep numbers (sortable, plain in the CSV download)
and display them grouped through a column format. Each test fails on the code before."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from conftest import HashEmbedder
from core.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
PROCESSED, PENDING = 1_200, 1_500

SIDEBAR_SCRIPT = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from ui.sidebar import render_sidebar
render_sidebar()
"""

TABLE_SCRIPT = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import pandas as pd
from ui.safe_tables import safe_dataframe
safe_dataframe(pd.DataFrame({{"doc_id": [10_001], "chunks": [12_345], "year": [1894], "score": [0.5],
                             "name": ["=cmd"]}}), key="t1")
import streamlit as st
safe_dataframe(pd.DataFrame({{"tokens": [1_500]}}), key="t2",
               column_config={{"tokens": st.column_config.NumberColumn("tokens", format="%d")}})
"""


@pytest.fixture()
def big_workspace(tmp_path, monkeypatch) -> Path:
    """A workspace with 1,200 processed and 1,500 pending documents (rows only: nothing is indexed)."""
    ws = Workspace(tmp_path / "workspaces" / "big", embedder=HashEmbedder())
    try:
        with ws.records.unit_of_work():
            for i in range(PROCESSED + PENDING):
                ws.records.insert_document(f"d{i}", f"{i}.txt", f"{i}.txt", f"h{i}", "Harbour text.", 1_234)
                if i < PROCESSED:
                    ws.records.set_status(f"d{i}", "processed")
    finally:
        ws.close()
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(tmp_path / "workspaces"))
    for variable in ("RAGSCOPE_WORKSPACE", "RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "RAGSCOPE_ROLES"):
        monkeypatch.delenv(variable, raising=False)
    return tmp_path / "workspaces" / "big"


def test_count_text():
    from ui.numbers import count

    assert [count(n) for n in (0, 999, 1_000, 80_256, 1_234_567)] == ["0", "999", "1,000", "80,256", "1,234,567"]
    assert count("—") == "—"


def test_the_sidebar_counts_read_with_separators(big_workspace):
    at = AppTest.from_string(SIDEBAR_SCRIPT, default_timeout=300)
    at.session_state["workspace_name"] = "big"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert {m.label: m.value for m in at.metric}["Documents"] == "1,200"
    assert f"{PENDING:,} document(s) waiting to be indexed" in [c.value for c in at.caption]


def test_the_documents_page_metrics_and_table_show_counts_grouped(big_workspace):
    at = AppTest.from_file(str(ROOT / "pages" / "documents.py"), default_timeout=300)
    at.session_state["workspace_name"] = "big"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert {m.label: m.value for m in at.metric}["Documents"] == "1,200"
    table = next(d for d in at.dataframe if "tokens" in d.value.columns)
    assert table.value["tokens"].tolist()[0] == 1_234  # a number still: sorts as one, downloads as digits
    config = json.loads(table.proto.columns)
    assert config["tokens"]["type_config"]["format"] == "%,d" and config["chunks"]["type_config"]["format"] == "%,d"


def test_tables_group_count_columns_only():
    at = AppTest.from_string(TABLE_SCRIPT, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    first = json.loads(at.dataframe[0].proto.columns)
    assert first["chunks"]["type_config"]["format"] == "%,d"
    assert "doc_id" not in first and "year" not in first and "score" not in first  # labels and fractions as written
    assert at.dataframe[0].value["name"].tolist() == ["'=cmd"]  # the formula guard still applies
    assert json.loads(at.dataframe[1].proto.columns)["tokens"]["type_config"]["format"] == "%d"  # the caller's wins
    assert isinstance(pd.DataFrame(at.dataframe[0].value)["chunks"].iloc[0].item(), int)
