"""The demo-grade behaviours of issue 16 that need no browser: graph budget and label placement,
clicks reaching the Details panel, escaped prose, compact metrics and the split latency chart, one
entity count, example questions, exports, per-question ranks, truthful counters, settings labels,
tree labels, and the app following a workspace the CLI changed (AppTest + pure helpers)."""
from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest
from streamlit.testing.v1 import AppTest

from tests.sample_data_dir import sample_data_dir

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 300


@pytest.fixture()
def data_dir(tmp_path, monkeypatch, sample_workspace_dir) -> Path:
    return sample_data_dir(tmp_path, monkeypatch, sample_workspace_dir, "sample")


def run_page(path: str, workspace: str = "sample") -> AppTest:
    at = AppTest.from_file(str(ROOT / path), default_timeout=TIMEOUT)
    at.session_state["workspace_name"] = workspace
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def component_data(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.json or "{}") for el in at.get("bidi_component")]


# --- graphs: budget, labels, edge weights ---------------------------------------------------
def test_labels_only_where_they_fit_and_edges_show_weight():
    from ui.graph_view import _labelled_nodes, _node_sizes, _overlap, force_layout, graph_html, label_box

    graph = nx.barabasi_albert_graph(150, 2, seed=3)
    nx.set_node_attributes(graph, {n: f"Entity number {n}" for n in graph}, "name")
    positions = force_layout(graph)
    sizes = _node_sizes(graph, True)
    degrees = dict(graph.degree())
    labelled = _labelled_nodes(graph, degrees, set(), positions, "name", sizes)
    assert 5 <= len(labelled) < graph.number_of_nodes()
    from ui.graph_view import LABEL_HUBS

    hubs = sorted(degrees, key=lambda n: (-degrees[n], str(n)))[:LABEL_HUBS]
    assert hubs[0] in labelled and len(set(hubs) & labelled) * 2 >= len(hubs)  # hubs are named unless labels collide
    boxes = {n: label_box(positions[n], f"Entity number {n}", sizes[n]) for n in labelled}
    # the first LABEL_HUBS labels placed (in rank order) may cover dots; every later one covers none
    exempt = set(sorted(labelled, key=lambda n: (-degrees[n], str(n)))[:LABEL_HUBS])
    for i, a in enumerate(labelled):  # no two labels overlap; other labels cover no node's dot
        for b in list(labelled)[i + 1:]:
            assert not _overlap(boxes[a], boxes[b])
        if a in exempt:
            continue
        for other, (x, y) in positions.items():
            if other != a:
                r = 0.6 * sizes[other]
                assert not _overlap(boxes[a], (x - r, y - r, x + r, y + r))
    weighted = nx.Graph()
    weighted.add_edge("a", "b", weight=1)
    weighted.add_edge("b", "c", weight=9)
    page = graph_html(weighted)
    assert '"width": 6.0' in page and '"width": 2.67' in page  # 1 + 5·sqrt(w / max)


