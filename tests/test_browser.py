"""The demo walk-through in a real browser: `streamlit run app.py` driven by Playwright in Debian Chromium.

One session, in order: load the sample corpus with the Documents page's button and wait for
indexing; click a node and an edge of the knowledge graph and read their Details; open the
summary tree; run Compare with every mode on a picked example question; Inspect the path and
tree modes; run Evaluate on the sample questions; download the Inspect subgraph as standalone
HTML and open it with the network blocked; finally index a document full of `<script>` /
`<img onerror>` text and assert no dialog ever fires (also while hovering graph nodes, whose
tooltips quote the document). Screenshots go to ``RAGSCOPE_SCREENSHOT_DIR`` (default
``test-artifacts/``) — look at them. Chromium comes from ``scripts/install-browser.sh`` (never
``playwright install``); the tests are skipped when /usr/bin/chromium is absent, and fail
then when ``RAGSCOPE_REQUIRE`` names ``browser`` (or ``all``).
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from browser_harness import (ARTIFACTS, chromium, idle, open_page, require_browser, run_sample_evaluation,
                             streamlit_app, upload_and_index)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

INDEX_TIMEOUT_MS = 20 * 60 * 1000
EXAMPLE_QID = "sample:2"
EXAMPLE = "Who was appointed arbitrator in the Carrow Sound fishing dispute?"
XSS_TEXT = ("Captain Orla Venn sailed from Port Sallow to Carrow Sound in 1911. "
            "<script>alert(1)</script> was chalked on the Port Sallow harbour wall by Orla Venn. "
            "Orla Venn later wrote <img src=x onerror=alert(1)> in the Carrow Sound ledger. "
            "The Tidewater Shipping Cooperative praised Orla Venn.\n") * 3


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A Streamlit server on a free port with an empty temporary data folder."""
    require_browser()
    with streamlit_app(tmp_path_factory.mktemp("browser_data"), tmp_path_factory.mktemp("browser_log")) as url:
        yield url


@pytest.fixture(scope="module")
def browser(server):
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def page(server, browser):
    """One browser tab for the whole scenario; every JS dialog is recorded (and dismissed)."""
    tab = browser.new_page(viewport={"width": 1500, "height": 1000}, accept_downloads=True)
    tab.dialogs = []  # type: ignore[attr-defined]

    def on_dialog(dialog) -> None:
        tab.dialogs.append(dialog.message)  # type: ignore[attr-defined]
        dialog.dismiss()

    tab.on("dialog", on_dialog)
    tab.goto(server, wait_until="domcontentloaded")
    tab.get_by_role("heading", name="Documents").first.wait_for(timeout=120_000)
    yield tab
    tab.close()


def shot(tab, name: str, full_page: bool = True) -> Path:
    """A screenshot; ``full_page`` grows the viewport to the app's scroll height first (Streamlit
    scrolls inside its main container, so Playwright's own full-page capture shows the top only)."""
    path = ARTIFACTS / name
    size = tab.viewport_size
    if full_page:
        height = tab.evaluate("() => Math.max(...[...document.querySelectorAll('[data-testid=stMain], "
                              "[data-testid=stAppViewContainer], section.main')].map(e => e.scrollHeight), 0)")
        tab.set_viewport_size({"width": size["width"], "height": int(min(max(height, size["height"]), 7000))})
        tab.wait_for_timeout(800)
    tab.screenshot(path=str(path))
    if full_page:
        tab.set_viewport_size(size)
        tab.wait_for_timeout(300)
    return path


def graph_frame(tab, timeout_ms: int = 120_000):
    """The first graph iframe's frame (clickable component or plain iframe), once vis-network has drawn."""
    frame_el = tab.locator("iframe").first
    frame_el.wait_for(timeout=timeout_ms)
    frame_el.scroll_into_view_if_needed()  # sandboxed = cross-origin: Chromium paints it only when visible
    frame = frame_el.element_handle().content_frame()
    frame.wait_for_function("() => window.ragscopeGraph && window.ragscopeGraph.drawn !== null", timeout=timeout_ms)
    return frame


def painted_pixels(frame) -> int:
    return frame.evaluate(
        """() => { const c = document.querySelector('#mynetwork canvas'); if (!c) return 0;
                   const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                   let n = 0; for (let i = 3; i < d.length; i += 4) { if (d[i] > 0) n++; } return n; }""")


def non_white_pixels(png: bytes) -> int:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("L")
    return sum(1 for value in image.getdata() if value < 235)


def hover_nodes(tab, frame, limit: int = 12) -> int:
    """Move the mouse over up to ``limit`` nodes so their tooltips (built from document text) open."""
    points = frame.evaluate(
        """(limit) => { const ids = network.body.nodeIndices.slice(0, limit);
                        const pos = network.getPositions(ids);
                        return ids.map(id => network.canvasToDOM(pos[id])); }""", limit)
    box = tab.locator("iframe").first.bounding_box()
    for point in points:
        tab.mouse.move(box["x"] + point["x"], box["y"] + point["y"])
        tab.wait_for_timeout(300)
    return len(points)


