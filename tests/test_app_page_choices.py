"""AppTest: what a user typed or picked on a page is still there after visiting another page.

Streamlit forgets a widget's value at the end of any run that does not draw it, so a page switch
lost the Knowledge graph's search and filters, the Summary tree's view, Evaluate's k values and the
modes picked on Compare, Inspect and Evaluate. Those widgets now use Streamlit's own
``persist_state="session"``."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.sample_data_dir import sample_data_dir

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 300


@pytest.fixture()
def sample_app(tmp_path, monkeypatch, sample_workspace_dir) -> AppTest:
    sample_data_dir(tmp_path, monkeypatch, sample_workspace_dir, "sample")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["workspace_name"] = "sample"
    return at


def visit(at: AppTest, page: str) -> AppTest:
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_knowledge_graph_and_evaluate_choices_survive_a_page_switch(sample_app):
    at = sample_app
    at.run()
    visit(at, "pages/knowledge_graph.py")
    at.text_input(key="kg_search").set_value("Port Sallow")
    at.number_input(key="kg_max_nodes").set_value(30)
    at.checkbox(key="kg_size_by_degree").uncheck()
    at.run()
    visit(at, "pages/evaluate.py")
    at.text_input(key="eval_ks").set_value("1,3")
    at.multiselect(key="eval_modes").set_value(["naive", "ppr"])
    at.run()
    visit(at, "pages/compare.py")
    at.multiselect(key="compare_modes").set_value(["local", "tree"])
    at.run()
    visit(at, "pages/documents.py")
    visit(at, "pages/knowledge_graph.py")
    assert at.text_input(key="kg_search").value == "Port Sallow"
    assert at.number_input(key="kg_max_nodes").value == 30
    assert at.checkbox(key="kg_size_by_degree").value is False
    assert not at.warning, [w.value for w in at.warning]  # no "created with a default value" notice
    visit(at, "pages/evaluate.py")
    assert at.text_input(key="eval_ks").value == "1,3"
    assert at.multiselect(key="eval_modes").value == ["naive", "ppr"]
    visit(at, "pages/compare.py")
    assert at.multiselect(key="compare_modes").value == ["local", "tree"]


def test_summary_tree_view_and_inspect_mode_survive_a_page_switch(sample_app):
    at = sample_app
    at.run()
    visit(at, "pages/summary_tree.py")
    at.radio(key="tree_scope").set_value("all")
    at.run()
    visit(at, "pages/inspect.py")
    at.selectbox(key="inspect_mode").set_value("ppr")
    at.run()
    visit(at, "pages/documents.py")
    visit(at, "pages/summary_tree.py")
    assert at.radio(key="tree_scope").value == "all"
    visit(at, "pages/inspect.py")
    assert at.selectbox(key="inspect_mode").value == "ppr"
