"""AppTest for the app shell, sidebar and the Documents / Knowledge graph / Summary tree / Settings
pages (empty and sample workspaces), plus unit tests of the graph renderer's escaping."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import networkx as nx
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
MY_PAGES = ["pages/documents.py", "pages/knowledge_graph.py", "pages/summary_tree.py", "pages/settings.py"]
XSS_SCRIPT = "<script>alert(1)</script>"
XSS_IMG = "<img src=x onerror=alert(1)>"
TIMEOUT = 300


@pytest.fixture()
def data_dir(tmp_path, monkeypatch) -> Path:
    """An empty data folder for the app's workspaces."""
    folder = tmp_path / "workspaces"
    folder.mkdir()
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(folder))
    monkeypatch.delenv("RAGSCOPE_WORKSPACE", raising=False)
    monkeypatch.delenv("RAGSCOPE_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("RAGSCOPE_LLM_MODEL", raising=False)
    return folder


@pytest.fixture()
def sample_data_dir(data_dir, sample_workspace_dir) -> Path:
    """The data folder with a private copy of the indexed sample workspace named 'sample'."""
    shutil.copytree(sample_workspace_dir, data_dir / "sample")
    return data_dir


def app(workspace: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    if workspace:
        at.session_state["workspace_name"] = workspace
    return at


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def open_page(at: AppTest, page: str) -> AppTest:
    """Run the app, then switch to ``page`` (AppTest drops the sidebar after a page switch, so
    sidebar checks are made on the default page)."""
    at.run()
    assert_clean(at)
    at.switch_page(page)
    at.run()
    assert_clean(at)
    return at


def finish_indexing(at: AppTest, timeout: float = TIMEOUT) -> AppTest:
    """Wait for the Documents page's background indexing job, then rerun so the page shows its report."""
    if "doc_job" in at.session_state:
        assert at.session_state["doc_job"].join(timeout), "indexing did not finish in time"
    at.run()
    assert_clean(at)
    return at


def status_table(at: AppTest):
    """The Documents status table (AppTest does not index dataframes by key)."""
    tables = [d.value for d in at.dataframe if "status" in d.value.columns]
    assert tables, "no status table"
    return tables[0]


def iframes(at: AppTest) -> list[str]:
    """The graph pages drawn: plain iframes and the clickable graph component's page."""
    pages = [el.proto.srcdoc for el in at.get("iframe")]
    for el in at.get("bidi_component"):
        data = json.loads(el.proto.json or "{}")
        if isinstance(data, dict) and data.get("html"):
            pages.append(data["html"])
    return pages


# --- rendering ------------------------------------------------------------------------------
@pytest.mark.parametrize("page", MY_PAGES)
def test_page_renders_on_empty_workspace(data_dir, page):
    at = open_page(app(), page)
    assert at.session_state["workspace_name"] == "default"


@pytest.mark.parametrize("page", MY_PAGES)
def test_page_renders_on_sample_workspace(sample_data_dir, page):
    at = open_page(app("sample"), page)
    assert at.title[0].value
    if page == "pages/knowledge_graph.py":
        assert iframes(at), "the knowledge graph was not drawn"
        assert "cdn_resources" not in iframes(at)[0]
        assert not re.search(r'<script[^>]+src="https?://', iframes(at)[0])
        assert at.selectbox(key="kg_entity").value
        profiles = [h.proto.body for h in at.get("html") if "rs-prose" in h.proto.body]
        assert profiles, "the entity profile is shown as escaped prose"
    if page == "pages/summary_tree.py":
        assert iframes(at)
        assert at.selectbox(key="tree_node").value


SIDEBAR_SCRIPT = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from ui.sidebar import render_sidebar
render_sidebar()
"""


def sidebar_app(workspace: str | None = None) -> AppTest:
    """The sidebar alone (with st.navigation, AppTest keeps the sidebar only on a session's first run)."""
    at = AppTest.from_string(SIDEBAR_SCRIPT, default_timeout=TIMEOUT)
    if workspace:
        at.session_state["workspace_name"] = workspace
    return at


def test_sidebar_counts_sample(sample_data_dir):
    at = app("sample")
    at.run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="sidebar_workspace").value == "sample"
    labels = {m.label: m.value for m in at.sidebar.metric}
    assert int(labels["Documents"]) >= 11 and int(labels["Entities"]) > 0 and int(labels["Summaries"]) > 0
    assert any("offline" in t.value for t in at.sidebar.text)


def test_knowledge_graph_controls(sample_data_dir):
    at = open_page(app("sample"), "pages/knowledge_graph.py")
    assert any("Showing 60 of" in c.value for c in at.caption), "the default view keeps the 60 best-connected nodes"
    at.number_input(key="kg_max_nodes").set_value(10).run()
    assert_clean(at)
    assert any("Showing 10 of" in c.value for c in at.caption), [c.value for c in at.caption]
    at.checkbox(key="kg_show_all").check().run()
    assert_clean(at)
    total = at.session_state["kg_view_signature"]  # set by the page: the view changed
    assert total and not any("Showing 10 of" in c.value for c in at.caption)
    at.checkbox(key="kg_show_all").uncheck().run()
    at.text_input(key="kg_search").input("velmora").run()
    assert_clean(at)
    assert any("velmora" in (o or "").lower() for o in at.selectbox(key="kg_entity").options)
    at.number_input(key="kg_depth").set_value(2).run()
    at.number_input(key="kg_min_degree").set_value(2).run()
    assert_clean(at)
    at.text_input(key="kg_search").input("no-such-entity-xyz").run()
    assert any("No entity matches" in w.value for w in at.warning)
    at.text_input(key="kg_search").input("").run()
    at.checkbox(key="kg_show_all").check().run()
    assert at.number_input(key="kg_max_nodes").disabled
    at.toggle(key="kg_mention").set_value(True).run()
    assert_clean(at)
    assert iframes(at)
    assert at.selectbox(key="kg_entity").value
    # the mention graph opens on its default view: "Show all nodes" unticked, Max nodes usable
    assert not at.checkbox(key="kg_show_all").value and not at.number_input(key="kg_max_nodes").disabled
    assert any("Showing 10 of" in c.value for c in at.caption), [c.value for c in at.caption]


def test_search_neighbours_keep_the_legend_colours(sample_data_dir):
    from core.auth import LOCAL_ADMIN
    from core.workspace import Workspace
    from ui.graph_page import draw_view
    from ui.graph_view import FADED_NODE, color_for

    ws = Workspace(sample_data_dir / "sample")
    try:
        view = draw_view(LOCAL_ADMIN, ws, False, "sallow", 1)
    finally:
        ws.close()
    assert view.matches and len(view.ids) > len(view.matches)
    assert FADED_NODE not in view.html
    assert all(color_for(label) == colour for label, colour in view.legend)
    plain = re.findall(r'"color": "(#[0-9a-f]{6})"', view.html)  # a node in its type's colour, no border
    framed = re.findall(r'"color": \{"background": "(#[0-9a-f]{6})", "border"', view.html)  # the matches
    assert len(framed) == len(view.matches) and len(plain) == len(view.ids) - len(view.matches)
    assert set(plain) <= {colour for _, colour in view.legend}


def test_summary_tree_views(sample_data_dir):
    at = open_page(app("sample"), "pages/summary_tree.py")
    at.radio(key="tree_scope").set_value("doc").run()
    assert_clean(at)
    assert at.selectbox(key="tree_doc").value
    nodes = at.selectbox(key="tree_node").options
    assert any("chunk" in n for n in nodes)
    at.radio(key="tree_scope").set_value("all").run()
    assert_clean(at)


# --- settings -------------------------------------------------------------------------------
def test_settings_round_trip_never_saves_the_key(data_dir):
    at = open_page(app(), "pages/settings.py")
    at.number_input(key="set::default::chunk_tokens").set_value(800)
    at.number_input(key="set::default::tree_top_k").set_value(12)
    at.text_input(key="settings_api_key_input").input("sk-very-secret-123")
    at.button(key="settings_save").click().run()
    assert_clean(at)
    saved = (data_dir / "default" / "settings.json").read_text(encoding="utf-8")
    assert json.loads(saved)["chunk_tokens"] == 800 and json.loads(saved)["tree_top_k"] == 12
    assert "sk-very-secret-123" not in saved
    assert at.session_state["llm_api_key"] == "sk-very-secret-123"
    for path in (data_dir / "default").rglob("*"):
        if path.is_file() and path.stat().st_size < 5_000_000:
            assert b"sk-very-secret-123" not in path.read_bytes(), path
    fresh = open_page(app(), "pages/settings.py")  # a new session reads the saved file
    assert fresh.number_input(key="set::default::chunk_tokens").value == 800
    assert fresh.text_input(key="settings_api_key_input").value in ("", None)
    fresh.button(key="settings_reset").click().run()
    assert fresh.number_input(key="set::default::reset1::chunk_tokens").value == 1200


def test_settings_embedder_change_on_indexed_workspace_is_refused(sample_data_dir):
    at = open_page(app("sample"), "pages/settings.py")
    at.selectbox(key="set::sample::embedder").set_value("openai")
    at.button(key="settings_save").click().run()
    assert not at.exception
    assert any("embedder" in e.value.lower() for e in at.error), [e.value for e in at.error]
    settings_file = sample_data_dir / "sample" / "settings.json"
    assert not settings_file.exists() or json.loads(settings_file.read_text())["embedder"] == "local-minilm"


def test_settings_page_shows_a_torch_built_workspace_keeps_its_embedder(data_dir):
    """New workspaces default to int8; one the torch MiniLM built (no settings file) opens with no refusal,
    the Settings page shows its recorded model, and Save keeps it (no silent switch)."""
    from core.workspace import Workspace

    class Named:  # records the torch model's name without loading it
        name, dim = "all-MiniLM-L6-v2", 384

    ws = Workspace(data_dir / "old", embedder=Named())
    ws.record_embedder()
    ws.close()
    at = open_page(app("old"), "pages/settings.py")
    assert at.selectbox(key="set::old::embedder").value == "local-minilm"
    at.number_input(key="set::old::chunk_tokens").set_value(900)
    at.button(key="settings_save").click().run()
    assert_clean(at)
    saved = json.loads((data_dir / "old" / "settings.json").read_text())
    assert saved["embedder"] == "local-minilm" and saved["chunk_tokens"] == 900
    fresh = open_page(app(), "pages/settings.py")  # the default workspace, new: int8
    assert fresh.selectbox(key="set::default::embedder").value == "local-minilm-int8"


def test_settings_test_connection_offline(data_dir):
    at = open_page(app(), "pages/settings.py")
    at.button(key="settings_test").click().run()
    assert not at.exception
    assert any("offline" in i.value for i in at.info) or any("not installed" in w.value for w in at.warning)


def test_llm_fields_are_greyed_out_while_the_provider_is_offline(data_dir):
    at = open_page(app(), "pages/settings.py")
    assert at.selectbox(key="set::default::provider").value == "offline"
    assert at.text_input(key="set::default::llm_model").disabled
    assert at.number_input(key="set::default::llm_temperature").disabled
    assert not at.text_input(key="settings_api_key_input").disabled  # the embeddings server may need it
    assert not at.number_input(key="set::default::chunk_tokens").disabled
    at.selectbox(key="set::default::provider").set_value("openai").run()
    assert not at.exception  # (the model name is now required: the form says so)
    assert not at.text_input(key="set::default::llm_model").disabled


# --- workspaces -----------------------------------------------------------------------------
def test_create_switch_and_delete_workspace(data_dir):
    at = sidebar_app()
    at.run()
    at.sidebar.text_input(key="sidebar_new_workspace").input("bad name!")
    at.sidebar.button(key="sidebar_create").click().run()
    assert any("Invalid name" in e.value for e in at.sidebar.error)
    at.sidebar.text_input(key="sidebar_new_workspace").input("proj-2")
    at.sidebar.button(key="sidebar_create").click().run()
    assert_clean(at)
    assert at.session_state["workspace_name"] == "proj-2"
    assert (data_dir / "proj-2").is_dir()
    assert at.sidebar.button(key="sidebar_delete").disabled
    at.sidebar.checkbox(key="sidebar_delete_confirm").check().run()
    at.sidebar.button(key="sidebar_delete").click().run()
    assert_clean(at)
    assert not (data_dir / "proj-2").exists()
    assert at.session_state["workspace_name"] == "default"


def test_a_ticked_delete_confirmation_does_not_follow_create_and_switch(data_dir):
    """Ticking "Yes, delete workspace default" and then creating (or switching to an existing) workspace
    left the box ticked for the new one, its Delete button enabled without a confirmation for it."""
    (data_dir / "kept").mkdir()
    at = sidebar_app()
    at.run()
    at.sidebar.checkbox(key="sidebar_delete_confirm").check().run()
    assert not at.sidebar.button(key="sidebar_delete").disabled
    at.sidebar.text_input(key="sidebar_new_workspace").input("kept")  # an existing workspace: switched to
    at.sidebar.button(key="sidebar_create").click().run()
    assert_clean(at)
    assert at.session_state["workspace_name"] == "kept"
    assert at.sidebar.checkbox(key="sidebar_delete_confirm").value is False
    assert at.sidebar.button(key="sidebar_delete").disabled


# --- documents ------------------------------------------------------------------------------
@pytest.mark.slow
def test_paste_text_indexes_a_document_and_escapes_it(data_dir):
    at = open_page(app(), "pages/documents.py")
    text = ("Mara Quill founded the Harbor Guild in Port Sallow. The Harbor Guild hired Ivo Brandt. "
            f"Ivo Brandt wrote {XSS_SCRIPT} and {XSS_IMG} in the Port Sallow ledger. ") * 3
    at.text_input(key="doc_paste_name").input("xss-note")
    at.text_area(key="doc_paste_text").input(text)
    at.button(key="doc_paste_index").click().run()
    assert_clean(at)
    finish_indexing(at)  # indexing runs on a background thread
    assert any("Indexed 1 document" in s.value for s in at.success), [s.value for s in at.success]
    assert any("Extraction: spaCy (offline)" in i.value for i in at.info)
    table = status_table(at)
    assert list(table["status"]) == ["processed"] and table["chunks"].iloc[0] >= 1
    assert at.text_area(key="doc_paste_text").value == ""
    at.switch_page("pages/knowledge_graph.py")
    at.run()
    assert_clean(at)
    for page in iframes(at):
        assert XSS_SCRIPT not in page and XSS_IMG not in page
    at.toggle(key="kg_mention").set_value(True).run()
    for page in iframes(at):
        assert XSS_SCRIPT not in page and XSS_IMG not in page
    assert not any(XSS_IMG in m.value for m in at.markdown)


def test_documents_delete_and_failed_reason(sample_data_dir):
    at = open_page(app("sample"), "pages/documents.py")
    table = status_table(at)
    assert (table["status"] == "processed").all()
    select = at.multiselect(key="doc_delete_select")
    target = select.options[0]
    select.select(target).run()
    at.button(key="doc_delete").click().run()
    assert_clean(at)
    assert any("Deleted 1 document" in s.value for s in at.success)
    assert len(status_table(at)) == len(table) - 1


# --- graph renderer ---------------------------------------------------------------------------
def hostile_graph() -> nx.Graph:
    graph = nx.Graph()
    graph.add_node("a", name=XSS_SCRIPT, type="PERSON", description=f"{XSS_IMG} said hello href=javascript:x")
    graph.add_node("b", name=XSS_IMG, type=XSS_SCRIPT, description=XSS_SCRIPT * 50)
    graph.add_node("c", name="Plain", type="ORG", description="ok")
    graph.add_edge("a", "b", keywords=[XSS_IMG], description=XSS_SCRIPT, weight=1.0)
    graph.add_edge("b", "c", keywords=["x"], description="y", weight=2.0)
    return graph


@pytest.mark.parametrize("kwargs", [{}, {"highlight_nodes": {"a"}, "highlight_edges": {("a", "b")}},
                                    {"hierarchical": True}, {"title_fn": lambda n, d: f"{d['name']}\n{XSS_IMG}"}])
def test_graph_html_escapes_untrusted_text(kwargs):
    from ui.graph_view import graph_html

    page = graph_html(hostile_graph(), **kwargs)
    assert XSS_SCRIPT not in page and XSS_IMG not in page
    assert "&lt;script&gt;" in page.replace("\\u0026", "&")
    assert "vis.Network" in page and not re.search(r'<(?:script|link)[^>]+(?:src|href)="https?://', page)
    assert "popup.innerHTML" not in page  # pyvis's innerHTML tooltip template is never switched on


def test_graph_html_caps_long_text_and_lists_legend():
    from ui.graph_view import MAX_LABEL_CHARS, MAX_TITLE_CHARS, graph_html, legend_items

    graph = hostile_graph()
    graph.add_node("long", name="N" * 500, type="ORG", description="D" * 5000)
    page = graph_html(graph)
    assert '"label": "' + "N" * (MAX_LABEL_CHARS - 1) + "\\u2026" + '"' in page  # label capped with an ellipsis
    assert "N" * 201 not in page and "D" * (MAX_TITLE_CHARS + 1) not in page
    legend = dict(legend_items(graph, "type"))
    assert set(legend) == {"PERSON", "ORG", XSS_SCRIPT}
    assert legend["ORG"] != legend["PERSON"]


def test_graph_html_highlight_fades_others():
    from ui.graph_view import FADED_EDGE, FADED_NODE, HIGHLIGHT_EDGE, graph_html

    page = graph_html(hostile_graph(), highlight_nodes={"c"}, highlight_edges={("c", "b")})
    assert FADED_NODE in page and HIGHLIGHT_EDGE in page and FADED_EDGE in page
    assert graph_html(nx.Graph())  # an empty graph still renders


# --- error display --------------------------------------------------------------------------
ERRORS_SCRIPT = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
from ui.errors import show_errors
from core.errors import WorkspaceBusyError

with show_errors():
    raise ValueError("bad *input* [x](y)")
with show_errors("Indexing"):
    raise WorkspaceBusyError("workspace busy (pid 1)")
with show_errors():
    raise KeyError("boom")
st.write("after")
"""


def test_errors_are_readable_messages_not_tracebacks():
    at = AppTest.from_string(ERRORS_SCRIPT, default_timeout=60)
    at.run()
    assert not at.exception
    raw = [e.value for e in at.error]
    assert len(raw) == 3
    assert "bad \\*input\\* \\[x\\]\\(y\\)" in raw[0]  # Markdown characters are escaped
    messages = [m.replace("\\", "") for m in raw]
    assert "bad *input* [x](y)" in messages[0] and "Something went wrong" not in messages[0]
    assert messages[1].startswith("Indexing") and "workspace busy" in messages[1]
    assert "Something went wrong: KeyError" in messages[2]
    assert len(at.expander) == 1 and "Traceback" in at.expander[0].code[0].value
    assert at.markdown[-1].value == "after"