def click_in_graph(tab, point: dict) -> None:
    box = tab.locator("iframe").first.bounding_box()
    tab.mouse.click(box["x"] + point["x"], box["y"] + point["y"])


def expect(locator):
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def pick_option(tab, label_start: str, option: str) -> None:
    """Open the selectbox whose label starts with ``label_start`` and click ``option``."""
    box = tab.locator('[data-testid="stSelectbox"]').filter(
        has=tab.locator('[data-testid="stWidgetLabel"]', has_text=label_start)).first
    combo = box.get_by_role("combobox")
    combo.click()
    combo.press_sequentially(option[:40], delay=20)  # the list filters to the option
    choice = tab.get_by_role("option", name=option, exact=True).first
    choice.wait_for(timeout=60_000)
    choice.click()
    idle(tab)


@pytest.mark.timeout(2400)  # indexing the sample corpus: ~1-2 min idle, much longer on a loaded 2-core machine
def test_load_the_sample_corpus(page):
    from core.api import sample_paths
    from core.auth import LOCAL_ADMIN

    count = len(sample_paths(LOCAL_ADMIN))
    page.get_by_role("button", name="Load sample corpus").click()
    # the eleven articles are one indexing batch: the progress line shows while it runs
    page.get_by_text(re.compile(r"Indexing the sample corpus… \(\d+ s")).first.wait_for(timeout=INDEX_TIMEOUT_MS)
    shot(page, "00-indexing-progress.png")
    page.get_by_text(f"Indexed {count} document(s)").first.wait_for(timeout=INDEX_TIMEOUT_MS)
    idle(page)
    shot(page, "01-documents-indexed.png")
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_by_text(str(count), exact=True).count() >= 1  # the sidebar counts the new documents
    assert page.get_by_text("README.md").count() == 0  # the sample loader takes the articles only


def test_click_a_node_and_an_edge_of_the_graph(page):
    open_page(page, "Knowledge graph", "Knowledge graph")
    frame = graph_frame(page)
    page.wait_for_timeout(1500)  # the short physics relaxation, then physics stops
    assert painted_pixels(frame) > 2000, "the graph canvas is blank"
    png = page.locator("iframe").first.screenshot()
    assert non_white_pixels(png) > 2000, "the graph iframe looks blank"
    assert page.get_by_text(re.compile(r"Showing 60 of \d+ nodes")).count() == 1
    labels = frame.evaluate("() => nodes.get().filter(n => n.label).length")
    assert 5 <= labels < 60, f"{labels} labels: they should be drawn only where they fit"
    shot(page, "02-knowledge-graph.png")

    # click a labelled node that is not the selected one: the Details panel follows
    target = frame.evaluate(
        """() => { const sel = network.getSelectedNodes()[0];
                   const n = nodes.get().filter(n => n.label && n.id !== sel && n.label.length < 30)
                                         .sort((a, b) => b.size - a.size)[0];
                   const p = network.canvasToDOM(network.getPositions([n.id])[n.id]);
                   return {id: n.id, label: n.label, x: p.x, y: p.y}; }""")
    click_in_graph(page, target)
    page.get_by_text(f"Entity: {target['label']}", exact=True).wait_for(timeout=60_000)
    idle(page)
    assert page.get_by_text("Profile (description)").count() == 1
    shot(page, "03-graph-node-details.png")

    # click the middle of the longest edge: the relation's details
    frame = graph_frame(page)
    edge = frame.evaluate(
        """() => { let best = null;  // the longest edge whose midpoint hits that edge and no node
                   for (const e of edges.get()) {
                       const pos = network.getPositions([e.from, e.to]);
                       const a = network.canvasToDOM(pos[e.from]), b = network.canvasToDOM(pos[e.to]);
                       const mid = {x: (a.x + b.x) / 2, y: (a.y + b.y) / 2};
                       if (network.getNodeAt(mid) !== undefined || network.getEdgeAt(mid) !== e.id) continue;
                       const len = Math.hypot(a.x - b.x, a.y - b.y);
                       if (!best || len > best.len) best = {len, x: mid.x, y: mid.y};
                   }
                   return best; }""")
    assert edge, "no edge could be clicked on its own"
    click_in_graph(page, edge)
    page.get_by_text(re.compile(r"^Relation: .+ — .+$")).first.wait_for(timeout=60_000)
    idle(page)
    shot(page, "04-graph-edge-details.png")
    assert not page.dialogs  # type: ignore[attr-defined]


def test_summary_tree_fills_the_canvas(page):
    open_page(page, "Summary tree", "Summary tree")
    tree = graph_frame(page)
    page.wait_for_timeout(800)
    assert painted_pixels(tree) > 1000, "the summary tree canvas is blank"
    labels = tree.evaluate("() => nodes.get().map(n => n.label)")
    assert any(label.startswith("Corpus L") for label in labels)
    assert not any(label.endswith(".…") for label in labels)
    shot(page, "05-summary-tree.png")