def test_knowledge_graph_default_budget_click_and_exports(data_dir):
    at = run_page("pages/knowledge_graph.py")
    assert any(c.value.startswith("Showing 60 of") for c in at.caption)
    data = component_data(at)
    assert len(data) == 1 and "vis.Network" in data[0]["html"]
    assert data[0]["selected"] == at.session_state["kg_entity"]  # Python -> graph: the selection is marked
    # graph -> Python: a node click selects that entity, an edge click opens that relation
    from ui.graph_component import _as_click, apply_click

    session: dict = {"kg_entity": "a", "kg_edge": ("x", "y")}
    apply_click(session, _as_click({"kind": "node", "id": "b", "n": 5}), "kg_entity", "kg_edge")
    assert session == {"kg_entity": "b"}
    apply_click(session, _as_click({"kind": "edge", "source": "b", "target": "c", "n": 6}), "kg_entity", "kg_edge")
    assert session == {"kg_entity": "b", "kg_edge": ("b", "c")}
    apply_click(session, _as_click({"kind": "edge", "source": "d", "target": "c", "n": 7}), "kg_entity", "kg_edge")
    assert session == {"kg_entity": "d", "kg_edge": ("d", "c")}  # the picker follows the clicked edge
    assert _as_click({"kind": "script", "id": "x"}) is None and _as_click(None) is None
    # the Details panel of a clicked edge: both endpoints, keywords, weight, description, source chunks
    from core.workspace import Workspace

    ws = Workspace(data_dir / "sample")
    try:
        graph = ws.knowledge_graph()
        shown = set(at.session_state["kg_view_signature"][1])
        a, b = max((e for e in graph.edges if e[0] in shown), key=lambda e: graph.edges[e].get("weight", 0))
        name_a, name_b = graph.nodes[a].get("name") or a, graph.nodes[b].get("name") or b
    finally:
        ws.close()
    at.session_state["kg_edge"] = (a, b)
    at.run()
    assert not at.exception
    texts = [t.value for t in at.text]
    assert f"Relation: {name_a} — {name_b}" in texts or f"Relation: {name_b} — {name_a}" in texts, texts[:5]
    assert any(e.label.startswith("Source chunk 1") for e in at.expander)
    # show all nodes lifts the budget
    at.checkbox(key="kg_show_all").check().run()
    assert not at.exception
    assert not any(c.value.startswith("Showing 60 of") for c in at.caption)
    # exports: both graphs, GraphML and JSON, readable back with networkx
    labels = {d.proto.label for d in at.get("download_button")}
    assert {"Knowledge graph (GraphML)", "Knowledge graph (JSON)", "Mention graph (GraphML)",
            "Mention graph (JSON)"} <= labels
    from core.export import graph_bytes

    ws = Workspace(data_dir / "sample")
    try:
        kg = nx.read_graphml(io.BytesIO(graph_bytes(ws.knowledge_graph(), "graphml")))
        assert kg.number_of_nodes() == ws.knowledge_graph().number_of_nodes() > 0
        mention = json.loads(graph_bytes(ws.mention_graph(), "json"))
        assert len(mention["nodes"]) == ws.mention_graph().number_of_nodes() > 0
    finally:
        ws.close()


# --- escaped, readable prose ----------------------------------------------------------------
def test_prose_removes_markup_and_cut_off_repeats_and_escapes():
    from ui.prose import prose_html, readable_paragraphs

    text = ("## Foundation\n- Port Sallow - a harbour town.\nThe **institute** was founded by Agnes Marlowe. "
            "The institute was founded by Agnes\nThe institute was founded by Agnes Marlowe.\n"
            "<script>alert(1)</script> [a link](http://example.org) stays text.")
    joined = " ".join(readable_paragraphs(text))
    assert "##" not in joined and "**" not in joined and "- Port" not in joined and "http" not in joined
    assert joined.count("founded by Agnes") == 1  # the repeat and its cut-off copy are gone
    assert joined.startswith("Foundation. Port Sallow – a harbour town.")
    page = prose_html(text)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


# --- Compare: compact metrics, split latency chart, example questions --------------------------
def test_metrics_line_and_latency_chart_keep_the_answer_apart():
    from core.types import Answer, ChunkHit, EntityHit, PathHit, RetrievalResult
    from ui.result_summary import latency_figure, metric_items

    fast = RetrievalResult(mode="naive", query="q", chunks=[ChunkHit.make("c", 1.0, "")] * 3, context_tokens=300,
                           timings_ms={"embed_query": 5.0, "vector_search": 3.0, "answer": 900.0},
                           answer=Answer(text="a", kind="extractive"))
    slow = RetrievalResult(mode="path", query="q", entities=[EntityHit.make("e", {"name": "E"}, 1.0, "")] * 2,
                           paths=[PathHit(rank=1, nodes=[], keys=[], relations=[], resources={}, score=0.0, hops=0, text="")],
                           context_tokens=50, timings_ms={"graph_walk": 120.0, "answer": 10.0},
                           answer=Answer(text="a", kind="llm", model="m"), llm_calls=1, prompt_tokens=40,
                           completion_tokens=7)
    items = metric_items(fast)
    assert items == ["3 chunks", "300 context tokens", "retrieval 8 ms", "answer 900 ms (extractive)"]
    assert metric_items(slow)[:2] == ["2 entities", "1 path"]
    assert "1 LLM call (40 prompt + 7 completion tokens)" in metric_items(slow)
    fig = latency_figure({"naive": fast, "path": slow})
    bars = [t for t in fig.data if t.type == "bar"]
    left = [t for t in bars if t.xaxis == "x"]
    right = [t for t in bars if t.xaxis == "x2"]
    assert {t.name for t in right} == {"answer (extractive, no LLM)", "answer (LLM)"}
    assert left and all("answer" not in t.name for t in left)
    assert sum(t.x[0] for t in left) == pytest.approx(8.0)  # naive's retrieval bar excludes its 900 ms answer


