"""Compare and Inspect pages (AppTest) plus the pure helpers of ``ui.results_view``.

The pages run against a copy of the session's sample workspace in a temporary data folder
(``RAGSCOPE_DATA_DIR``), offline, with extractive answers.
"""
from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
COMPARE = str(ROOT / "pages" / "compare.py")
INSPECT = str(ROOT / "pages" / "inspect.py")
QUESTION = "Who founded the Velmora Marine Institute and how is it linked to Port Sallow?"
TIMEOUT = 600


@pytest.fixture(scope="module")
def data_dir(sample_workspace_dir, tmp_path_factory):
    """A data folder holding a copy of the sample workspace ("sample") and an empty one ("empty")."""
    root = tmp_path_factory.mktemp("ragscope_data")
    shutil.copytree(sample_workspace_dir, root / "sample")
    old = os.environ.get("RAGSCOPE_DATA_DIR")
    os.environ["RAGSCOPE_DATA_DIR"] = str(root)
    yield root
    if old is None:
        os.environ.pop("RAGSCOPE_DATA_DIR", None)
    else:
        os.environ["RAGSCOPE_DATA_DIR"] = old


def page(path: str, workspace_name: str = "sample"):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(path, default_timeout=TIMEOUT)
    at.session_state["workspace_name"] = workspace_name
    return at


def elements(at, kind: str) -> list:
    """Every element of one type in the rendered tree (AppTest has no accessor for some types)."""
    found = []

    def walk(node) -> None:
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            for child in children.values():
                if getattr(child, "type", None) == kind:
                    found.append(child)
                walk(child)

    walk(at._tree)
    return found


def all_modes() -> list[str]:
    from core.retrieval.registry import modes

    return modes()