def test_compare_all_modes_on_a_picked_example(page):
    from core.retrieval.registry import modes

    all_modes = modes()
    open_page(page, "Compare", "Compare retrieval modes")
    pick_option(page, "Example question", f"{EXAMPLE_QID} · {EXAMPLE}")
    expect(page.get_by_label("Question", exact=True)).to_have_value(EXAMPLE, timeout=120_000)  # the pick fills it
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text(f"Ran {len(all_modes)} mode(s)").first.wait_for(timeout=INDEX_TIMEOUT_MS)
    labels = page.get_by_text("Extractive answer — quoted from the retrieved context")
    labels.first.wait_for(timeout=120_000)
    idle(page)
    page.wait_for_timeout(1000)
    shot(page, "06-compare.png")
    assert labels.count() == len(all_modes), f"{labels.count()} answers for {len(all_modes)} modes"
    assert page.get_by_text("(the retrieved context gave no answer)").count() == 0
    for mode in all_modes:
        assert page.get_by_role("heading", name=mode, exact=True).count() >= 1, mode
    assert page.get_by_text(re.compile(r"retrieval \d[\d,]* ms · answer \d[\d,]* ms \(extractive\)")).count() \
        == len(all_modes)
    assert page.get_by_text("Answer generation (ms)").count() >= 1  # the latency chart keeps the answer apart
    assert page.get_by_text("Eleanor Vance").count() >= 1


def test_inspect_path_and_tree_and_export_the_subgraph(page, browser, tmp_path):
    open_page(page, "Inspect", "Inspect one mode")
    pick_option(page, "Example question", f"{EXAMPLE_QID} · {EXAMPLE}")
    expect(page.get_by_label("Question", exact=True)).to_have_value(EXAMPLE, timeout=120_000)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_role("heading", name="Result of path").wait_for(timeout=300_000)
    idle(page)
    caption = page.get_by_text(re.compile(r"^path: \d+ retrieved entities")).first
    caption.wait_for(timeout=120_000)
    entities = page.locator('[data-testid="stMain"] [data-testid="stMetric"]').filter(has_text="Entities").first \
        .inner_text()  # the page's metric, not the sidebar's workspace count
    number = re.search(r"\d+", entities.split("Entities", 1)[1]).group(0)
    assert caption.inner_text().startswith(f"path: {number} retrieved entities")  # one count, one definition
    page.get_by_role("tab", name="Paths").click()
    page.wait_for_timeout(800)
    shot(page, "07-inspect-path.png")

    with page.expect_download() as download_info:
        page.get_by_role("button", name="Download subgraph (HTML, works offline)").click()
    saved = tmp_path / "subgraph.html"
    download_info.value.save_as(saved)
    html_page = saved.read_text(encoding="utf-8")
    assert "vis.Network" in html_page
    offline = browser.new_page(viewport={"width": 900, "height": 700})
    requests: list[str] = []
    offline.route(re.compile(r"^https?://"), lambda route: (requests.append(route.request.url), route.abort()))
    offline.goto(saved.as_uri())
    offline.wait_for_function("() => window.ragscopeGraph && window.ragscopeGraph.drawn !== null", timeout=60_000)
    offline.wait_for_timeout(800)
    assert painted_pixels(offline.main_frame) > 1000, "the exported subgraph is blank offline"
    offline.screenshot(path=str(ARTIFACTS / "08-exported-subgraph.png"))
    offline.close()
    assert not requests, requests  # the standalone page fetches nothing

    pick_option(page, "Mode", "tree")
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_role("heading", name="Result of tree").wait_for(timeout=300_000)
    idle(page)
    page.get_by_role("tab", name="Tree trace").click()
    page.get_by_text(re.compile("h-loop")).first.wait_for(timeout=60_000)
    shot(page, "09-inspect-tree.png")


def test_evaluate_the_sample_questions(page):
    # the first six sample questions, every mode: enough to read the tables, cheap on 2 cores
    run_sample_evaluation(page, 6, INDEX_TIMEOUT_MS)
    page.wait_for_timeout(1000)
    shot(page, "10-evaluate.png")
    assert page.get_by_text("6 questions", exact=True).count() == 1


def test_hostile_document_never_runs_script(page, tmp_path):
    hostile = tmp_path / "hostile-note.txt"
    hostile.write_text(XSS_TEXT, encoding="utf-8")
    upload_and_index(page, [hostile], INDEX_TIMEOUT_MS)
    open_page(page, "Knowledge graph", "Knowledge graph")
    search = page.get_by_label("Search an entity")
    search.fill("Orla")
    search.press("Enter")
    page.get_by_text("Showing").first.wait_for(timeout=60_000)
    idle(page)
    page.wait_for_timeout(1500)
    frame = graph_frame(page)
    assert hover_nodes(page, frame) >= 1
    shot(page, "11-hostile-graph-tooltip.png")
    page.get_by_role("switch", name="Show the E2GraphRAG mention graph instead").check(force=True)
    idle(page)
    page.wait_for_timeout(1500)
    frame = graph_frame(page)
    hover_nodes(page, frame)
    open_page(page, "Summary tree", "Summary tree")
    graph_frame(page)
    open_page(page, "Documents", "Documents")
    page.wait_for_timeout(1000)
    assert not page.dialogs, page.dialogs  # type: ignore[attr-defined]
    assert not page.frames[0].evaluate("() => !!window.__xss")
