"""Issue 35 (d) in headless Chromium: Inspect's ppr panel (the seeds with their weights, the top entities by
PageRank mass, why each chunk ranked) and Inspect for auto (the mode it chose, the reason, the predicted hops
and the question features that decided). The workspace holds the sample corpus plus a hostile note whose
entity names carry markup: every table renders them as text, no script runs and no dialog opens.
Screenshots: ``RAGSCOPE_SCREENSHOT_DIR`` (default ``test-artifacts/``), ``inspect-ppr.png``, ``inspect-auto.png``."""
from __future__ import annotations

import os
import shutil

import pytest

from browser_harness import chromium, idle, open_page, require_browser, streamlit_app
from test_browser import XSS_TEXT, pick_option, shot
from test_browser_newcomer import grid_texts

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUESTION = "Who chalked a message on the Port Sallow harbour wall, and what did Orla Venn write in the ledger?"


def _index_hostile_note(workspace, folder) -> None:
    from core.indexing.pipeline import process_pending, register_documents
    from core.loaders import load_path
    from core.workspace import Workspace

    note = folder / "hostile-note.txt"
    note.write_text(XSS_TEXT, encoding="utf-8")
    docs, failures = load_path(note)
    ws = Workspace(workspace)
    with ws.writer():
        register_documents(ws, docs, failures)
        report = process_pending(ws)
    ws.close()
    assert report.processed == 1 and not report.failed


@pytest.fixture(scope="module")
def page(sample_workspace_dir, tmp_path_factory):
    require_browser()
    data = tmp_path_factory.mktemp("ppr_auto_data")
    shutil.copytree(sample_workspace_dir, data / "default")  # the workspace a session opens
    _index_hostile_note(data / "default", tmp_path_factory.mktemp("ppr_auto_note"))
    port = int(os.environ.get("RAGSCOPE_BROWSER_PORT", "0")) or None
    with streamlit_app(data, tmp_path_factory.mktemp("ppr_auto_log"), port=port) as url, chromium() as browser:
        tab = browser.new_page(viewport={"width": 1500, "height": 1000})
        tab.add_init_script("window.alert = () => { window.__xss = true; };")
        dialogs: list[str] = []
        tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        tab.goto(url, wait_until="domcontentloaded")
        tab.get_by_role("heading", name="Documents").first.wait_for(timeout=180_000)
        yield tab
        assert not dialogs, dialogs
        tab.close()


def _run(tab, mode: str) -> None:
    open_page(tab, "Inspect", "Inspect one mode")
    pick_option(tab, "Mode", mode)
    tab.get_by_label("Question", exact=True).fill(QUESTION)
    tab.get_by_role("button", name="Run", exact=True).click()
    tab.get_by_role("heading", name=f"Result of {mode}").first.wait_for(timeout=300_000)
    idle(tab)


def _cells_until(tab, wanted: tuple[str, ...], timeout_ms: int = 90_000) -> list[str]:
    """The grid cells once every ``wanted`` text is among them (the grid draws its cells after the page idles)."""
    waited = 0
    cells: list[str] = grid_texts(tab)
    while not all(any(w in c for c in cells) for w in wanted) and waited < timeout_ms:
        tab.wait_for_timeout(1000)
        waited += 1000
        cells = grid_texts(tab)
    return cells


def _no_script_ran(tab) -> None:
    assert not tab.evaluate("() => !!window.__xss"), "a document string ran as script"
    assert tab.locator("main img[src='x']").count() == 0, "a document string was rendered as an image tag"


def test_inspect_ppr_panel_shows_seeds_top_entities_and_why_each_chunk_ranked(page):
    _run(page, "ppr")
    page.get_by_role("tab", name="Chunks", exact=True).click()
    idle(page)
    for caption in ("Entities with the most PageRank mass", "Why each chunk ranked where it did"):
        page.get_by_text(caption, exact=True).first.wait_for(timeout=60_000)
    page.get_by_text("Personalised PageRank, damping 0.5", exact=False).first.wait_for(timeout=60_000)
    cells = _cells_until(page, ("share %", "PageRank mass", "why it ranked here", "personalised PageRank"))
    assert "share %" in cells and "weight" in cells, cells[:40]  # the seed table with weights
    assert any(c in ("fact", "passage") for c in cells), cells[:60]  # seed kinds
    assert any(c.startswith("personalised PageRank") for c in cells), cells[:80]  # a chunk's reason
    assert any("Orla Venn" in c for c in cells), cells[:80]  # the hostile note was reached
    page.get_by_text("Why each chunk ranked where it did", exact=True).first.scroll_into_view_if_needed()
    shot(page, "inspect-ppr.png", full_page=False)
    _no_script_ran(page)


def test_inspect_auto_shows_the_chosen_mode_the_reason_and_the_deciding_features(page):
    _run(page, "auto")
    caption = page.get_by_text("auto ran ", exact=False).first
    caption.wait_for(timeout=60_000)
    # "auto ran MODE — REASON": the reason is a line of its own (in a table cell it was clipped)
    ran, _, reason = caption.inner_text().removeprefix("auto ran ").strip().partition(" — ")
    cells = _cells_until(page, ("chosen mode", "predicted hops (gold passages)"))
    assert "chosen mode" in cells and ran in cells, cells[:40]
    assert reason.startswith("predicted ") and " hops (gold passages), " in reason, reason
    assert ran in reason, reason  # the reason names the mode it chose
    assert not any(" hops (gold passages), " in c for c in cells), cells[:40]  # not again, clipped, in the table
    assert "question feature: words" in cells and "question feature: clauses" in cells, cells[:40]
    caption.scroll_into_view_if_needed()
    shot(page, "inspect-auto.png", full_page=False)
    if "ppr" in ran.split("+"):  # the fused candidate carries ppr's walk: the panel is on the Chunks tab
        page.get_by_role("tab", name="Chunks", exact=True).click()
        idle(page)
        page.get_by_text("Why each chunk ranked where it did", exact=True).first.wait_for(timeout=60_000)
        cells = _cells_until(page, ("why it ranked here", " in ppr"))
        assert any(" in ppr" in c and c.startswith(ran) for c in cells), cells[:80]
    _no_script_ran(page)
