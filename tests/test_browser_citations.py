"""Click a citation, see the source (issue 34), in a real browser: `streamlit run app.py` driven by
Playwright in Debian Chromium.

A four-page PDF made here (a known fact on page 3 only) and a Markdown guide with sections are uploaded
on Documents and indexed; a question on Compare is answered with ``[facts.pdf, p. 3]``; clicking that
citation opens the Source viewer at page 3, rendered with the quoted sentence boxed in yellow. The same
for ``[guide.md, § Mooring rules]``: the viewer shows the guide's text with the sentence marked. No
request of the browser leaves 127.0.0.1. Screenshots go to ``RAGSCOPE_SCREENSHOT_DIR`` (default
``test-artifacts/``). Skipped without /usr/bin/chromium or Playwright, failed then under
``RAGSCOPE_REQUIRE=browser`` (or ``all``).
"""
from __future__ import annotations

import io
import re

import pytest

from browser_harness import ARTIFACTS, chromium, idle, open_page, require_browser, streamlit_app, upload_and_index
from test_citations import make_pdf

pytestmark = [pytest.mark.browser, pytest.mark.slow]

INDEX_TIMEOUT_MS = 20 * 60 * 1000
FACT = "Marta Quill kept the Skerry Point lamp lit through the great storm of 1907."
FILLER = {1: "The harbour office on page one lists {n} mooring fees for small fishing boats.",
          2: "The second page counts {n} crates of salt unloaded at the north quay.",
          4: "The last page notes {n} repairs to the breakwater after the spring tides."}
MOORING = "Boats under ten metres moor at the Quill Jetty on the east side of the basin."
GUIDE = ("# Harbour guide\n\nThis guide describes the basin for visiting skippers.\n\n"
         "## Fuel and water\n\nDiesel is sold at the fuel berth from six in the morning until noon.\n"
         "Fresh water taps stand beside every pontoon.\n\n"
         f"## Mooring rules\n\n{MOORING}\nLarger vessels call the harbour master on channel twelve.\n\n"
         "## Waste\n\nBins for oil and batteries are kept behind the chandlery.\n")


def fact_pdf() -> bytes:
    pages = []
    for page_no in range(1, 5):
        if page_no == 3:
            lines = [f"Page three line {n} describes the lighthouse stairs and their {n} steps." for n in range(1, 9)]
            lines.insert(4, FACT)
        else:
            lines = [FILLER[page_no].format(n=n) for n in range(1, 10)]
        pages.append(lines)
    return make_pdf(pages)


