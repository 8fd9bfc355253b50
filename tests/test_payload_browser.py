"""A payload corpus in a real browser (issue 20): markup from documents never becomes markup in the app.

Every untrusted string carries Markdown and HTML payloads (``<img onerror>``, ``<script>``, links,
``javascript:`` links, images, bare URLs) and spreadsheet formulas — document ids and titles (JSONL), a
file name, entity names, types and descriptions, relation keywords and descriptions (from a scripted LLM
extraction), the LLM model name, and the fields of an uploaded judge report. The workspace is indexed in
this process, then ``streamlit run app.py`` serves it; headless Chromium (Playwright, /usr/bin/chromium)
opens every page by URL, clicks a graph node (the sandboxed iframe's click reaches the Details panel by
``postMessage``), runs Inspect in all nine modes (the ppr and auto panels included), views the judge
report, opens the Source viewer at a payload chunk with a payload quote and lists the junk nodes, and
asserts, in the page and inside every graph iframe, that no ``<img>``, ``<a>`` or ``<script>`` element was
born of a payload, that no payload handler ran, that no request left the loopback server (any other
host is recorded and refused), and that the graph iframes are sandboxed without ``allow-same-origin``.
The payloads are first checked to be in the workspace, so the test cannot pass by losing them
(``test_hostile_renders.py`` reads the same pages' messages without a browser).
"""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Optional
from urllib.parse import quote, urlparse

import pytest

from browser_harness import ARTIFACTS, chromium, require_browser, streamlit_app
from browser_harness import idle as app_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MARK = "payload.invalid"  # every payload URL points here; every payload handler sets window.__pwned
IMG = f'<img src="http://{MARK}/i.png" onerror="window.__pwned=1">'
LINK = f"[click me](http://{MARK}/link)"
PIC = f"![pic](http://{MARK}/pic.png)"
SCRIPT = "<script>window.__pwned=1</script>"
AUTO = f"http://{MARK}/auto"
JS_LINK = "[run](javascript:window.__pwned=1)"
FORMULA = f'=HYPERLINK("http://{MARK}/f","gold")'
PAYLOAD = f"{IMG} {LINK} {PIC} {SCRIPT} {AUTO} {JS_LINK}"
MODEL = f"model {IMG} {LINK}"
ENTITY_A = f"Mara Quill {IMG}"
ENTITY_B = f"Harbor Guild {LINK} {PIC}"
ENTITY_C = f"Port Sallow {SCRIPT}"
ENTITY_D = FORMULA
RECORDS = (f"entity | {ENTITY_A} | PERSON {IMG} | Founder {PAYLOAD}.\n"
           f"entity | {ENTITY_B} | ORG | A guild {PAYLOAD}.\n"
           f"entity | {ENTITY_C} | GPE | A harbour town {PAYLOAD}.\n"
           f"relation | {ENTITY_A} | {ENTITY_B} | founding {LINK}, {IMG} | Founded it {PAYLOAD}. | 8\n"
           f"entity | {ENTITY_D} | ORG | A formula {PAYLOAD}.\n"
           f"relation | {ENTITY_B} | {ENTITY_C} | seat {PIC} | Sits there {PAYLOAD}. | 5\n"
           f"relation | {ENTITY_D} | {ENTITY_B} | +SUM(1,1) {JS_LINK} | @cmd {PAYLOAD}. | 4\nEND")
TEXT = ("Mara Quill founded the Harbor Guild in Port Sallow in 1902. " + PAYLOAD + " The Harbor Guild kept "
        "the ledger of Port Sallow. ") * 3
QUESTION = "Who founded the Harbor Guild in Port Sallow?"
MODES = ["naive", "local", "global", "hybrid", "mix", "tree", "path", "ppr", "auto"]


class PayloadChat:
    """A scripted chat model: extraction replies carry the payload names, types and keywords."""

    model = MODEL

    def __init__(self) -> None:
        self.cancel_event = threading.Event()

    def cache_params(self, json_mode: bool = False, max_tokens: Optional[int] = None) -> dict:
        return {"model": self.model, "json_mode": json_mode, "max_tokens": max_tokens}

    def complete(self, messages, *, stage: str, json_mode: bool = False, max_tokens: Optional[int] = None):
        from core.llm.client import Completion

        text = {"extraction": RECORDS, "gleaning": "END"}.get(stage, f"Mara Quill founded the guild. {PAYLOAD}")
        return Completion(text, prompt_tokens=20, completion_tokens=10)


