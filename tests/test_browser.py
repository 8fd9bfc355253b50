"""One real-browser run: `streamlit run app.py` driven by Playwright in Debian Chromium.

Uploads the sample files through the uploader and waits for indexing, checks the Knowledge graph
canvas drew (non-blank pixels), runs Compare with every mode and checks each column has an answer,
then indexes a document full of `<script>` / `<img onerror>` text and asserts no dialog ever fires
(also while hovering graph nodes, whose tooltips quote the document). Screenshots go to
``test-artifacts/`` — look at them. Chromium comes from ``scripts/install-browser.sh`` (never
``playwright install``); the test is skipped when /usr/bin/chromium is absent.
"""
from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
INDEX_TIMEOUT_MS = 20 * 60 * 1000
QUESTION = "Who was appointed arbitrator in the Carrow Sound fishing dispute?"
XSS_TEXT = ("Captain Orla Venn sailed from Port Sallow to Carrow Sound in 1911. "
            "<script>alert(1)</script> was chalked on the Port Sallow harbour wall by Orla Venn. "
            "Orla Venn later wrote <img src=x onerror=alert(1)> in the Carrow Sound ledger. "
            "The Tidewater Shipping Cooperative praised Orla Venn.\n") * 3


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A Streamlit server on a free port with an empty temporary data folder."""
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed: run scripts/install-browser.sh (as root)")
    pytest.importorskip("playwright.sync_api")
    data = tmp_path_factory.mktemp("browser_data")
    port = free_port()
    env = dict(os.environ, RAGSCOPE_DATA_DIR=str(data), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               ANONYMIZED_TELEMETRY="False", STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    env.pop("RAGSCOPE_LLM_BASE_URL", None)
    env.pop("RAGSCOPE_LLM_MODEL", None)
    log = open(tmp_path_factory.mktemp("browser_log") / "streamlit.log", "w+")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read().strip() == b"ok":
                break
        except OSError:
            time.sleep(0.5)
    else:
        proc.terminate()
        log.seek(0)
        pytest.fail("streamlit did not start:\n" + log.read()[-3000:])
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def page(server):
    """One browser tab for the whole scenario; every JS dialog is recorded (and dismissed)."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        tab = browser.new_page(viewport={"width": 1500, "height": 1000})
        tab.dialogs = []  # type: ignore[attr-defined]

        def on_dialog(dialog) -> None:
            tab.dialogs.append(dialog.message)  # type: ignore[attr-defined]
            dialog.dismiss()

        tab.on("dialog", on_dialog)
        tab.goto(server, wait_until="domcontentloaded")
        tab.get_by_role("heading", name="Documents").first.wait_for(timeout=120_000)
        yield tab
        browser.close()


def shot(tab, name: str) -> Path:
    path = ARTIFACTS / name
    tab.screenshot(path=str(path), full_page=True)
    return path


def open_page(tab, title: str, heading: str) -> None:
    tab.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True).click()
    tab.get_by_role("heading", name=heading).first.wait_for(timeout=120_000)


def upload_and_index(tab, files: list[Path], expect: str, progress_shot: str = "") -> None:
    tab.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files([str(f) for f in files])
    button = tab.get_by_role("button", name="Index uploaded files")
    button.wait_for()
    tab.wait_for_function("() => [...document.querySelectorAll('button')].some(b => "
                          "b.innerText.includes('Index uploaded files') && !b.disabled)", timeout=60_000)
    button.click()
    if progress_shot:  # live feedback: the per-step bars and growing counters while indexing runs
        tab.get_by_text(re.compile(r"Documents: [1-9]\d* indexed")).first.wait_for(timeout=INDEX_TIMEOUT_MS)
        shot(tab, progress_shot)
    tab.get_by_text(expect).first.wait_for(timeout=INDEX_TIMEOUT_MS)