def yellow_pixels(png: bytes) -> int:
    """Pixels of the viewer's highlight colour (translucent yellow over white or black text)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    return sum(1 for r, g, b in image.getdata() if r > 200 and 150 < g < 245 and b < 140)


def _local(url: str) -> bool:
    return url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:", "about:"))


def _leaving(page) -> list[str]:
    """Requests that tried to leave 127.0.0.1 (all are blocked): none may (the navigation's icons are
    emoji, since Streamlit fetched its Material Symbols icons from fonts.gstatic.com)."""
    return [u for u in page.requested if not _local(u)]


@pytest.fixture(scope="module")
def tab(tmp_path_factory):
    require_browser()
    files = tmp_path_factory.mktemp("citation_files")
    (files / "facts.pdf").write_bytes(fact_pdf())
    (files / "guide.md").write_text(GUIDE)
    with streamlit_app(tmp_path_factory.mktemp("citation_data"), tmp_path_factory.mktemp("citation_log")) as url, \
            chromium() as browser:
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.requested = []  # type: ignore[attr-defined]
        page.on("request", lambda request: page.requested.append(request.url))  # type: ignore[attr-defined]
        page.route(re.compile(r"^(?!(http|ws)://127\.0\.0\.1[:/]).+"), lambda route: route.abort())  # offline
        page.goto(url, wait_until="domcontentloaded")
        page.get_by_role("heading", name="Documents").first.wait_for(timeout=120_000)
        upload_and_index(page, [files / "facts.pdf", files / "guide.md"], INDEX_TIMEOUT_MS)
        yield page
        page.close()


def ask_on_compare(page, question: str) -> None:
    open_page(page, "Compare", "Compare retrieval modes")
    page.get_by_label("Question", exact=True).fill(question)
    page.get_by_label("Question", exact=True).press("Control+Enter")
    idle(page)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text(re.compile(r"Ran \d+ mode\(s\)")).first.wait_for(timeout=INDEX_TIMEOUT_MS)
    idle(page)


@pytest.mark.timeout(2400)  # indexing with the default models on a loaded 2-core machine
def test_a_page_citation_opens_the_pdf_page_with_the_sentence_boxed(tab) -> None:
    ask_on_compare(tab, "Who kept the Skerry Point lamp lit through the great storm of 1907?")
    link = tab.get_by_role("link", name="[facts.pdf, p. 3]").first
    link.wait_for(timeout=120_000)
    link.scroll_into_view_if_needed()
    box = link.bounding_box()
    tab.screenshot(path=str(ARTIFACTS / "citation-answer.png"),  # the answer above its citation links
                   clip={"x": max(0, box["x"] - 30), "y": max(0, box["y"] - 470), "width": 290, "height": 540})
    link.click()
    tab.get_by_role("heading", name="Source viewer").first.wait_for(timeout=120_000)
    idle(tab)
    tab.get_by_text("facts.pdf, p. 3", exact=True).first.wait_for(timeout=60_000)
    image = tab.locator('[data-testid="stImage"] img').first
    image.wait_for(timeout=60_000)
    assert tab.get_by_text("page 3: the cited span is boxed in yellow").count() == 1
    png = image.screenshot()
    (ARTIFACTS / "citation-pdf-viewer.png").write_bytes(png)
    assert yellow_pixels(png) > 500, "no highlight box on the rendered page"
    assert "Marta Quill" in tab.get_by_label("Sentence to highlight (optional; default: the whole chunk)").input_value()
    assert not _leaving(tab), _leaving(tab)


@pytest.mark.timeout(1200)
def test_a_section_citation_opens_the_markdown_text_with_the_sentence_marked(tab) -> None:
    ask_on_compare(tab, "Where do boats under ten metres moor in the basin?")
    link = tab.get_by_role("link", name="[guide.md, \u00a7 Mooring rules]").first
    link.wait_for(timeout=120_000)
    link.click()
    tab.get_by_role("heading", name="Source viewer").first.wait_for(timeout=120_000)
    idle(tab)
    mark = tab.locator("mark").first
    mark.wait_for(timeout=60_000)
    assert MOORING[:40] in " ".join(mark.inner_text().split())
    tab.screenshot(path=str(ARTIFACTS / "citation-markdown-viewer.png"))
    assert not _leaving(tab), _leaving(tab)


def _grid_cells(frame) -> list[list[str]]:
    """The rows of a dataframe as its accessible table lists them (header first)."""
    return frame.evaluate("f => [...f.querySelectorAll('tr')].map(r => [...r.querySelectorAll('td, th')]"
                          ".map(c => c.innerText.trim()))")


def _select_row(tab, frame, row: int) -> None:
    """Tick the selection box at the left of data row ``row`` (0-based) of a dataframe drawn on a canvas."""
    frame.scroll_into_view_if_needed()
    box = frame.bounding_box()
    tab.mouse.click(box["x"] + 16, box["y"] + 35 * (row + 1) + 17)


@pytest.mark.timeout(1200)
def test_an_inspect_table_row_opens_its_source_at_the_span(tab) -> None:
    """Selecting an entity row of Inspect's entity table named in the fact's sentence (only on page 3) opens the viewer at page 3 with that sentence boxed; a chunk row opens that chunk; back on Inspect the page stays (no bounce)."""
    open_page(tab, "Inspect", "Inspect one mode")
    tab.get_by_role("combobox", name="Mode").click()
    tab.get_by_role("option", name="hybrid", exact=True).click()
    idle(tab)
    tab.get_by_label("Question", exact=True).fill("Who kept the Skerry Point lamp lit through the great storm of 1907?")
    tab.get_by_role("button", name="Run", exact=True).click()
    tab.get_by_role("heading", name="Result of hybrid").first.wait_for(timeout=INDEX_TIMEOUT_MS)
    idle(tab)
    tab.get_by_role("tab", name="Entities", exact=True).click()
    idle(tab)
    frame = tab.locator('[role="tabpanel"]:visible [data-testid="stDataFrame"]').first
    frame.wait_for(timeout=60_000)
    frame.scroll_into_view_if_needed()
    tab.wait_for_function("f => f.querySelectorAll('tr').length > 1", arg=frame.element_handle(), timeout=60_000)
    rows = _grid_cells(frame)[1:]  # the columns in view: rank, name, …
    on_page_3 = [n for n, row in enumerate(rows) if len(row) > 1 and row[1] and row[1] in FACT]
    assert on_page_3, rows  # an entity of the fact's sentence (Skerry Point, Marta Quill): only on page 3
    name = rows[on_page_3[0]][1]
    _select_row(tab, frame, on_page_3[0])
    tab.get_by_role("heading", name="Source viewer").first.wait_for(timeout=120_000)
    idle(tab)
    tab.get_by_text("facts.pdf, p. 3", exact=True).first.wait_for(timeout=60_000)
    quote = tab.get_by_label("Sentence to highlight (optional; default: the whole chunk)").input_value()
    assert name in quote and "Marta Quill" in quote, (name, quote)  # the sentence naming the row's entity
    png = tab.locator('[data-testid="stImage"] img').first.screenshot()
    (ARTIFACTS / "citation-inspect-row-viewer.png").write_bytes(png)
    assert yellow_pixels(png) > 500, "no highlight box for the entity row's sentence"

    open_page(tab, "Inspect", "Inspect one mode")
    idle(tab)
    tab.wait_for_timeout(1500)
    assert tab.get_by_role("heading", name="Source viewer").count() == 0  # the old selection does not re-open
    tab.get_by_role("tab", name="Chunks", exact=True).click()
    idle(tab)
    frame = tab.locator('[role="tabpanel"]:visible [data-testid="stDataFrame"]').first
    frame.wait_for(timeout=60_000)
    frame.scroll_into_view_if_needed()
    tab.wait_for_function("f => f.querySelectorAll('tr').length > 1", arg=frame.element_handle(), timeout=60_000)
    document = _grid_cells(frame)[1][1]  # rank, document, …: the top chunk's document
    _select_row(tab, frame, 0)
    tab.get_by_role("heading", name="Source viewer").first.wait_for(timeout=120_000)
    idle(tab)
    tab.get_by_text(re.compile(rf"^{re.escape(document)}, (p\.|pp\.|\u00a7|chunk) ")).first.wait_for(timeout=60_000)
    assert not _leaving(tab), _leaving(tab)
