"""Issue 32, item 6 in headless Chromium: the Knowledge graph page over the indexed sample corpus.

1. Switching to the mention graph unticks "Show all nodes" and leaves Max nodes usable (it drew an
   814-node hairball with Max nodes greyed out).
2. After an edge click the Entity picker names one end of that edge (it kept the node clicked before).
3. A search draws the matches' neighbours in the legend's colours (they were grey).
4. Filtering the entity types to PERSON shows people, not the sample's towns (typing by agreement of the
   mentions' labels and the name).

Screenshots go to ``RAGSCOPE_SCREENSHOT_DIR`` (default ``test-artifacts/``), ``graph-*.png``.
"""
from __future__ import annotations

import os
import re
import shutil

import pytest

from browser_harness import chromium, idle, open_page, require_browser, streamlit_app
from test_browser import click_in_graph, graph_frame, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FADED = "rgba(200,200,200,0.35)"
TOWNS = {"Ashcombe", "Greywick", "Dunmore", "Millbrook", "Port Sallow"}


@pytest.fixture(scope="module")
def page(sample_workspace_dir, tmp_path_factory):
    require_browser()
    data = tmp_path_factory.mktemp("graph_data")
    shutil.copytree(sample_workspace_dir, data / "default")  # the workspace a session opens
    port = int(os.environ.get("RAGSCOPE_BROWSER_PORT", "0")) or None
    with streamlit_app(data, tmp_path_factory.mktemp("graph_log"), port=port) as url, chromium() as browser:
        tab = browser.new_page(viewport={"width": 1500, "height": 1000})
        tab.goto(url, wait_until="domcontentloaded")
        tab.get_by_role("heading", name="Documents").first.wait_for(timeout=180_000)
        open_page(tab, "Knowledge graph", "Knowledge graph")
        yield tab
        tab.close()


def picker_text(tab) -> str:
    box = tab.locator('[data-testid="stSelectbox"]').filter(
        has=tab.locator('[data-testid="stWidgetLabel"]', has_text=re.compile(r"^(Entity|Term)$"))).first
    combo = box.get_by_role("combobox")
    shown = combo.input_value() if combo.evaluate("e => e.tagName") == "INPUT" else ""
    return f"{box.inner_text()}\n{shown}\n{combo.get_attribute('aria-label') or ''}"


def test_mention_graph_starts_from_the_default_view(page):
    page.get_by_text("Show all nodes", exact=True).click()
    idle(page)
    assert page.get_by_role("spinbutton", name="Max nodes").is_disabled()
    page.get_by_text("Show the E2GraphRAG mention graph instead").click()
    idle(page)
    graph_frame(page)
    assert page.get_by_role("spinbutton", name="Max nodes").is_enabled()
    assert not page.get_by_role("checkbox", name="Show all nodes").is_checked()
    page.get_by_text(re.compile(r"Showing 60 of \d+ nodes")).first.wait_for(timeout=60_000)
    shot(page, "graph-mention-default.png", full_page=False)
    page.get_by_text("Show the E2GraphRAG mention graph instead").click()
    idle(page)


def test_the_entity_picker_follows_a_clicked_edge(page):
    frame = graph_frame(page)
    page.wait_for_timeout(1000)
    edge = frame.evaluate(
        """() => { const sel = network.getSelectedNodes()[0]; let best = null;
                   for (const e of edges.get()) {
                       if (e.from === sel || e.to === sel) continue;  // an edge away from the selected node
                       const pos = network.getPositions([e.from, e.to]);
                       const a = network.canvasToDOM(pos[e.from]), b = network.canvasToDOM(pos[e.to]);
                       const mid = {x: (a.x + b.x) / 2, y: (a.y + b.y) / 2};
                       if (network.getNodeAt(mid) !== undefined || network.getEdgeAt(mid) !== e.id) continue;
                       const len = Math.hypot(a.x - b.x, a.y - b.y);
                       if (!best || len > best.len) best = {len, x: mid.x, y: mid.y};
                   }
                   return best; }""")
    assert edge, "no edge away from the selected node could be clicked on its own"
    before = picker_text(page)
    click_in_graph(page, edge)
    relation = page.get_by_text(re.compile(r"^Relation: .+ — .+$")).first
    relation.wait_for(timeout=60_000)
    idle(page)
    ends = relation.inner_text().removeprefix("Relation: ").split(" — ")
    shown = picker_text(page)
    assert any(end in shown for end in ends), (shown, ends)
    assert shown != before
    shot(page, "graph-edge-picker.png", full_page=False)


def test_search_neighbours_in_the_legend_colours(page):
    page.get_by_role("textbox", name="Search an entity").fill("sallow")
    page.get_by_role("textbox", name="Search an entity").press("Enter")
    idle(page)
    frame = graph_frame(page)
    colours = frame.evaluate("() => nodes.get().map(n => typeof n.color === 'string' ? n.color : n.color.background)")
    assert len(colours) > 3 and FADED not in colours
    assert len(set(colours)) >= 3, colours  # several types, not one grey
    shot(page, "graph-search-colours.png", full_page=False)
    page.get_by_role("textbox", name="Search an entity").fill("")
    page.get_by_role("textbox", name="Search an entity").press("Enter")
    idle(page)


def test_person_filter_shows_people_not_towns(page):
    page.get_by_text("Show all nodes", exact=True).click()
    idle(page)
    types = page.locator('[data-testid="stMultiSelect"]').filter(has=page.get_by_text("Entity types")).first
    types.click()
    page.keyboard.type("PERSON")
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    idle(page)
    frame = graph_frame(page)
    drawn = set(frame.evaluate("() => nodes.get().map(n => n.id)"))  # entity keys: normalised names
    assert drawn and not (drawn & {t.lower() for t in TOWNS}), drawn
    assert {"agnes marlowe", "simon rutherford"} <= drawn
    shot(page, "graph-person-filter.png", full_page=False)
