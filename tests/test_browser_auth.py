"""Sign-in in a real browser through a real OpenID Connect provider (issue 20).

``oidc-provider-mock`` (installed by ``scripts/install-oidc.sh`` in its own venv) runs on 127.0.0.1; the
app runs with ``[auth]`` pointing at it and a ``[ragscope.roles]`` mapping, on a copy of the indexed
sample workspace. In headless Chromium:

* an unauthenticated browser opens every page by its URL and sees the sign-in page and no workspace
  content (no document name, no sidebar counts);
* a viewer signs in on the provider's authorize page: sees the documents, no upload / paste / delete /
  workspace controls and no Settings page (not in the navigation; its URL opens no settings form), then
  signs out;
* an editor signs in: pastes a document and indexes it (the table grows), still no Settings;
* an identity the mapping does not list is told it has no role and sees no content;
* while an editor indexes a long pasted document (the editor's tab shows Cancel), a viewer who opens
  Documents sees the run's progress and the note that only an editor can cancel it, and no Cancel
  button (issue 38, item 1, in the browser; the library's refusal: tests/test_cancel_roles.py);
* an editor uploads two short documents and a long one, presses Cancel while the long one is indexed
  (its batch, the last): the run stops, the two short ones stay indexed and the long one pending, and
  Resume pending indexes it (issue 38).

Fails instead of skipping when ``RAGSCOPE_REQUIRE`` names ``oidc`` (or ``browser``, or ``all``).
"""
from __future__ import annotations

import os
import secrets
import shutil
import time
from pathlib import Path

import pytest
from conftest import require_or_skip

from browser_harness import ARTIFACTS, chromium, free_port, require_browser, served, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OIDC_VENV = Path(os.environ.get("RAGSCOPE_OIDC_VENV") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                 / "ragscope" / "oidc-provider-mock-0.3.4")
PAGE_PATHS = ["", "knowledge_graph", "summary_tree", "compare", "inspect", "evaluate", "settings"]
SAMPLE_DOC = "velmora"  # every sample article's name starts with a Velmora place; checked case-insensitively


@pytest.fixture(scope="module")
def oidc(tmp_path_factory):
    """The OIDC provider on a free 127.0.0.1 port; yields its issuer URL."""
    binary = OIDC_VENV / "bin" / "oidc-provider-mock"
    if not binary.exists():
        require_or_skip("oidc", f"the OIDC provider is not installed at {OIDC_VENV}: run bash scripts/install-oidc.sh")
    port = free_port()
    log = tmp_path_factory.mktemp("oidc_log") / "oidc.log"
    issuer = f"http://127.0.0.1:{port}"
    with served([str(binary), "--host", "127.0.0.1", "--port", str(port)],
                issuer + "/.well-known/openid-configuration", log):
        yield issuer


def write_secrets(folder: Path, port: int, oidc: str, users: dict[str, str]) -> Path:
    """``folder/secrets.toml`` for an app on ``port`` signing in through the provider ``oidc``, with each
    user's role (anyone else: none)."""
    roles = "\n".join(f'"{who}" = "{role}"' for who, role in users.items())
    path = folder / "secrets.toml"
    path.write_text(f"""
[auth]
redirect_uri = "http://127.0.0.1:{port}/oauth2callback"
cookie_secret = "{secrets.token_hex(16)}"
client_id = "ragscope-test"
client_secret = "{secrets.token_hex(8)}"
server_metadata_url = "{oidc}/.well-known/openid-configuration"

[ragscope.roles]
default = "none"
[ragscope.roles.users]
{roles}
""", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def app(oidc, tmp_path_factory, sample_workspace_dir):
    """The app with sign-in on (secrets in a temporary file) and the sample corpus as workspace 'default'."""
    require_browser()
    data = tmp_path_factory.mktemp("auth_data")
    shutil.copytree(sample_workspace_dir, data / "default")
    port = free_port()
    secrets_file = write_secrets(tmp_path_factory.mktemp("auth_secrets"), port, oidc,
                                 {"viewer@example.com": "viewer", "editor@example.com": "editor"})
    # batches of ~1,500 tokens: the Cancel test's short documents are indexed one batch each, before the long one
    with streamlit_app(data, tmp_path_factory.mktemp("auth_log"), args=["--secrets.files", str(secrets_file)],
                       port=port, env={"RAGSCOPE_BATCH_TOKENS": "1500"}) as url:
        yield {"url": url, "data": data}


@pytest.fixture(scope="module")
def browser(app):
    with chromium() as launched:
        yield launched


def new_tab(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 950})
    return context, context.new_page()


