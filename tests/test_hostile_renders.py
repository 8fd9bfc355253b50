"""A hostile workspace through every page without a browser (issue 38): entity names and types, relation
keywords and descriptions, document titles and ids, a file name, summaries and evaluation questions carry
HTML (``<img onerror>``, ``<script>``), Markdown links and images (``[x](javascript:…)``, ``![](http://…)``),
bare URLs and spreadsheet formulas (``=HYPERLINK(…)``, ``+``, ``-``, ``@``). Each page runs under AppTest —
Inspect once per mode (all nine, the ppr and auto panels included), Compare with every mode, Evaluate with a
report of hostile questions, the junk-node panel, the Source viewer — and every element Streamlit renders
as Markdown or HTML is read from the page's protobuf messages: a payload there must be fully escaped (no
``](``, ``![``, tag or bare link left once backslash escapes are taken out), HTML bodies must hold no
payload-born ``<img>``/``<a>``/``<script>``, and no table may turn a cell into a link or an image. The
downloads (graph GraphML/JSON, Inspect JSON and subgraph HTML, Evaluate CSV) are read back as well.
``test_payload_browser.py`` renders the same payloads in Chromium."""
from __future__ import annotations

import csv
import html.parser
import io
import json
import re
from pathlib import Path
from typing import Any, Iterator

import pytest
from streamlit.testing.v1 import AppTest

from test_payload_browser import IMG, LINK, MARK, PIC, SCRIPT, PayloadChat

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
JS_LINK = "[run](javascript:window.__pwned=1)"
FORMULA = f'=HYPERLINK("http://{MARK}/f","gold")'
HOSTILE = f"{IMG} {LINK} {PIC} {SCRIPT} {JS_LINK} http://{MARK}/bare"
ENTITIES = [f"Mara Quill {IMG}", f"Harbor Guild {JS_LINK} {PIC}", f"{FORMULA}", f"@Port Sallow {SCRIPT}"]
RECORDS = (f"entity | {ENTITIES[0]} | PERSON {IMG} | Founder {HOSTILE}.\n"
           f"entity | {ENTITIES[1]} | ORG | A guild {HOSTILE}.\n"
           f"entity | {ENTITIES[2]} | ORG | A formula {HOSTILE}.\n"
           f"entity | {ENTITIES[3]} | GPE | A harbour town {HOSTILE}.\n"
           f"relation | {ENTITIES[0]} | {ENTITIES[1]} | founding {JS_LINK}, {IMG} | Founded it {HOSTILE}. | 8\n"
           f"relation | {ENTITIES[1]} | {ENTITIES[3]} | seat {PIC} | Sits there {HOSTILE}. | 5\n"
           f"relation | {ENTITIES[2]} | {ENTITIES[1]} | =cmd|' /C calc'!A0 | +SUM(1,1) {HOSTILE}. | 4\nEND")
TEXT = ("Mara Quill founded the Harbor Guild in Port Sallow in 1902. " + HOSTILE + " The Harbor Guild kept "
        "the ledger of Port Sallow. ") * 3
QUESTION = "Who founded the Harbor Guild in Port Sallow?"
MODES = ["naive", "local", "global", "hybrid", "mix", "tree", "path", "ppr", "auto"]
FINGERPRINTS = (MARK, "__pwned", "HYPERLINK", "calc'")


class HostileChat(PayloadChat):
    """``PayloadChat`` with formula names and ``javascript:`` links in its extraction, and hostile answers."""

    def complete(self, messages, *, stage: str, json_mode: bool = False, max_tokens=None):
        from core.llm.client import Completion

        text = {"extraction": RECORDS, "gleaning": "END"}.get(stage, f"Mara Quill founded the guild. {HOSTILE}")
        return Completion(text, prompt_tokens=20, completion_tokens=10)