def graph_frame(tab, timeout_ms: int = 120_000):
    """The pyvis iframe's frame, once vis-network has drawn."""
    tab.locator("iframe").first.wait_for(timeout=timeout_ms)
    frame = tab.locator("iframe").first.element_handle().content_frame()
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
        tab.wait_for_timeout(400)
    return len(points)


def test_upload_samples_and_draw_the_graph(page):
    samples = sorted((ROOT / "data" / "samples").glob("*.md"))
    page.locator('[data-testid="stFileUploader"] input[type="file"]').wait_for(state="attached")
    upload_and_index(page, samples, f"Indexed {len(samples)} document(s)", progress_shot="00-indexing-progress.png")
    shot(page, "01-documents-indexed.png")
    open_page(page, "Knowledge graph", "Knowledge graph")
    frame = graph_frame(page)
    page.wait_for_timeout(800)
    assert painted_pixels(frame) > 2000, "the graph canvas is blank"
    iframe_png = page.locator("iframe").first.screenshot(path=str(ARTIFACTS / "02-knowledge-graph-canvas.png"))
    assert non_white_pixels(iframe_png) > 2000, "the graph iframe looks blank"
    shot(page, "02-knowledge-graph.png")
    open_page(page, "Summary tree", "Summary tree")
    tree = graph_frame(page)
    page.wait_for_timeout(500)
    assert painted_pixels(tree) > 1000, "the summary tree canvas is blank"
    shot(page, "03-summary-tree.png")
    assert not page.dialogs  # type: ignore[attr-defined]


def test_compare_all_modes_answer(page):
    if not (ROOT / "pages" / "compare.py").exists():
        pytest.skip("pages/compare.py is not written yet (another helper's page)")
    from core.retrieval.registry import modes

    all_modes = modes()
    open_page(page, "Compare", "Compare retrieval modes")
    question = page.get_by_label("Question")
    question.fill(QUESTION)
    question.press("Control+Enter")
    page.wait_for_timeout(500)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text(f"Ran {len(all_modes)} mode(s)").first.wait_for(timeout=INDEX_TIMEOUT_MS)
    labels = page.get_by_text("Extractive answer — quoted from the retrieved context")
    labels.first.wait_for(timeout=120_000)
    page.wait_for_timeout(1000)
    shot(page, "04-compare.png")
    assert labels.count() == len(all_modes), f"{labels.count()} answers for {len(all_modes)} modes"
    empty = page.get_by_text("(the retrieved context gave no answer)").count()
    assert empty == 0, f"{empty} column(s) without an answer"
    for mode in all_modes:
        assert page.get_by_role("heading", name=mode, exact=True).count() >= 1, mode


def test_hostile_document_never_runs_script(page, tmp_path):
    hostile = tmp_path / "hostile-note.txt"
    hostile.write_text(XSS_TEXT, encoding="utf-8")
    open_page(page, "Documents", "Documents")
    upload_and_index(page, [hostile], "Indexed 1 document(s)")
    open_page(page, "Knowledge graph", "Knowledge graph")
    search = page.get_by_label("Search an entity")
    search.fill("Orla")
    search.press("Enter")
    page.get_by_text("Showing").first.wait_for(timeout=60_000)
    page.wait_for_timeout(1500)
    frame = graph_frame(page)
    assert hover_nodes(page, frame) >= 1
    shot(page, "05-hostile-graph-tooltip.png")
    page.get_by_role("switch", name="Show the E2GraphRAG mention graph instead").check(force=True)
    page.wait_for_timeout(1500)
    frame = graph_frame(page)
    hover_nodes(page, frame)
    open_page(page, "Summary tree", "Summary tree")
    graph_frame(page)
    open_page(page, "Documents", "Documents")
    page.wait_for_timeout(1000)
    shot(page, "06-documents-after-hostile.png")
    assert not page.dialogs, page.dialogs  # type: ignore[attr-defined]
    assert not page.frames[0].evaluate("() => !!window.__xss")