def test_compare_example_picker_fills_the_question_and_shows_compact_metrics(data_dir):
    at = run_page("pages/compare.py")
    picker = at.selectbox(key="compare_question_example")
    assert picker.value is None and len(picker.options) >= 10
    option = next(o for o in picker.options if o.startswith("sample:2 "))
    picker.set_value(option).run()
    assert at.text_area(key="compare_question").value == \
        "Who was appointed arbitrator in the Carrow Sound fishing dispute?"
    at.multiselect(key="compare_modes").set_value(["naive", "local"])
    at.button(key="compare_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    lines = [c.value for c in at.caption if "context tokens" in c.value and "retrieval" in c.value]
    assert len(lines) == 2 and all("LLM call" not in line for line in lines)
    assert not [d for d in at.dataframe if list(d.value.columns) == ["metric", "value"]]  # no 11-row tables


def _inspect_examples(workspace: str, loaded: tuple) -> AppTest:
    inspect = AppTest.from_file(str(ROOT / "pages" / "inspect.py"), default_timeout=TIMEOUT)
    inspect.session_state["workspace_name"] = workspace
    inspect.session_state["eval_loaded_questions"] = loaded
    inspect.run()
    assert not inspect.exception, [e.value for e in inspect.exception]
    return inspect


def test_examples_from_a_question_file_follow_its_corpus_not_the_session(data_dir):
    """A question file loaded on Evaluate gives the examples of Compare / Inspect in the workspaces holding
    its gold documents (a file naming none: in the workspace it was loaded in); after a switch to a workspace
    without them its questions are no longer offered (they were, read as questions this workspace should
    answer). Where it was loaded does not count when it names gold documents: Evaluate picks a built-in
    file by itself on whatever workspace it is opened (seen in a browser)."""
    at = run_page("pages/evaluate.py")
    loaded = at.session_state["eval_loaded_questions"]
    assert loaded[1][0][0] == "sample:1" and loaded[2] == "sample"
    (data_dir / "other").mkdir()
    shutil.copytree(data_dir / "sample", data_dir / "other", dirs_exist_ok=True)
    same_corpus = _inspect_examples("other", loaded).selectbox(key="inspect_question_example")
    from ui.errors import escape_markdown

    assert f"from {escape_markdown(loaded[0])})" in same_corpus.label  # the file's, not the built-in list's
    foreign = ("dev.jsonl", [("q1", "Where is Port Sallow?")], "elsewhere", [["musique:1"], ["musique:2", "Foo"]])
    picker = _inspect_examples("other", foreign).selectbox(key="inspect_question_example")
    assert "the sample corpus questions" in picker.label  # this workspace's own examples instead
    assert "q1 · Where is Port Sallow?" not in picker.options
    loaded_here = _inspect_examples("other", (*foreign[:2], "other", foreign[3]))  # Evaluate opened on "other"
    assert "the sample corpus questions" in loaded_here.selectbox(key="inspect_question_example").label
    no_gold = ("mine.jsonl", foreign[1], "other", [[]])  # questions naming no gold document: where loaded only
    assert _inspect_examples("other", no_gold).selectbox(key="inspect_question_example").options == \
        ["q1 · Where is Port Sallow?"]
    elsewhere = _inspect_examples("sample", no_gold).selectbox(key="inspect_question_example")
    assert "q1 · Where is Port Sallow?" not in elsewhere.options


# --- Inspect: one entity count, budget, exports ------------------------------------------------
def test_inspect_one_entity_count_budget_and_subgraph_exports(data_dir):
    at = run_page("pages/inspect.py")
    at.selectbox(key="inspect_mode").set_value("local")
    at.text_area(key="inspect_question").input("Who founded the Velmora Marine Institute?")
    at.button(key="inspect_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    result = at.session_state["inspect_last"]["result"]
    assert at.metric[0].label == "Entities" and at.metric[0].value == str(len(result.entities))
    caption = next(c.value for c in at.caption if "retrieved entities" in c.value)
    assert caption.startswith(f"local: {len(result.entities)} retrieved entities")
    from ui.subgraph_view import DEFAULT_BUDGET

    drawn = int(caption.split(" — ")[1].split(" nodes")[0])
    assert 0 < drawn <= DEFAULT_BUDGET
    labels = {d.proto.label for d in at.get("download_button")}
    assert {"Download subgraph (GraphML)", "Download subgraph (HTML, works offline)"} <= labels
    html_page = at.session_state["inspect_last"]["graph_html"]
    assert "vis.Network" in html_page and 'src="http' not in html_page and 'href="http' not in html_page
    at.checkbox(key="inspect_graph_all").check().run()
    at.checkbox(key="inspect_graph_neighbours").check().run()
    assert not at.exception
    wider = next(c.value for c in at.caption if "retrieved entities" in c.value)
    assert int(wider.split(" — ")[1].split(" nodes")[0]) >= drawn


def test_query_subgraph_roles_and_budget():
    from core.types import EntityHit, RelationHit, RetrievalResult
    from ui.subgraph_view import caption, query_subgraph

    g = nx.path_graph(["a", "b", "c", "d", "e"])
    g.add_edge("b", "x")
    result = RetrievalResult(mode="local", query="q",
                             entities=[EntityHit.make("b", {"name": "B"}, 1.0, ""), EntityHit.make("zz", {"name": "Z"}, 1.0, "")],
                             relations=[RelationHit.make("b", "c", ("B", "C"), {}, 1.0, "")])
    view = query_subgraph(g, result, budget=10)
    assert view.entities == ["b"] and view.endpoints == ["c"] and view.edges == {("b", "c")}
    assert set(view.graph.nodes) == {"b", "c"} and view.graph.nodes["c"]["role"] == "endpoint"
    assert caption(view, "local").startswith("local: 2 retrieved entities (1 drawn), 1 retrieved relations")
    wide = query_subgraph(g, result, budget=4, neighbours=True)
    assert wide.graph.number_of_nodes() == 4 and {"b", "c"} <= set(wide.graph.nodes)
    assert wide.graph.nodes[wide.neighbours[0]]["role"] == "neighbour"


# --- Evaluate: names and numeric ranks ---------------------------------------------------------
def test_gold_rank_frame_uses_names_and_numbers():
    from ui.eval_tables import gold_rank_frame, rows_frame

    rows = [{"qid": "q1", "mode": "naive", "gold": ["d1", "d2"], "found_ranks": {"d1": 1, "d2": None}},
            {"qid": "q1", "mode": "path", "gold": ["d1", "d2"], "found_ranks": {"d1": 4, "d2": 2}}]
    frame = gold_rank_frame(rows, {"q1": "Who?"}, {"d1": "one.md", "d2": "two.md"})
    assert list(frame.columns) == ["qid", "question", "document", "naive", "path"]
    assert list(frame["document"]) == ["one.md", "two.md"] and frame["naive"].dtype.kind == "f"
    assert frame["naive"].tolist()[0] == 1 and frame["naive"].isna().tolist() == [False, True]
    assert frame["path"].tolist() == [4, 2]
    detail = rows_frame(rows, {"d1": "one.md", "d2": "two.md"})
    assert detail["gold documents"].tolist() == ["one.md, two.md"] * 2
    assert detail["found"].tolist() == [1, 2] and detail["best rank"].tolist() == [1, 2]


def test_evaluate_page_shows_gold_ranks_by_name(data_dir):
    at = run_page("pages/evaluate.py")
    at.multiselect(key="eval_modes").set_value(["naive"])
    at.number_input(key="eval_limit").set_value(3)
    at.button(key="eval_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "document" in d.value.columns and "question" in d.value.columns)
    assert table["document"].str.endswith(".md").all()
    assert table["question"].str.len().min() > 10
    ranks = table["naive"].tolist()  # a gold rank, or "—" where the mode did not retrieve that document
    assert all(r == "—" or (float(r) >= 1 and float(r) == int(float(r))) for r in ranks), ranks
    assert any(r != "—" for r in ranks), ranks


# --- truthful counters, uploader limit, sample button, settings labels, tree labels ------------
def test_uploader_limit_matches_the_loader_and_embedding_progress_slices():
    import tomllib

    from core.indexing.batch import progress_slices
    from core.loaders import DEFAULT_MAX_BYTES

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 1024 * 1024 == DEFAULT_MAX_BYTES
    assert progress_slices(600) == [(0, 256), (256, 600)] and progress_slices(3) == [(0, 3)]
    assert progress_slices(300) == [(0, 300)]  # a short tail joins the previous slice


def test_growth_chart_has_whole_document_ticks():
    from ui.indexing import growth_figure

    points = [{"documents": d, "entities": 10 * d, "relations": 20 * d} for d in range(4)]
    axis = growth_figure(points).layout.xaxis
    assert axis.tickmode == "linear" and axis.dtick == 1 and axis.tickformat == "d"
    many = [{"documents": d, "entities": d, "relations": d} for d in range(0, 1001, 100)]
    assert growth_figure(many).layout.xaxis.dtick == 100  # about ten whole-number ticks


def test_documents_page_sample_button_is_visible_and_newest_first(data_dir):
    at = run_page("pages/documents.py")
    assert at.button(key="doc_load_samples").label == "Load sample corpus"
    assert "Sample corpus" not in [t.label for t in at.tabs]  # not hidden in a tab
    table = next(d.value for d in at.dataframe if "status" in d.value.columns)
    assert list(table.columns)[-1] == "updated"
    assert table["updated"].tolist() == sorted(table["updated"].tolist(), reverse=True)


def test_sidebar_counts_are_live_while_indexing(data_dir, monkeypatch):
    from ui import sidebar

    class Running:
        running = True

    at = AppTest.from_string(f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from ui.sidebar import render_sidebar
render_sidebar()
""", default_timeout=TIMEOUT)
    at.session_state["workspace_name"] = "sample"
    at.session_state["doc_job"] = Running()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("counts update live" in c.value for c in at.sidebar.caption)
    assert sidebar.LIVE_POLL_S <= 2


def test_settings_labels_are_human_and_keep_help(data_dir):
    from core.settings import Settings
    from ui.settings_labels import LABELS

    assert set(Settings.model_fields) - {"version"} <= set(LABELS)
    at = run_page("pages/settings.py")
    labels = {n.label for n in at.number_input}
    assert "Request timeout (seconds)" in labels and "llm timeout s" not in labels
    timeout = next(n for n in at.number_input if n.label == "Request timeout (seconds)")
    assert timeout.help == Settings.field_help()["llm_timeout_s"] + " Allowed: 0 – 3,600."  # the range, also inline


def test_tree_labels_name_documents_and_chunks(data_dir):
    at = run_page("pages/summary_tree.py")
    at.radio(key="tree_scope").set_value("doc").run()
    assert not at.exception
    page = component_data(at)[0]["html"]
    labels = [n["label"] for n in json.loads(page.split("nodes = new vis.DataSet(")[1].split(");")[0])]
    chunk_labels = [" ".join(label.split()) for label in labels if "chunk" in label]  # lines joined
    assert chunk_labels and all(re.fullmatch(r"\S+ · chunk \d+", label) for label in chunk_labels), chunk_labels
    assert not any(label.endswith(".…") for label in labels)
    assert all(len(line) <= 20 for label in labels for line in label.split("\n"))


# --- the app follows a workspace the CLI changed ------------------------------------------------
NEW_DOC = ("The Quillon Observatory was founded by Marisa Threnody in 1931 on Gull Ridge above Port Sallow. "
           "Its brass telescope came from the Dunmore instrument works.\n") * 3


@pytest.mark.slow
def test_cli_indexing_beside_an_open_session_is_seen_by_the_next_query(data_dir, tmp_path):
    at = run_page("pages/inspect.py")
    at.selectbox(key="inspect_mode").set_value("naive")
    at.text_area(key="inspect_question").input("Who founded the Quillon Observatory?")
    at.button(key="inspect_run").click().run()
    before = at.session_state["inspect_last"]["result"]
    assert "quillon.txt" not in [c.doc_name for c in before.chunks]
    doc = tmp_path / "quillon.txt"
    doc.write_text(NEW_DOC, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "core", "index", "--workspace", str(data_dir / "sample"), str(doc)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    at.button(key="inspect_run").click().run()  # the same session, its vector store opened before the CLI ran
    assert not at.exception, [e.value for e in at.exception]
    after = at.session_state["inspect_last"]["result"]
    assert [c.doc_name for c in after.chunks][0] == "quillon.txt"
    from ui import state

    assert "vector store was reopened" in at.session_state[state.NOTICE_KEY]  # said once, by the sidebar