def main_text(tab) -> str:
    return tab.locator("body").inner_text()


def sign_in(tab, app_url: str, subject: str) -> None:
    """Press Sign in, type the subject on the provider's authorize page, come back to the app."""
    tab.goto(app_url, wait_until="domcontentloaded")
    tab.get_by_role("button", name="Sign in").click(timeout=120_000)
    tab.locator("input[name=sub]").fill(subject, timeout=60_000)
    tab.get_by_role("button", name="Authorize").click()
    tab.wait_for_url(app_url + "/**", timeout=60_000)


def test_unauthenticated_browser_sees_only_the_sign_in_page_on_every_url(app, browser) -> None:
    context, tab = new_tab(browser)
    try:
        for path in PAGE_PATHS:
            tab.goto(f"{app['url']}/{path}", wait_until="domcontentloaded")
            tab.get_by_role("button", name="Sign in").wait_for(timeout=120_000)
            text = main_text(tab)
            assert "Sign in" in text
            assert SAMPLE_DOC not in text.lower(), path
            for absent in ("Document status", "Workspace", "Entities", "Relations"):
                assert absent not in text, (path, absent)
            assert tab.locator("[data-testid='stSidebarNav']").count() == 0
        tab.screenshot(path=str(ARTIFACTS / "auth_signed_out.png"))
    finally:
        context.close()


def test_viewer_browses_but_cannot_change_anything(app, browser) -> None:
    context, tab = new_tab(browser)
    try:
        sign_in(tab, app["url"], "viewer@example.com")
        tab.get_by_role("heading", name="Document status").wait_for(timeout=180_000)
        tab.get_by_text("Signed in as viewer@example.com (viewer)").wait_for(timeout=30_000)
        text = main_text(tab)
        assert "needs the editor role" in text
        for absent in ("Index pasted text", "Load sample corpus", "Index uploaded files", "Delete selected",
                       "Retry failed", "New / delete workspace"):
            assert absent not in text, absent
        nav = tab.locator("[data-testid='stSidebarNav']").inner_text()
        assert "Compare" in nav and "Settings" not in nav
        tab.screenshot(path=str(ARTIFACTS / "auth_viewer.png"))
        tab.goto(f"{app['url']}/settings", wait_until="domcontentloaded")
        tab.get_by_text("Signed in as viewer@example.com").wait_for(timeout=120_000)
        time.sleep(2)
        tab.screenshot(path=str(ARTIFACTS / "auth_viewer_settings_url.png"))
        tab.get_by_text("This page needs the admin role").wait_for(timeout=60_000)  # not "Page not found"
        text = main_text(tab)
        assert "you are a viewer" in text and "Ask the operator for the role" in text, text
        assert "Page not found" not in tab.locator("body").inner_text()
        assert tab.get_by_role("button", name="Save").count() == 0
        assert "Chat model" not in text
        tab.goto(app["url"], wait_until="domcontentloaded")
        tab.get_by_role("button", name="Sign out").click(timeout=120_000)
        # Streamlit ends the provider's session too (OIDC RP-initiated logout): the mock asks to confirm
        tab.get_by_role("button", name="End session").click(timeout=60_000)
        tab.goto(app["url"], wait_until="domcontentloaded")
        tab.get_by_role("button", name="Sign in").wait_for(timeout=120_000)
        assert SAMPLE_DOC not in main_text(tab).lower()  # the app's session cookie is gone
    finally:
        context.close()