def hostile_questions() -> list:
    from core.evaluation.questions import parse_questions

    lines = [json.dumps({"qid": FORMULA, "question": f"{QUESTION} {HOSTILE}", "answer": f"-{IMG}",
                         "question_type": f"@{LINK}", "gold_doc_ids": [FORMULA, "+p1"],
                         "gold_doc_names": [f"Title 0 {HOSTILE}"]}),
             json.dumps({"qid": f"q2 {SCRIPT}", "question": QUESTION, "answer": "Mara Quill",
                         "gold_doc_ids": [FORMULA]})]
    return parse_questions(lines, "hostile.jsonl")


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> Path:
    """Workspace ``hostile``: a JSONL corpus whose doc ids and titles are hostile, a file with a hostile
    name, extracted by ``HostileChat``; the payloads are checked to be stored, so no test passes by losing
    them."""
    from core import api
    from core.auth import LOCAL_ADMIN
    from core.llm.cache import CachedChat, UsageCounter
    from core.loaders import load_bytes
    from core.workspace import Workspace

    root = tmp_path_factory.mktemp("hostile_data")
    ws = Workspace(root / "hostile")
    try:
        ids = [FORMULA, "+p1"]
        corpus = "\n".join(json.dumps({"doc_id": doc_id, "title": f"Title {i} {HOSTILE}", "text": TEXT})
                           for i, doc_id in enumerate(ids)).encode("utf-8")
        sources, failures = load_bytes("corpus.jsonl", corpus)
        docs, fails = load_bytes(f"{IMG} {LINK} notes.md", TEXT.encode("utf-8"))
        sources, failures = sources + docs, failures + fails
        assert not failures and len(sources) == 3
        chat = UsageCounter(CachedChat(HostileChat(), ws.store.conn), ws.store.conn)
        report = api.index_sources(LOCAL_ADMIN, ws, sources, failures, llm=chat)
        assert report.processed == 3, report
        names = {data.get("name") or node for node, data in ws.knowledge_graph().nodes(data=True)}
        assert any("javascript:" in n for n in names) and any(n.startswith("=HYPERLINK") for n in names), names
        assert any("<img" in d["name"] for d in ws.documents_table())
    finally:
        ws.close()
    return root


