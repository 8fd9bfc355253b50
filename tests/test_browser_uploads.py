"""What a user still tripped over, end to end in headless Chromium (one app over an empty data folder):

* a ZIP of documents dropped on the Documents uploader (it said "application/zip files are not allowed") is
  unpacked on the server: its documents are indexed under their paths in the zip, an attacker's members fail
  alone with their reasons (a ``../../etc/passwd`` path) or are listed as skipped (a CSV whose cell starts
  with ``=``, a PNG), and a member named like an ``<img onerror>`` tag is shown as text, never run;
* counts are shown with thousands separators (Inspect's "Context tokens" read "2634");
* the question-file pickers offer only files written for this workspace's corpus: Evaluate and "What the edits
  changed" offered the sample and shared data sets' files in any workspace; they now say why none is offered
  and keep the upload path.

Each part fails on the code before it. Screenshots go to ``test-artifacts/``.
"""
from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pytest

from browser_harness import ARTIFACTS, chromium, idle, open_page, require_browser, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

INDEX_TIMEOUT_MS = 20 * 60 * 1000
HOSTILE_NAME = "<img src=x onerror=window.__pwned=1>.md"
PLACES = ["Port Sallow", "Carrow Sound", "Kestrel Point", "Velmora Bay", "Ostmark", "Harlow Cross", "Fenwick Mill"]
PEOPLE = ["Anna Reyes", "Tomas Vell", "Ines Marlow", "Peter Okafor", "Ruth Caddick", "Elias Brandt"]


def long_history() -> str:
    """About 3,000 tokens of varied sentences: the Context tokens of a mode reading it pass 1,000."""
    lines = []
    for i in range(120):
        person, place = PEOPLE[i % len(PEOPLE)], PLACES[(i * 3) % len(PLACES)]
        lines.append(f"In {1850 + i} {person} surveyed the harbour of {place} and recorded {i * 7 + 3} vessels "
                     f"moored along the quay, noting the tide at {i % 12 + 1} feet.")
    return "# Harbour survey\n\n" + "\n".join(lines)


def attack_zip(path: Path) -> Path:
    members = {"notes/harbour-survey.md": long_history(),
               "rail.txt": "The Velmora Coastal Railway opened in 1894. It linked Port Sallow and Carrow Sound.",
               HOSTILE_NAME: "Ines Marlow kept the lighthouse log at Kestrel Point for thirty years.",
               "../../etc/passwd": "root:x:0:0:root:/root:/bin/bash",
               "ledger.csv": '=HYPERLINK("http://example.invalid","x"),2\n', "photo.png": b"\x89PNG\r\n\x1a\n"}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)  # the name exactly as an attacker writes it
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    path.write_bytes(buffer.getvalue())
    return path


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    require_browser()
    data = tmp_path_factory.mktemp("uploads_data")
    with streamlit_app(data, tmp_path_factory.mktemp("uploads_log")) as url, chromium() as browser:
        tab = browser.new_page(viewport={"width": 1500, "height": 1000})
        tab.dialogs = []  # type: ignore[attr-defined]
        tab.on("dialog", lambda dialog: (tab.dialogs.append(dialog.message), dialog.dismiss()))  # type: ignore
        tab.data_dir = data  # type: ignore[attr-defined]
        tab.goto(url, wait_until="domcontentloaded")
        tab.get_by_role("heading", name="Documents").first.wait_for(timeout=120_000)
        yield tab
        tab.close()


def main_text(tab) -> str:
    return tab.locator('[data-testid="stMain"]').inner_text()


@pytest.mark.timeout(2400)
def test_1_a_zip_is_unpacked_into_documents_and_its_hostile_members_fail_alone(page, tmp_path):
    open_page(page, "Documents", "Documents")
    uploader = page.locator('[data-testid="stFileUploader"] input[type="file"][multiple]')
    uploader.set_input_files(str(attack_zip(tmp_path / "harbour.zip")))
    page.wait_for_function("() => [...document.querySelectorAll('button')].some(b => "
                           "b.innerText.includes('Index uploaded files') && !b.disabled)", timeout=60_000)
    page.get_by_role("button", name="Index uploaded files").click()
    page.get_by_text(re.compile(r"^Indexed 3 document\(s\) in ")).first.wait_for(timeout=INDEX_TIMEOUT_MS)
    idle(page)
    page.screenshot(path=str(ARTIFACTS / "uploads-zip-report.png"), full_page=True)
    text = main_text(page)
    assert "0 unchanged, 0 replaced, 1 failed, 2 skipped." in text
    assert "✗ ../../etc/passwd: refused: its path leaves the archive (absolute, or with ..)" in text
    assert "– ledger.csv: unsupported file type .csv" in text and "– photo.png: unsupported file type .png" in text
    assert page.evaluate("() => window.__pwned") is None and page.dialogs == []  # type: ignore[attr-defined]
    assert page.locator('[data-testid="stMain"] img[onerror]').count() == 0
    listed = ["notes/harbour-survey.md", "rail.txt", HOSTILE_NAME, "../../etc/passwd"]
    page.get_by_role("heading", name="Document status").scroll_into_view_if_needed()
    page.locator("[data-testid=stDataFrame]").last.scroll_into_view_if_needed()  # the grid draws only what is in view
    script = "() => [...document.querySelectorAll('[data-testid=stDataFrame] td')].map(c => c.innerText.trim())"
    try:
        page.wait_for_function(f"names => {{ const c = ({script})(); return names.every(n => c.includes(n)); }}",
                               arg=listed, timeout=60_000)
    except Exception:  # noqa: BLE001 - playwright's TimeoutError: the assertion below says what is missing
        pass
    cells = page.evaluate(script)
    assert set(listed) <= set(cells), cells
    assert "ledger.csv" not in cells and "photo.png" not in cells  # skipped: not failed documents