def test_editor_indexes_a_pasted_document_but_has_no_settings(app, browser) -> None:
    context, tab = new_tab(browser)
    try:
        sign_in(tab, app["url"], "editor@example.com")
        tab.get_by_text("Signed in as editor@example.com (editor)").wait_for(timeout=180_000)
        nav = tab.locator("[data-testid='stSidebarNav']").inner_text()
        assert "Settings" not in nav
        assert "New / delete workspace" not in main_text(tab)
        # no dead end: the offline-extraction note does not send an editor to a Settings page it lacks
        tab.get_by_text("Extraction: spaCy (offline).").wait_for(timeout=60_000)
        text = main_text(tab)
        assert "ask the operator if you need one" in text and "Choose the OpenAI-compatible provider" not in text
        assert tab.locator("[data-testid='stMain'] a[href*='settings']").count() == 0
        tab.get_by_role("tab", name="Paste text").click()
        tab.get_by_role("textbox", name="Document name").fill("editor-note")
        tab.get_by_role("textbox", name="Text", exact=True).fill("Captain Orla Venn sailed from Port Sallow to Carrow Sound in 1911. "
                                      "The Tidewater Shipping Cooperative praised Orla Venn.")
        tab.get_by_role("button", name="Index pasted text").click()
        tab.get_by_text("Indexed 1 document(s)").wait_for(timeout=600_000)
        tab.get_by_text("12 document(s), most recently changed first").wait_for(timeout=60_000)
        tab.screenshot(path=str(ARTIFACTS / "auth_editor.png"))
    finally:
        context.close()


def test_identity_without_a_role_is_refused(app, browser) -> None:
    context, tab = new_tab(browser)
    try:
        sign_in(tab, app["url"], "stranger@example.com")
        tab.get_by_text("has no role in this deployment").wait_for(timeout=120_000)
        assert SAMPLE_DOC not in main_text(tab).lower()
        tab.get_by_role("button", name="Sign out").wait_for(timeout=60_000)  # drawn after the text: wait, then count
        assert tab.get_by_role("button", name="Sign out").count() == 1
    finally:
        context.close()


def _long_text(sentences: int = 6000) -> str:
    places = ["Port Sallow", "Carrow Sound", "Velmora", "the Tidewater yard", "Brindle Point", "Osk Harbour"]
    people = ["Orla Venn", "Tomas Reeve", "Ida Marrow", "Celeste Orm", "Hal Brandt", "Ysolde Kine"]
    return " ".join(f"In {1850 + i % 90}, {people[i % 6]} carried cargo number {i} from {places[i % 6]} to "
                    f"{places[(i * 5 + 1) % 6]} for {people[(i + 2) % 6]}." for i in range(sentences))


def test_a_viewer_sees_an_editors_run_but_no_cancel(app, browser) -> None:
    editor_context, editor = new_tab(browser)
    viewer_context, viewer = new_tab(browser)
    try:
        sign_in(editor, app["url"], "editor@example.com")
        editor.get_by_text("Signed in as editor@example.com (editor)").wait_for(timeout=180_000)
        editor.get_by_role("tab", name="Paste text").click()
        editor.get_by_role("textbox", name="Document name").fill("long-ledger")
        editor.get_by_role("textbox", name="Text", exact=True).fill(_long_text())
        editor.get_by_role("button", name="Index pasted text").click()
        editor.get_by_role("button", name="Cancel").wait_for(timeout=180_000)  # the run is going

        sign_in(viewer, app["url"], "viewer@example.com")
        viewer.get_by_text("Signed in as viewer@example.com (viewer)").wait_for(timeout=180_000)
        viewer.get_by_text("only an editor or admin can cancel the run").wait_for(timeout=120_000)
        assert "Indexing" in main_text(viewer)
        assert viewer.get_by_role("button", name="Cancel").count() == 0
        time.sleep(2)  # a few redraws of the job panel later: still no Cancel
        assert viewer.get_by_role("button", name="Cancel").count() == 0
        viewer.screenshot(path=str(ARTIFACTS / "auth_viewer_running_job.png"))
    finally:
        viewer_context.close()
        editor_context.close()