def judge_report_json() -> bytes:
    from core.judge.report import JudgeReport, Judgment, QuestionResult

    modes = ["naive", f"hybrid {IMG}"]
    judgment = Judgment(pair="|".join(modes), first=modes[1], second=modes[0],
                        verdicts={f"comprehensiveness {LINK}": modes[0]},
                        reasons={f"comprehensiveness {LINK}": f"because {PAYLOAD}"},
                        raw=f"reply {PAYLOAD}", note=f"note {PAYLOAD}")
    question = QuestionResult("q1" + IMG, f"Question {PAYLOAD}?", {m: f"answer {PAYLOAD}" for m in modes},
                              {m: 10 for m in modes}, [judgment])
    report = JudgeReport(modes, [f"comprehensiveness {LINK}"], "lightrag", MODEL, [question])
    return json.dumps(report.to_dict()).encode("utf-8")


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> Path:
    """A data folder with workspace ``payload``: a JSONL corpus with payload titles and a file with a
    payload name, extracted by ``PayloadChat``."""
    from core import api
    from core.auth import LOCAL_ADMIN
    from core.llm.cache import CachedChat, UsageCounter
    from core.loaders import load_bytes
    from core.workspace import Workspace

    root = tmp_path_factory.mktemp("payload_data")
    ws = Workspace(root / "payload")
    try:
        corpus = "\n".join(json.dumps({"doc_id": doc_id, "title": f"Title {i} {PAYLOAD}", "text": TEXT})
                           for i, doc_id in enumerate([FORMULA, "-p1"])).encode("utf-8")
        sources, failures = load_bytes("corpus.jsonl", corpus)
        docs, fails = load_bytes(f"{IMG} {LINK} notes.md", TEXT.encode("utf-8"))
        sources, failures = sources + docs, failures + fails
        assert not failures and len(sources) == 3
        chat = UsageCounter(CachedChat(PayloadChat(), ws.store.conn), ws.store.conn)
        report = api.index_sources(LOCAL_ADMIN, ws, sources, failures, llm=chat)
        assert report.processed == 3, report
        names = {data.get("name") or node for node, data in ws.knowledge_graph().nodes(data=True)}
        assert any("<img" in n for n in names) and any("](http" in n for n in names), names  # payloads kept
        assert any("<img" in d["name"] for d in ws.documents_table())
        described = " ".join(str(data.get("description")) for _, data in ws.knowledge_graph().nodes(data=True))
        assert any(n.startswith("=HYPERLINK") for n in names) and "javascript:" in described, names
        chunk = next(c for c in ws.store.conn.execute("SELECT chunk_id FROM chunks ORDER BY chunk_id"))[0]
        (root / "chunk.txt").write_text(str(chunk), encoding="utf-8")  # the Source viewer opens it by URL
    finally:
        ws.close()
    return root


@pytest.fixture(scope="module")
def server(data_root, tmp_path_factory):
    require_browser()
    with streamlit_app(data_root, tmp_path_factory.mktemp("payload_log"), env={"RAGSCOPE_WORKSPACE": "payload"},
                       fail_on_traceback=False) as url:
        yield url


@pytest.fixture(scope="module")
def tab(server):
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.dialogs = []  # type: ignore[attr-defined]
        page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))  # type: ignore[attr-defined]
        requests: list[str] = []

        def leaves(url: str) -> bool:  # a request to any host but the loopback server (data:/blob: stay local)
            parsed = urlparse(url)
            return parsed.scheme not in ("data", "blob", "about") and parsed.hostname not in ("127.0.0.1", "localhost")

        page.route("**/*", lambda route: (requests.append(route.request.url), route.abort())
                   if leaves(route.request.url) else route.continue_())  # the payload host included
        page.payload_requests = requests  # type: ignore[attr-defined]
        yield page


def idle(page, timeout_ms: int = 300_000) -> None:
    app_idle(page, timeout_ms)
    page.wait_for_timeout(500)