# --- Compare ---------------------------------------------------------------------------------
def test_citation_links_name_the_workspace_of_the_answer(data_dir):
    """A citation link opened in a new tab (a new session) opened the default workspace, not the one the
    answer came from ("That chunk is not in this workspace"): each link carries ``workspace=``."""
    from urllib.parse import parse_qs

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["workspace_name"] = "sample"
    at.run()
    at.switch_page("pages/compare.py")
    at.run()
    at.text_area(key="compare_question").input(QUESTION)
    at.multiselect(key="compare_modes").set_value(["naive"])
    at.button(key="compare_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    links = [parse_qs(e.proto.query_string) for e in elements(at, "page_link")]
    assert links and all(q.get("workspace") == ["sample"] and "quote" in q for q in links), links


def test_compare_runs_every_mode_and_shows_answers(data_dir, monkeypatch):
    import core.api
    from ui import results_view as rv

    calls = []
    real = core.api.run_modes

    def counting(*args, **kwargs):
        calls.append(args[3] if len(args) > 3 else kwargs.get("modes"))  # (principal, ws, question, modes)
        return real(*args, **kwargs)

    monkeypatch.setattr(core.api, "run_modes", counting)
    at = page(COMPARE).run()
    assert not at.exception
    modes = all_modes()
    assert set(modes) >= {"naive", "local", "global", "hybrid", "tree", "path"}
    assert at.multiselect(key="compare_modes").value == modes  # default: every registered mode
    at.text_area(key="compare_question").input(QUESTION)
    at.button(key="compare_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    last = at.session_state["compare_last"]
    assert list(last["results"]) == modes
    texts = [t.value for t in at.text]
    htmls = [h.value for h in at.html]
    labels = [c.value for c in at.caption]
    for mode in modes:
        result = last["results"][mode]
        assert result.answer is not None and result.answer.kind == "extractive"
        first, _, rest = result.answer.text.strip().partition("\n")
        # the first line (short answer in bold) through escaped HTML, the evidence lines as plain text
        assert rv.first_line_html(first, result.answer.bold) in htmls, f"{mode}: first line not shown"
        assert ("**" in first) == bool(result.answer.bold), f"{mode}: the bolded short answers are listed"
        assert not rest.strip() or rest.strip() in texts, f"{mode}: evidence lines not shown"
        # untrusted answer text never goes through Markdown
        assert not any(first in m.value or (rest.strip() and rest.strip() in m.value) for m in at.markdown)
    assert sum("Extractive answer — quoted from the retrieved context" in v for v in labels) == len(modes)
    assert [s.value for s in at.subheader][:len(modes)] == modes
    charts = elements(at, "plotly_chart")
    assert len(charts) == 3  # latency + chunk overlap + entity overlap heatmaps
    assert any("Chunk overlap" in c.proto.spec for c in charts)
    assert any("Entity overlap" in c.proto.spec for c in charts)
    # what differs: every mode's top-5 evidence side by side, in its own order
    tops = [d.value for d in at.dataframe if list(d.value.columns) == ["rank", *modes]]
    assert len(tops) == 1 and list(tops[0]["rank"])[-1] == "only here"
    assert "What differs" in [s.value for s in at.subheader]
    assert len(calls) == 1
    at.run()  # a rerun (any widget interaction) shows the kept results without recomputing
    assert len(calls) == 1
    assert len(elements(at, "plotly_chart")) == 3


def test_compare_empty_question_warns(data_dir):
    at = page(COMPARE).run()
    at.button(key="compare_run").click().run()
    assert not at.exception
    assert any("Type a question" in w.value for w in at.warning)
    assert "compare_last" not in at.session_state


def test_compare_long_question_is_truncated(data_dir):
    at = page(COMPARE).run()
    at.multiselect(key="compare_modes").set_value(["naive"])
    at.text_area(key="compare_question").input("Where is Port Sallow? " * 200)  # 4,400 characters
    at.button(key="compare_run").click().run()
    assert not at.exception
    assert any("only the first 2,000 are used" in i.value for i in at.info)
    last = at.session_state["compare_last"]
    assert len(last["question"]) == 2000 and list(last["results"]) == ["naive"]
    assert len(elements(at, "plotly_chart")) == 1  # latency only: one mode has nothing to overlap with


@pytest.mark.parametrize("path", [COMPARE, INSPECT])
def test_pages_on_an_empty_workspace_explain_what_to_do(data_dir, path):
    (data_dir / "empty").mkdir(exist_ok=True)
    at = page(path, "empty").run()
    assert not at.exception
    assert any("no indexed documents yet" in i.value and "Documents" in i.value for i in at.info)
    assert not at.button  # nothing to run


# --- Inspect ---------------------------------------------------------------------------------
def inspect(mode: str, question: str = QUESTION):
    at = page(INSPECT).run()
    assert not at.exception
    at.selectbox(key="inspect_mode").set_value(mode)
    at.text_area(key="inspect_question").input(question)
    at.button(key="inspect_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_inspect_path_shows_paths_resources_subgraph_and_json(data_dir):
    at = inspect("path")
    result = at.session_state["inspect_last"]["result"]
    assert result.mode == "path" and result.paths
    charts = elements(at, "plotly_chart")
    assert len(charts) == len(result.paths)  # one resource bar chart per path
    first = json.loads(charts[0].proto.spec)
    bars = first["data"][0]
    assert bars["type"] == "bar"
    assert bars["y"] == pytest.approx([result.paths[0].resources[n] for n in result.paths[0].nodes])
    assert first["layout"]["meta"]["reliability"] == pytest.approx(result.paths[0].score)
    assert [m.label for m in at.metric][:3] == ["Entities", "Relations", "Paths"]
    assert at.metric[2].value == str(len(result.paths))
    graphs = [json.loads(el.proto.json or "{}") for el in elements(at, "bidi_component")]
    assert [("vis.Network" in g.get("html", ""), g.get("clicks")) for g in graphs] == [(True, False)]  # the
    # highlighted subgraph, in the sandboxed graph frame (no st.iframe, which allows same-origin)
    assert elements(at, "iframe") == []
    downloads = {d.proto.label for d in elements(at, "download_button")}
    assert downloads == {"Download the result as JSON", "Download subgraph (GraphML)",
                         "Download subgraph (HTML, works offline)"}
    # one entity count: the metric and the subgraph caption say the same number
    caption = next(c.value for c in at.caption if "retrieved entities" in c.value)
    assert at.metric[0].value == str(len(result.entities))
    assert caption.startswith(f"path: {len(result.entities)} retrieved entities")
    codes = [c.value.strip() for c in at.code]
    assert result.context_text.strip() in codes  # the exact context (st.code drops trailing newlines)
    assert any(f"{result.context_tokens:,} tokens" in c.value for c in at.caption)


def test_inspect_tree_shows_the_h_loop_trace(data_dir):
    at = inspect("tree")
    result = at.session_state["inspect_last"]["result"]
    assert result.mode == "tree"
    metrics = {m.label: m.value for m in at.metric}
    assert f"Branch: {result.params['branch']}" in [t.value for t in at.text]  # text: a metric cut long names
    assert metrics["Final h"] == str(result.params["final_h"])
    assert "\n".join(result.trace_lines()) in [c.value for c in at.code]
    assert result.events("h_step") or result.events("no_query_entity")


def test_inspect_parameter_override_is_used(data_dir):
    at = page(INSPECT).run()
    at.selectbox(key="inspect_mode").set_value("naive").run()
    at.number_input(key="inspect_param_naive_naive_top_k").set_value(3)
    at.text_area(key="inspect_question").input(QUESTION)
    at.button(key="inspect_run").click().run()
    assert not at.exception
    last = at.session_state["inspect_last"]
    assert last["overrides"] == {"naive_top_k": 3}
    assert last["result"].params["naive_top_k"] == 3 and len(last["result"].chunks) == 3


def test_inspect_empty_question_warns(data_dir):
    at = page(INSPECT).run()
    at.text_area(key="inspect_question").input("   ")
    at.button(key="inspect_run").click().run()
    assert not at.exception
    assert any("Type a question" in w.value for w in at.warning)
    assert "inspect_last" not in at.session_state


# --- pure helpers ----------------------------------------------------------------------------
def test_jaccard_matrix_by_hand():
    from ui.results_view import jaccard_matrix

    m = jaccard_matrix({"a": {"1", "2", "3"}, "b": {"2", "3", "4"}, "c": set(), "d": set()})
    assert m.loc["a", "b"] == pytest.approx(2 / 4)
    assert m.loc["a", "a"] == 1.0 and m.loc["b", "a"] == m.loc["a", "b"]
    assert math.isnan(m.loc["a", "c"]) and math.isnan(m.loc["c", "d"])  # nothing to compare with
    assert jaccard_matrix({"x": {"1"}, "y": {"2"}}).loc["x", "y"] == 0.0


def test_answer_labels():
    from core.types import Answer
    from ui.results_view import answer_label

    assert answer_label(Answer("x", "extractive")) == "Extractive answer — quoted from the retrieved context"
    assert answer_label(Answer("x", "llm", "smollm2")) == "LLM answer (smollm2)"


def test_first_line_html_escapes_document_text_and_bolds_only_the_short_answer():
    from ui.results_view import first_line_html

    line = 'In 2019 <img src=x onerror="alert(1)"> was bought by **Stellan & Co** [a<b>.md, chunk 2]'
    out = first_line_html(line)
    assert "<img" not in out and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in out
    assert "<b>Stellan &amp; Co</b>" in out and "&lt;b&gt;.md" in out
    assert out.count("<b>") == 1 and "**" not in out


def test_first_line_html_leaves_the_bold_marks_of_a_document_name_as_written():
    """A document named ``… **b**.txt`` showed a bold "b" in the headline line (found in a browser):
    a bold there reads as the short answer, so the citation's ``**`` stay literal text."""
    from ui.results_view import first_line_html

    out = first_line_html('Founded in 1850 by **Quentin Marsh**. [x **b** <i>.txt, l. 3]')
    assert out.count("<b>") == 1 and "<b>Quentin Marsh</b>" in out
    assert "[x **b** &lt;i&gt;.txt, l. 3]" in out
    two = first_line_html("**A** [d **1**.md, chunk 2] and **B** [d.md, § **H**]")
    assert two.count("<b>") == 2 and "[d **1**.md, chunk 2]" in two and "§ **H**]" in two


def test_first_line_html_bolds_only_the_answers_own_short_answers():
    """A Markdown document's own emphasis ("the **first** keeper") quoted in the first line showed as a
    bold that reads as the short answer; only the spans the answer lists (``Answer.bold``) are bold."""
    from ui.results_view import first_line_html

    line = "The **first** principal keeper was **Josiah Harland** (1831–1904). [05-kestrel.md, § Keepers]"
    out = first_line_html(line, ["Josiah Harland"])
    assert out.count("<b>") == 1 and "<b>Josiah Harland</b>" in out and "The **first** principal" in out
    assert first_line_html(line, []).count("<b>") == 0  # no short answer: every "**" is the document's
    assert first_line_html(line).count("<b>") == 2  # without the list (older results): every pair, as before


def test_the_answer_lists_what_its_first_line_bolds():
    from core.answers.layout import bold_surfaces, first_line
    from tests.answer_picks import doc_pick

    pick = doc_pick("The **first** keeper was josiah harland of Greywick.", [], ["Josiah Harland"], 1.0, "k.md")
    assert bold_surfaces(pick) == ["josiah harland"]  # as written in the sentence
    assert "**josiah harland**" in first_line(pick) and "The **first** keeper" in first_line(pick)


def test_retrieved_subgraph_highlights_and_caps():
    from core.types import EntityHit, RelationHit, RetrievalResult
    from ui.subgraph_view import query_subgraph

    g = nx.star_graph(400)  # hub 0 with 400 leaves
    g = nx.relabel_nodes(g, {n: f"n{n}" for n in g})
    g.add_edge("n1", "x")
    result = RetrievalResult(mode="local", query="q", entities=[EntityHit.make("n1", {"name": "N1"}, 1.0, "")],
                             relations=[RelationHit.make("n1", "n0", ("N1", "N0"), {}, 1.0, "")])
    view = query_subgraph(g, result, budget=50, neighbours=True)
    assert view.highlighted == {"n1", "n0"} and view.edges == {("n1", "n0")}
    assert view.graph.number_of_nodes() == 50 and len(view.neighbours) == 48  # the cap cut the hub's leaves
    assert "x" in view.graph  # a retrieved node's neighbours come before the cap cuts the rest
    view = query_subgraph(g, result, budget=1000, neighbours=True)
    assert view.graph.number_of_nodes() == 402 and len(view.neighbours) == 400


# --- hand-over of the question between Compare and Inspect ----------------------------------------------
def test_question_typed_on_compare_opens_inspect_and_back(data_dir):
    at = page(COMPARE).run()
    at.text_area(key="compare_question").input(QUESTION).run()
    assert not at.exception
    shared = at.session_state["shared_question"]
    assert shared == QUESTION
    # Inspect is a new page run: Streamlit has dropped Compare's widget state, only the shared key remains
    other = page(INSPECT)
    other.session_state["shared_question"] = shared
    other.run()
    assert not other.exception
    assert other.text_area(key="inspect_question").value == QUESTION
    # a question typed on Inspect then goes back to Compare
    other.text_area(key="inspect_question").input("Where is Port Sallow?").run()
    back = page(COMPARE)
    back.session_state["shared_question"] = other.session_state["shared_question"]
    back.run()
    assert back.text_area(key="compare_question").value == "Where is Port Sallow?"


def _always_tree():
    """A router model that always runs tree (naive by default, tree predicted to gain 0.5 everywhere)."""
    from core.routing.features import FEATURES
    from core.routing.model import RouterModel

    zeros = [0.0] * len(FEATURES)
    return RouterModel(default="naive", features=list(FEATURES), mean=zeros, scale=[1.0] * len(FEATURES),
                       gains={"tree": {"bias": 0.5, "weights": zeros}})


def test_an_auto_result_is_shown_as_the_mode_it_ran():
    from core.types import RetrievalResult
    from ui.results_view import route_frame, shown_mode

    reason = "<b>tree</b> gains [0.5](javascript:x)"
    auto = RetrievalResult(mode="auto", query="q", route={"chosen": "tree", "reason": reason, "default": "mix",
                                                         "model": "default",
                                                         "gains": {"path": -0.2, "tree": 0.5, "ppr": 0.1, "naive": 0.0}})
    assert shown_mode(auto) == "tree"
    assert shown_mode(RetrievalResult(mode="path", query="q")) == "path"
    rows = dict(zip(route_frame(auto)["field"], route_frame(auto)["value"]))
    assert rows["chosen mode"] == "tree" and rows["default mode"] == "mix"
    assert rows["reason"] == reason  # kept verbatim: shown in a dataframe, never as markup
    assert [k for k in rows if k.startswith("predicted gain")] == \
        ["predicted gain: tree", "predicted gain: ppr", "predicted gain: naive"]  # top 3, largest first
    assert route_frame(RetrievalResult(mode="mix", query="q")).empty


def test_the_routing_table_shows_the_question_s_word_count():
    """The router stores the word count / 10; the table showed "question feature: words 1" for a
    ten-word question (seen in a browser). It shows the count."""
    from core.routing.features import form_features
    from core.types import RetrievalResult
    from ui.results_view import route_frame

    question = "What happened to Port Sallow in the Great Velmora Flood?"
    features = form_features(question)
    auto = RetrievalResult(mode="auto", query=question, route={
        "chosen": "ppr", "default": "mix", "reason": "r", "gains": {"predicted_hops": 1.9}, "features": features})
    rows = dict(zip(route_frame(auto)["field"], route_frame(auto)["value"]))
    assert rows["question feature: words"] == "10"
    assert rows["question feature: clauses"] == f"{features['clauses']:g}"


def test_inspect_auto_that_ran_tree_shows_the_tree_trace_and_the_routing(data_dir, monkeypatch):
    from core.routing import auto_mode

    monkeypatch.setattr(auto_mode, "model_for", lambda ws: (_always_tree(), "test"))
    monkeypatch.setattr(auto_mode, "ROUTED", ("naive", "tree"))  # the page shows whatever auto ran
    at = inspect("auto")
    result = at.session_state["inspect_last"]["result"]
    assert result.mode == "auto" and result.route["chosen"] == "tree"
    assert not [i.value for i in at.info if "no tree trace" in i.value]
    assert f"Branch: {result.params['branch']}" in [t.value for t in at.text]
    routes = [d.value for d in at.dataframe if list(d.value.columns) == ["field", "value"]]
    assert routes and dict(zip(routes[0]["field"], routes[0]["value"]))["chosen mode"] == "tree"
    assert any("auto ran tree" in c.value for c in at.caption)


def test_the_routing_reason_is_a_whole_line_not_a_clipped_cell(data_dir, monkeypatch):
    """The router's reason is a sentence (about 190 characters for the hop router); in the routing table's
    value column it was cut at the column's width (seen in a browser). It is shown in full, escaped, as a
    caption beside "auto ran …", and the table keeps the short fields."""
    from core.routing import auto_mode
    from ui.errors import escape_markdown

    monkeypatch.setattr(auto_mode, "model_for", lambda ws: (_always_tree(), "test"))
    monkeypatch.setattr(auto_mode, "ROUTED", ("naive", "tree"))
    at = inspect("auto")
    reason = at.session_state["inspect_last"]["result"].route["reason"]
    assert reason
    assert any(c.value.startswith("auto ran tree") and escape_markdown(reason) in c.value for c in at.caption)
    routes = [d.value for d in at.dataframe if list(d.value.columns) == ["field", "value"]]
    assert routes and "reason" not in list(routes[0]["field"]) and "chosen mode" in list(routes[0]["field"])


def test_compare_auto_column_says_which_mode_ran(data_dir, monkeypatch):
    from core.routing import auto_mode

    monkeypatch.setattr(auto_mode, "model_for", lambda ws: (_always_tree(), "test"))
    monkeypatch.setattr(auto_mode, "ROUTED", ("naive", "tree"))  # the page shows whatever auto ran
    at = page(COMPARE).run()
    at.multiselect(key="compare_modes").set_value(["auto"])
    at.text_area(key="compare_question").input(QUESTION)
    at.button(key="compare_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(e.label == "Routing: ran tree" for e in at.expander)


def test_links_of_the_same_citation_are_told_apart_by_their_quote():
    """Three links under one answer all read "[facts.pdf, p. 3]" (a PDF page quoted three times, seen in a
    browser): a citation that heads more than one link is followed by the first words of its sentence."""
    from ui.citation_links import LABEL_WORDS, link_labels

    targets = [("[facts.pdf, p. 3]", {"chunk": "c1", "quote": "Marta Quill kept the Skerry Point lamp lit through the storm."}),
               ("[facts.pdf, p. 3]", {"chunk": "c1", "quote": "Page three line 7 describes the stairs."}),
               ("[facts.pdf, p. 4]", {"chunk": "c1", "quote": "The last page notes 2 repairs."})]
    labels = link_labels(targets)
    assert labels[0] == "[facts.pdf, p. 3] “Marta Quill kept the Skerry Point lamp lit …”"
    assert labels[1] == "[facts.pdf, p. 3] “Page three line 7 describes the stairs.”"
    assert labels[2] == "[facts.pdf, p. 4]"  # cited once: as written
    assert LABEL_WORDS == 8 and len(set(labels)) == 3
