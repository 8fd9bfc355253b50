"""Issue 32, item 5 in headless Chromium: the question typed on Compare is carried to Inspect, and Inspect
draws the retrieved subgraph above the annotation cards with its labels whole (not cut with "…").
Screenshot: ``RAGSCOPE_SCREENSHOT_DIR`` (default ``test-artifacts/``), ``inspect-order.png``."""
from __future__ import annotations

import os
import shutil

import pytest

from browser_harness import chromium, idle, open_page, require_browser, streamlit_app
from test_browser import shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUESTION = "Who organised the evacuation of Ashcombe?"
LABELS = ("Show the retrieved subgraph", "Download subgraph (GraphML)", "Download subgraph (HTML, works offline)")


@pytest.fixture(scope="module")
def page(sample_workspace_dir, tmp_path_factory):
    require_browser()
    data = tmp_path_factory.mktemp("inspect_data")
    shutil.copytree(sample_workspace_dir, data / "default")  # the workspace a session opens
    port = int(os.environ.get("RAGSCOPE_BROWSER_PORT", "0")) or None
    with streamlit_app(data, tmp_path_factory.mktemp("inspect_log"), port=port) as url, chromium() as browser:
        tab = browser.new_page(viewport={"width": 1500, "height": 1000})
        tab.goto(url, wait_until="domcontentloaded")
        tab.get_by_role("heading", name="Documents").first.wait_for(timeout=180_000)
        yield tab
        tab.close()


def test_compare_question_reaches_inspect_and_the_subgraph_comes_first(page):
    open_page(page, "Compare", "Compare retrieval modes")
    box = page.get_by_label("Question", exact=True)
    box.fill(QUESTION)
    box.press("Control+Enter")
    idle(page)
    open_page(page, "Inspect", "Inspect one mode")
    assert page.get_by_label("Question", exact=True).input_value() == QUESTION
    page.get_by_role("button", name="Run", exact=True).click()
    heading = page.get_by_role("heading", name="Retrieved subgraph").first
    heading.wait_for(timeout=300_000)
    idle(page)
    cards = page.get_by_role("heading", name="Annotate the retrieved chunks").first
    cards.wait_for(timeout=60_000)
    assert heading.bounding_box()["y"] < cards.bounding_box()["y"]
    for label in LABELS:
        element = page.get_by_text(label, exact=True).first
        assert not element.evaluate("e => e.scrollWidth > e.clientWidth + 1"), f"{label!r} is cut"
    heading.scroll_into_view_if_needed()
    page.wait_for_timeout(1000)
    shot(page, "inspect-order.png", full_page=False)