# Elements a payload could have created: an <img>/<a>/<iframe>/<object>/<embed> pointing at the payload
# host or carrying its handler, a <script> whose code is the payload's (the graph page's own script
# holds the payload strings as escaped JSON data, which is not a payload-born element).
FIND_BORN = """() => {
    const hits = [];
    for (const e of document.querySelectorAll('img, a, iframe, object, embed, source, video, audio')) {
        // a link to one of the app's own pages (st.page_link) carries the cited text URL-encoded in its
        // query string: data for the Source viewer, not markup (any other href is checked)
        const own = a => a.name === 'href' && e.dataset.testid === 'stPageLink-NavLink' && /^[a-z_]+\?/.test(a.value);
        const attrs = [...e.attributes].filter(a => !own(a)).map(a => a.value).join(' ');
        if (attrs.includes('payload.invalid') || attrs.includes('__pwned')) hits.push(e.outerHTML.slice(0, 200));
    }
    for (const s of document.querySelectorAll('script')) {
        if ((s.src || '').includes('payload.invalid') || s.textContent.trim().startsWith('window.__pwned'))
            hits.push(s.outerHTML.slice(0, 200));
    }
    return hits; }"""


def assert_clean(page, where: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"payload-{where.lower().replace(' ', '-')}.png"), full_page=True)
    for frame in page.frames:
        try:
            born = frame.evaluate(FIND_BORN)
            pwned = frame.evaluate("() => !!window.__pwned")
        except Exception:  # noqa: BLE001 - a frame that navigated away meanwhile
            continue
        assert born == [], f"{where}: payload-born elements in {frame.url[:60]}: {born[:3]}"
        assert not pwned, f"{where}: a payload handler ran in {frame.url[:60]}"
    assert not page.dialogs, page.dialogs  # type: ignore[attr-defined]
    assert not page.payload_requests, page.payload_requests  # type: ignore[attr-defined]


def graph_frames(page, count: int = 1, timeout_ms: int = 120_000) -> list:
    frames = page.locator("iframe.rs-graph-frame")
    frames.first.wait_for(timeout=timeout_ms)
    out = []
    for i in range(frames.count()):
        element = frames.nth(i)
        assert element.get_attribute("sandbox") == "allow-scripts"  # no allow-same-origin
        element.scroll_into_view_if_needed()  # Chromium does not paint an off-screen cross-origin frame
        frame = element.element_handle().content_frame()
        try:
            frame.wait_for_function("() => window.ragscopeGraph && window.ragscopeGraph.drawn !== null",
                                    timeout=timeout_ms)
        except Exception as exc:  # noqa: BLE001 - say what the frame holds
            state = frame.evaluate("() => [document.readyState, typeof network, JSON.stringify(window.ragscopeGraph),"
                                   " document.body ? document.body.innerHTML.length : -1]")
            raise AssertionError(f"graph frame {i} of {frames.count()} not drawn: {state}, "
                                 f"box {element.bounding_box()}") from exc
        assert frame.evaluate("() => { try { return window.parent.document && 'reachable'; } "
                              "catch (e) { return 'blocked'; } }") == "blocked"  # opaque origin
        out.append(frame)
    assert len(out) >= count
    return out


def hover_all(page, frame) -> None:
    """Open every node's tooltip (built from the payload text)."""
    points = frame.evaluate("""() => { const ids = network.body.nodeIndices; const pos = network.getPositions(ids);
                                      return ids.map(id => network.canvasToDOM(pos[id])); }""")
    box = page.locator("iframe.rs-graph-frame").first.bounding_box()
    for point in points[:12]:
        page.mouse.move(box["x"] + point["x"], box["y"] + point["y"])
        page.wait_for_timeout(250)


def open_url(page, server: str, path: str, heading: str) -> None:
    page.goto(f"{server}/{path}", wait_until="domcontentloaded")
    page.get_by_role("heading", name=heading).first.wait_for(timeout=180_000)
    idle(page)