@pytest.fixture()
def hostile_dir(data_root, monkeypatch) -> Path:
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(data_root))
    monkeypatch.setenv("RAGSCOPE_WORKSPACE", "hostile")
    for variable in ("RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "RAGSCOPE_ROLES"):
        monkeypatch.delenv(variable, raising=False)
    return data_root


# --- reading what a page sends ------------------------------------------------------------------------
def _nodes(node: Any) -> Iterator[Any]:
    yield node
    children = getattr(node, "children", None) or {}
    for child in children.values():
        yield from _nodes(child)


def markdown_surfaces(at: AppTest) -> Iterator[tuple[str, str, bool]]:
    """(where, text, html allowed) for every string the page renders as Markdown: bodies of markdown,
    captions, alerts, headings, toasts; labels and help of every widget, metric, expander, tab, popover
    and page link; radio options."""
    for node in _nodes(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        kind = type(node).__name__
        if kind in ("Markdown", "Caption", "Latex", "Divider") and hasattr(proto, "body"):
            if getattr(proto, "element_type", 0) not in (2, 3):  # not code / latex
                yield kind, proto.body, bool(getattr(proto, "allow_html", False))
            continue
        for field in ("body", "label", "help", "placeholder_md"):
            if kind in ("Text", "Code", "Json", "Html", "Exception") and field == "body":
                continue
            if field in getattr(proto, "DESCRIPTOR").fields_by_name:
                yield f"{kind}.{field}", str(getattr(proto, field)), False
        if kind == "Radio":
            for option in proto.options:
                yield "Radio.option", option, False
        for sub in ("expandable", "tab_container", "tab", "popover"):
            if hasattr(proto, "HasField") and sub in proto.DESCRIPTOR.fields_by_name and proto.HasField(sub):
                inner = getattr(proto, sub)
                if "label" in inner.DESCRIPTOR.fields_by_name:
                    yield f"{kind}.{sub}.label", inner.label, False


_ESCAPED = re.compile(r"\\.")
_DANGER = re.compile(r"\]\(|!\[|<\s*/?\s*[a-zA-Z]|(?i:(?:https?|javascript|data)\s*:)")


def markdown_danger(text: str) -> str:
    """What of ``text`` a Markdown renderer would still read as a link, an image, a tag or a bare link
    once backslash escapes are resolved (empty: nothing)."""
    bare = _ESCAPED.sub("", text)
    found = _DANGER.findall(bare)
    return ", ".join(found)


class _Born(html.parser.HTMLParser):
    def __init__(self, scripts_allowed: bool) -> None:
        super().__init__()
        self.born: list[str] = []
        self.scripts_allowed = scripts_allowed

    def handle_starttag(self, tag: str, attrs: list) -> None:
        values = " ".join(f"{k}={v}" for k, v in attrs)
        if tag in ("img", "a", "script", "iframe", "object", "embed") and any(f in values for f in FINGERPRINTS):
            self.born.append(f"<{tag} {values[:80]}>")
        if tag == "script" and not self.scripts_allowed:
            self.born.append("<script>")  # no page's own st.html holds a script

    def handle_data(self, data: str) -> None:
        if self.lasttag == "script" and "__pwned" in data and "\\u003c" not in data and "&lt;" not in data:
            if re.search(r"^\s*window\.__pwned", data):
                self.born.append("payload script")


def html_born(markup: str, scripts_allowed: bool = False) -> list[str]:
    """Elements of ``markup`` born of a payload (an ``<img>``/``<a>``/``<script>``… carrying its host or
    handler; with ``scripts_allowed`` False, any ``<script>``)."""
    parser = _Born(scripts_allowed)
    parser.feed(markup)
    return parser.born


@pytest.fixture()
def downloads(monkeypatch) -> dict[str, Any]:
    """Every download button's file, by file name (a deferred callable is called, as a click would)."""
    import streamlit
    from streamlit.delta_generator import DeltaGenerator

    files: dict[str, Any] = {}
    real = DeltaGenerator.download_button

    def capture(self, label, data, file_name=None, *args, **kwargs):
        files[str(file_name)] = data() if callable(data) else data
        return real(self, label, data, file_name, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", capture)  # columns' and expanders' buttons
    monkeypatch.setattr(streamlit, "download_button",
                        lambda *args, **kwargs: capture(streamlit._main, *args, **kwargs))  # st.download_button
    return files


def assert_downloads_inert(files: dict[str, Any]) -> None:
    """CSV cells neutralised, JSON parsed, GraphML well-formed XML, HTML with no payload-born element."""
    from xml.etree import ElementTree

    for name, data in files.items():
        text = data.decode("utf-8") if isinstance(data, bytes) else str(data)
        if name.endswith(".csv"):
            for row in csv.reader(io.StringIO(text)):
                assert not [c for c in row if c.startswith(("=", "+", "-", "@", "\t", "\r"))], (name, row)
        elif name.endswith(".json"):
            json.loads(text)
        elif name.endswith(".graphml"):
            ElementTree.fromstring(text.encode("utf-8"))  # payload text is XML-escaped, not markup
        elif name.endswith(".html"):
            assert not html_born(text, scripts_allowed=True), (name, html_born(text, True)[:3])


def assert_page_safe(at: AppTest, where: str) -> int:
    """Every payload on ``at``'s page is inert; returns how many surfaces (Markdown, HTML, tables) carried
    one, so a caller can tell a page that showed the payloads from one that lost them."""
    assert not at.exception, (where, [e.value for e in at.exception][:2])
    carried = 0
    for kind, text, allow_html in markdown_surfaces(at):
        plain = _ESCAPED.sub(lambda m: m.group(0)[1], text).replace("\u2060", "")
        if not any(f in plain for f in FINGERPRINTS):
            continue
        carried += 1
        if allow_html:
            assert not html_born(text), (where, kind, text[:300])
        danger = markdown_danger(text)
        assert not danger, f"{where}: {kind} renders markup from a payload ({danger}): {text[:300]!r}"
    for node in _nodes(at._tree):
        kind = type(node).__name__
        if kind == "Html":
            born = html_born(node.proto.body)
            assert not born, (where, born[:3])
            carried += any(f in node.proto.body for f in FINGERPRINTS)
        if kind == "UnknownElement" and hasattr(node.proto, "DESCRIPTOR"):
            carried += _other_element_safe(node.proto, where)
        if kind == "Dataframe":
            carried += any(f in node.value.to_csv() for f in FINGERPRINTS)
            columns = json.loads(node.proto.columns or "{}")
            kinds = {str((c.get("type_config") or {}).get("type")) for c in columns.values() if isinstance(c, dict)}
            assert not kinds & {"link", "image"}, (where, kinds)  # a cell shown as a link or an image
    return carried


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _other_element_safe(element: Any, where: str) -> int:
    """A plotly figure's strings (hover, ticks, annotations: plotly renders ``<a href>`` and ``<br>``)
    hold no tag of a payload; a custom component's arguments (the sandboxed graph frame's HTML) hold no
    payload-born element. Returns 1 when a payload was there."""
    kind = element.DESCRIPTOR.name
    if kind == "PlotlyChart":
        texts = [t for t in _strings(json.loads(element.spec or "{}")) if any(f in t for f in FINGERPRINTS)]
        for text in texts:
            assert "<" not in text, f"{where}: a plotly string keeps a payload's tag: {text[:200]!r}"
        return int(bool(texts))
    if kind in ("ComponentInstance", "BidiComponent"):
        args = element.json_args if kind == "ComponentInstance" else element.json
        texts = [t for t in _strings(json.loads(args or "{}")) if any(f in t for f in FINGERPRINTS)]
        for text in texts:
            assert not html_born(text, scripts_allowed=True), (where, html_born(text, True)[:3])
        return int(bool(texts))
    return 0


def run_app(page: str | None = None, query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    return at


# --- the helper the pages use, checked against the detector ----------------------------------------------
def test_the_detector_flags_raw_payloads_and_passes_escaped_ones():
    from ui.escape import md

    for payload in (IMG, LINK, PIC, SCRIPT, JS_LINK, f"http://{MARK}/x"):
        assert markdown_danger(payload), payload  # the raw payload is caught
        assert not markdown_danger(md(payload)), payload  # and the helper's output passes
    assert html_born(f"<p>{IMG}</p>") and not html_born("<p>&lt;img src=x&gt;</p>")


# --- the pages ------------------------------------------------------------------------------------------
@pytest.mark.timeout(900)
def test_documents_graph_tree_and_settings_keep_payloads_as_text(hostile_dir, downloads):
    carried = {}
    for page in ("pages/documents.py", "pages/knowledge_graph.py", "pages/summary_tree.py", "pages/settings.py"):
        at = run_app(page)
        carried[page] = assert_page_safe(at, page)
    assert carried["pages/documents.py"] and carried["pages/knowledge_graph.py"], carried  # payloads reached them
    assert any(name.endswith(".graphml") for name in downloads), list(downloads)
    assert_downloads_inert(downloads)


@pytest.mark.timeout(900)
def test_every_entity_relation_and_tree_node_panel_keeps_payloads_as_text(hostile_dir):
    """The Details panels a click opens: each entity (profile, origin, relations, source chunks), each
    relation (keywords, description, shared chunks) and each summary-tree node (summary, children, leaves)."""
    from core.workspace import Workspace

    ws = Workspace(hostile_dir / "hostile")
    try:
        edges = [(str(a), str(b)) for a, b in ws.knowledge_graph().edges()]
    finally:
        ws.close()
    assert edges
    at = run_app("pages/knowledge_graph.py")
    entities = list(at.selectbox(key="kg_entity").options)
    assert len(entities) >= 4
    for index in range(len(entities)):
        at.selectbox(key="kg_entity").select_index(index).run()
        assert_page_safe(at, f"entity {entities[index][:30]}")
    for a, b in edges:
        at.session_state["kg_edge"] = (a, b)
        at.run()
        assert any(str(t.value).startswith("Relation:") for t in at.text), (a, b)
        assert_page_safe(at, f"relation {a[:20]}–{b[:20]}")
    tree = run_app("pages/summary_tree.py")
    nodes = list(tree.selectbox(key="tree_node").options)
    assert nodes
    for index in range(len(nodes)):
        tree.selectbox(key="tree_node").select_index(index).run()
        assert_page_safe(tree, f"tree node {nodes[index][:30]}")


@pytest.mark.timeout(900)
def test_the_junk_panel_keeps_payloads_as_text(hostile_dir):
    at = run_app("pages/knowledge_graph.py")
    at.checkbox(key="kg_junk_weak").check().run()
    at.button(key="kg_junk_go").click().run()
    assert_page_safe(at, "junk panel")
    frames = [d for d in at.dataframe if getattr(d, "key", None) == "kg_junk_table"]
    tables = [n for n in _nodes(at._tree) if type(n).__name__ in ("Dataframe", "UnknownElement")]
    assert frames or tables


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("mode", MODES)
def test_inspect_of_every_mode_keeps_payloads_as_text(hostile_dir, downloads, mode):
    at = run_app("pages/inspect.py")
    at.selectbox(key="inspect_mode").select(mode).run()
    at.text_area(key="inspect_question").input(f"{QUESTION} {HOSTILE}")
    at.button(key="inspect_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["inspect_last"]["result"].mode == mode  # the mode ran and its panels are drawn
    assert_page_safe(at, f"Inspect {mode}")
    assert any(name.endswith(".json") for name in downloads), list(downloads)
    if mode in ("local", "global", "hybrid", "mix", "path"):  # a graph result offers its subgraph (GraphML, HTML)
        assert any(name.endswith(".html") for name in downloads), list(downloads)
    assert_downloads_inert(downloads)


@pytest.mark.timeout(1800)
def test_compare_with_every_mode_keeps_payloads_as_text(hostile_dir):
    at = run_app("pages/compare.py")
    at.text_area(key="compare_question").input(f"{QUESTION} {HOSTILE}")
    at.button(key="compare_run").click().run()
    assert sorted(at.session_state["compare_last"]["results"]) == sorted(MODES)
    assert assert_page_safe(at, "Compare") >= 1


@pytest.mark.timeout(1800)
def test_evaluate_report_and_its_csv_keep_payloads_inert(hostile_dir, downloads):
    from core import api
    from core.auth import LOCAL_ADMIN
    from core.workspace import Workspace

    ws = Workspace(hostile_dir / "hostile")
    try:
        report = api.evaluate(LOCAL_ADMIN, ws, hostile_questions(), ["naive", "ppr", "auto"], [2, 5])
    finally:
        ws.close()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.run()
    at.switch_page("pages/evaluate.py")
    at.session_state["evaluate_last"] = {"workspace": "hostile", "report": report,
                                         "questions": {q.qid: q.question for q in hostile_questions()}}
    at.run()
    assert assert_page_safe(at, "Evaluate") >= 1
    text = downloads["eval_rows.csv"]
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) > 1
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (cell, row)
    assert "'=HYPERLINK" in text  # the formula is there, neutralised
    assert_downloads_inert(downloads)


@pytest.mark.timeout(900)
def test_source_viewer_keeps_payloads_as_text(hostile_dir):
    from core import api
    from core.auth import LOCAL_ADMIN
    from core.workspace import Workspace

    ws = Workspace(hostile_dir / "hostile")
    try:
        doc = next(d for d in api.documents(LOCAL_ADMIN, ws, "processed") if "<img" in d.name)
        chunk_id = api.chunks_of(LOCAL_ADMIN, ws, doc.doc_id)[0].chunk_id
    finally:
        ws.close()
    at = run_app("pages/source.py", {"chunk": chunk_id, "quote": HOSTILE})
    assert at.get("html") or [n for n in _nodes(at._tree) if type(n).__name__ == "Html"]
    assert assert_page_safe(at, "Source viewer") >= 1