@pytest.mark.timeout(1200)
def test_2_counts_are_shown_with_thousands_separators(page):
    open_page(page, "Inspect", "Inspect one mode")
    mode = page.locator('[data-testid="stSelectbox"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]', has_text="Mode")).first.get_by_role("combobox")
    mode.click()
    page.get_by_role("option", name="naive", exact=True).first.click()
    idle(page)
    box = page.get_by_role("textbox", name="Question")
    box.fill("How many vessels did Anna Reyes record at Port Sallow?")
    box.press("Control+Enter")
    idle(page)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_role("heading", name="Result of naive").wait_for(timeout=300_000)
    idle(page)
    metric = page.locator('[data-testid="stMain"] [data-testid="stMetric"]').filter(has_text="Context tokens").first
    value = metric.locator('[data-testid="stMetricValue"]').inner_text().strip()
    assert re.fullmatch(r"\d{1,3}(,\d{3})+", value), value  # e.g. 2,634 (was 2634)
    caption = page.get_by_text(re.compile(r"^LLM calls 0 · prompt tokens")).first.inner_text()
    assert "prompt tokens 0" in caption


def _edit_something(data: Path) -> None:
    """One graph edit through the library (the page's panel appears once the workspace has an active edit)."""
    from core import api
    from core.auth import LOCAL_ADMIN
    from core.workspace import Workspace

    ws = Workspace(data / "default")
    try:
        name = sorted(api.knowledge_graph(LOCAL_ADMIN, ws).nodes)[0]
        api.edit_graph(LOCAL_ADMIN, ws, "delete_entity", {"name": name})
    finally:
        ws.close()


@pytest.mark.timeout(1200)
def test_3_question_files_are_offered_only_for_this_workspaces_corpus(page):
    open_page(page, "Evaluate", "Evaluate")
    page.get_by_text("No built-in question file is about this workspace's documents").first.wait_for(timeout=60_000)
    note = page.get_by_text(re.compile(r"^Not offered here: Sample corpus questions")).first.inner_text()
    assert "does not hold. Upload a question file to run one anyway." in note
    assert page.locator('[data-testid="stSelectbox"]').filter(has_text="Question file").count() == 0
    _edit_something(page.data_dir)  # type: ignore[attr-defined]
    page.reload(wait_until="domcontentloaded")
    page.get_by_role("heading", name="Evaluate").first.wait_for(timeout=120_000)
    open_page(page, "Knowledge graph", "Knowledge graph")
    panel = page.locator('[data-testid="stExpander"]').filter(has_text="What the edits changed").first
    combo = panel.locator('[data-testid="stSelectbox"]').filter(has_text="Questions").first.get_by_role("combobox")
    for _ in range(3):  # the page reruns once on the edit made outside it (a toast says so), which can close the
        idle(page)      # expander just opened: open it until its picker shows
        if not combo.is_visible():
            page.get_by_text("What the edits changed (evaluation before → after)").first.click()
        try:
            combo.wait_for(state="visible", timeout=30_000)
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError: open it once more
            continue
    for _ in range(3):  # a rerun can swallow the click that opens the list too: open it until options show
        idle(page)
        combo.click()
        try:
            page.get_by_role("option").first.wait_for(timeout=20_000)
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError: click once more
            continue
    assert page.get_by_role("option").all_inner_texts() == ["Upload a question file"]  # no built-in file fits
    combo.press("Escape")
    idle(page)
    assert panel.get_by_text(re.compile(r"^Not offered here: Sample corpus questions")).count() == 1
    assert panel.locator('[data-testid="stFileUploader"]').count() == 1  # the explicit path stays
    page.screenshot(path=str(ARTIFACTS / "uploads-edit-impact-files.png"), full_page=True)