@pytest.mark.timeout(1800)
def test_payloads_never_become_markup_on_any_page(server, tab, tmp_path, data_root):
    page = tab
    open_url(page, server, "", "Documents")
    assert_clean(page, "Documents")

    open_url(page, server, "knowledge_graph", "Knowledge graph")
    frame = graph_frames(page)[0]
    hover_all(page, frame)
    target = frame.evaluate("""() => { const sel = network.getSelectedNodes()[0];
                                      const n = nodes.get().find(n => n.label && n.id !== sel);
                                      const p = network.canvasToDOM(network.getPositions([n.id])[n.id]);
                                      return {x: p.x, y: p.y, label: n.label}; }""")
    box = page.locator("iframe.rs-graph-frame").first.bounding_box()
    page.mouse.click(box["x"] + target["x"], box["y"] + target["y"])  # click -> postMessage -> Details
    page.get_by_text(f"Entity: {target['label'][:10]}", exact=False).first.wait_for(timeout=60_000)
    idle(page)
    assert page.get_by_text("Profile (description)").count() == 1
    assert_clean(page, "Knowledge graph")

    open_url(page, server, "summary_tree", "Summary tree")
    hover_all(page, graph_frames(page)[0])
    assert_clean(page, "Summary tree")

    open_url(page, server, "compare", "Compare retrieval modes")
    page.get_by_label("Question", exact=True).fill(QUESTION)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("Ran ").first.wait_for(timeout=600_000)
    idle(page)
    assert_clean(page, "Compare")

    open_url(page, server, "inspect", "Inspect one mode")
    for mode in MODES:  # every mode's panels: the ppr walk's tables and auto's routing included
        box = page.locator('[data-testid="stSelectbox"]').filter(
            has=page.locator('[data-testid="stWidgetLabel"]', has_text="Mode")).first
        combo = box.get_by_role("combobox")
        combo.click()
        combo.press_sequentially(mode, delay=20)  # the list filters to the option
        page.get_by_role("option", name=mode, exact=True).first.click()
        idle(page)
        page.get_by_label("Question", exact=True).fill(f"{QUESTION} {PAYLOAD}")
        page.get_by_role("button", name="Run", exact=True).click()
        page.get_by_role("heading", name=f"Result of {mode}").first.wait_for(timeout=600_000)
        idle(page)
        for name in ("Entities", "Relations", "Paths", "Context", "Routing", "Walk"):
            tab_button = page.get_by_role("tab", name=name)
            if tab_button.count():
                tab_button.first.click()
                page.wait_for_timeout(300)
        if page.locator("iframe.rs-graph-frame").count():
            hover_all(page, graph_frames(page)[0])
        assert_clean(page, f"Inspect {mode}")

    open_url(page, server, "evaluate", "Evaluate")
    report = tmp_path / "judge_report.json"
    report.write_bytes(judge_report_json())
    page.locator('[data-testid="stFileUploader"]').filter(has_text="saved judge report") \
        .locator('input[type="file"]').set_input_files(str(report))
    page.get_by_text("Per question").first.wait_for(timeout=120_000)
    idle(page)
    reply = page.get_by_text("Judge reply", exact=False).first
    reply.wait_for(timeout=60_000)  # the raw reply's expander, its label naming a payload mode
    reply.click()
    page.wait_for_timeout(500)
    assert_clean(page, "Evaluate")

    open_url(page, server, "settings", "Settings")
    assert_clean(page, "Settings")

    chunk = (data_root / "chunk.txt").read_text(encoding="utf-8")
    open_url(page, server, f"source?chunk={quote(chunk)}&quote={quote(PAYLOAD)}", "Source viewer")
    assert_clean(page, "Source viewer")

    open_url(page, server, "knowledge_graph", "Knowledge graph")  # the junk-node panel (editor and up)
    junk = page.locator('[data-testid="stExpander"]').filter(has_text="Junk nodes (delete in one step)").first
    isolated = junk.locator('[data-testid="stCheckbox"]').filter(has_text="Also list isolated nodes").first
    idle(page)
    for _ in range(3):  # under load the first click can land while the page is still being redrawn
        if junk.locator("details").first.get_attribute("open") is None:
            junk.locator("summary").first.click()
        try:
            isolated.wait_for(state="visible", timeout=20_000)
            break
        except Exception:  # noqa: BLE001 - Playwright's timeout: open it again
            idle(page)
    isolated.wait_for(state="visible", timeout=30_000)
    isolated.locator("label").first.click()
    idle(page)
    junk.get_by_role("button", name="Find junk nodes").click()
    idle(page)
    junk.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=120_000)  # the listed nodes
    assert_clean(page, "Junk nodes")