def _statuses(data: Path) -> dict[str, str]:
    """The Cancel test's documents and their status, read-only from the served workspace's store."""
    import sqlite3

    db = sqlite3.connect(f"file:{data / 'default' / 'ragscope.sqlite3'}?mode=ro", uri=True)
    try:
        return dict(db.execute("SELECT name, status FROM documents WHERE name LIKE 'cancel-%'").fetchall())
    finally:
        db.close()


def _stop_a_running_job(tab) -> None:
    """An earlier test's run may still be going in this server: its editor's Cancel ends it first."""
    cancel = tab.get_by_role("button", name="Cancel", exact=True)
    if cancel.count():
        cancel.click()
        tab.get_by_text("Indexing cancelled after").first.wait_for(timeout=300_000)


def _wait_for_short_ones(data: Path, timeout_s: float) -> None:
    """Until the store says both short documents are processed while the long one is not (how the run is cut
    into batches is the pipeline's business, so the page's batch counter is not what the test waits for)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            found = _statuses(data)
        except Exception:  # the store is being created or is locked for a write: read again
            found = {}
        if found.get("cancel-a-first.txt") == found.get("cancel-b-second.txt") == "processed":
            assert found.get("cancel-c-long.txt") != "processed", found  # too late to cancel: the test is void
            return
        time.sleep(0.5)
    raise AssertionError(f"the two short documents were not indexed within {timeout_s} s: {_statuses(data)}")


def test_an_editor_cancels_a_run_what_was_done_stays_and_resume_finishes_it(app, browser, tmp_path) -> None:
    files = []
    for name, sentences, cargo in (("cancel-a-first.txt", 70, "salt"), ("cancel-b-second.txt", 70, "timber"),
                                   ("cancel-c-long.txt", 3000, "cargo")):
        path = tmp_path / name  # different texts: an identical one would be registered once
        path.write_text(_long_text(sentences).replace("cargo", cargo), encoding="utf-8")
        files.append(path)
    context, tab = new_tab(browser)
    try:
        sign_in(tab, app["url"], "editor@example.com")
        tab.get_by_text("Signed in as editor@example.com (editor)").wait_for(timeout=180_000)
        time.sleep(2)
        _stop_a_running_job(tab)
        tab.locator('[data-testid="stFileUploader"] input[type="file"][multiple]').set_input_files(
            [str(f) for f in files])
        tab.wait_for_function("() => [...document.querySelectorAll('button')].some(b => "
                              "b.innerText.includes('Index uploaded files') && !b.disabled)", timeout=60_000)
        # the enabled one: while the page re-runs after the upload, the stale disabled button can still be drawn
        tab.locator("button:not([disabled])", has_text="Index uploaded files").first.click()
        _wait_for_short_ones(app["data"], timeout_s=600)  # the two short ones are done, the long one is not
        tab.get_by_role("button", name="Cancel", exact=True).click()
        tab.get_by_text("Indexing cancelled after").first.wait_for(timeout=120_000)
        text = main_text(tab)
        assert "1 document(s) stay pending" in text, text[:3000]
        tab.screenshot(path=str(ARTIFACTS / "auth_editor_cancelled.png"))
        assert _statuses(app["data"]) == {"cancel-a-first.txt": "processed", "cancel-b-second.txt": "processed",
                                          "cancel-c-long.txt": "pending"}  # the table is a canvas: read the store
        tab.get_by_role("button", name="Resume pending").click()
        tab.get_by_text("Indexed 1 document(s)").first.wait_for(timeout=900_000)
        assert "stay pending" not in main_text(tab)
        assert set(_statuses(app["data"]).values()) == {"processed"}
    finally:
        context.close()
