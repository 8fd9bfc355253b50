"""Two real browser sessions on one app (issue 20), in headless Chromium through Playwright.

The app runs in local mode (no sign-in) over two workspaces whose LLM and embeddings server is a
recording fake on 127.0.0.1 (tests/fake_openai.py), started from ``tests/hooked_streamlit.py`` so that
an indexing batch can be made to pause inside its unit of work and then fail:

* the server's first visit opens ``/settings`` by its URL: the page still runs through app.py.
* ``keys``: two browser contexts (two Streamlit sessions) type different API keys on Settings and run
  Compare at the same time with LLM answers; every request the fake server receives for a tab's
  question (question embedding, keyword extraction, answers) carries that tab's key, and no request
  carries a key that no tab typed.
* ``batch``: one session indexes a pasted document whose batch pauses with its rows written but not
  committed, then fails and rolls back; meanwhile a second session reads the Knowledge graph page and
  the sidebar counters: it never shows the doomed entities or counts, neither during the pause nor
  after the rollback. Deleting the workspace from the second session while the job runs is refused
  with a message that says why, and the workspace is still there.

Screenshots go to ``RAGSCOPE_SCREENSHOT_DIR`` (default ``test-artifacts/``).
"""
from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest

from browser_harness import ARTIFACTS, chromium, idle, open_page, require_browser, streamlit_app

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_openai import FakeOpenAI  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]

KEYS = {"tab_a": "sk-tab-a-7777", "tab_b": "sk-tab-b-8888"}
QUESTIONS = {"tab_a": "Which engine did Charles Babbage design?", "tab_b": "Where did Ada Lovelace work?"}
COMMITTED = ("Ada Lovelace worked with Charles Babbage in London. Babbage designed the Analytical Engine "
             "at Cambridge. Lovelace wrote notes on the Analytical Engine.")
DOOMED = ("Grace Hopper built the first compiler at Remington Rand in Philadelphia. Hopper later joined "
          "the United States Navy in Arlington. Howard Aiken led the Harvard Mark I project in Boston.")
DOOMED_NAMES = ("Grace Hopper", "Remington Rand", "Howard Aiken", "Philadelphia", "Arlington")


@pytest.fixture(scope="module")
def fake():
    server = FakeOpenAI()
    yield server
    server.close()


def _workspace(root: Path, name: str, fake: FakeOpenAI, provider: str) -> dict:
    """A workspace indexed here (spaCy extraction, the fake embeddings server), its settings saved."""
    from core import api
    from core.auth import LOCAL_ADMIN
    from core.session import session_handle
    from core.settings import Settings, save_settings
    from core.workspace import Workspace

    settings = Settings(provider=provider, llm_base_url=fake.url, llm_model="fake-model", llm_max_retries=0,
                        embedder="openai", embedding_base_url=fake.url, embedding_model="fake-model")
    ws = Workspace(root / name, settings=settings)
    try:
        api.index_text(LOCAL_ADMIN, session_handle(ws, "sk-indexer"), "committed.txt", COMMITTED)
        save_settings(ws.path, settings)
        status = api.status(LOCAL_ADMIN, ws)
        names = {data.get("name") or node for node, data in ws.knowledge_graph().nodes(data=True)}
    finally:
        ws.close()
    assert status["entities"] > 0 and status["processed"] == 1
    return {"status": status, "names": names}


@pytest.fixture(scope="module")
def app(fake, tmp_path_factory):
    require_browser()
    root = tmp_path_factory.mktemp("sessions_data")
    before = {"keys": _workspace(root, "keys", fake, "openai"), "batch": _workspace(root, "batch", fake, "offline")}
    assert not any(n in name for n in DOOMED_NAMES for name in before["batch"]["names"])
    hook = tmp_path_factory.mktemp("sessions_hook")
    fake.reset()
    with streamlit_app(root, tmp_path_factory.mktemp("sessions_log"),
                       env={"RAGSCOPE_TEST_HOOK_DIR": str(hook), "OPENAI_API_KEY": ""},
                       args=["--server.fileWatcherType", "none"],
                       launcher=[sys.executable, str(Path(__file__).resolve().parent / "hooked_streamlit.py")],
                       fail_on_traceback=False) as url:
        yield {"url": url, "root": root, "hook": hook, "before": before}


@pytest.fixture(scope="module")
def browser(app):
    with chromium() as launched:
        yield launched


def new_session(browser, url: str):
    """A browser context of its own: its own cookies, so its own Streamlit session."""
    context = browser.new_context(viewport={"width": 1400, "height": 950})
    tab = context.new_page()
    tab.goto(url, wait_until="domcontentloaded")
    tab.get_by_role("heading", name="Documents").first.wait_for(timeout=180_000)
    idle(tab)
    return context, tab


def test_a_page_url_opened_first_still_goes_through_the_app(app, browser):
    """The server's very first visit opens a page by its URL (found by hand: Streamlit's old
    pages-folder mode ran the page alone, without app.py's gate, sidebar and navigation)."""
    context = browser.new_context(viewport={"width": 1400, "height": 950})
    try:
        tab = context.new_page()
        tab.goto(app["url"] + "/settings?workspace=keys", wait_until="domcontentloaded")
        tab.get_by_role("heading", name="Settings").first.wait_for(timeout=180_000)
        tab.locator('[data-testid="stSidebar"]').get_by_text("RAGScope", exact=True).wait_for(timeout=180_000)
        idle(tab)
        tab.screenshot(path=str(ARTIFACTS / "sessions_first_visit_settings.png"))
        nav = tab.locator('[data-testid="stSidebarNav"]').inner_text().split("\n")
        assert "Documents" in nav and "Settings" in nav and "app" not in nav, nav  # app.py's navigation
    finally:
        context.close()


def test_two_tabs_each_send_their_own_key(app, browser, fake):
    tabs = {who: new_session(browser, app["url"] + "/?workspace=keys") for who in KEYS}
    try:
        for who, (_context, tab) in tabs.items():
            open_page(tab, "Settings", "Settings")
            field = tab.get_by_role("textbox", name="API key")
            field.fill(KEYS[who])
            field.press("Enter")
            idle(tab)
            open_page(tab, "Compare", "Compare retrieval modes")
            box = tab.get_by_label("Question", exact=True)
            box.fill(QUESTIONS[who])
            box.press("Control+Enter")
            idle(tab)
        fake.reset()
        for who, (_context, tab) in tabs.items():  # both run at once on the server
            tab.get_by_role("button", name="Run", exact=True).click()
        for who, (_context, tab) in tabs.items():
            tab.get_by_text(re.compile(r"Ran \d+ mode\(s\)")).first.wait_for(timeout=900_000)
            idle(tab)
            tab.screenshot(path=str(ARTIFACTS / f"sessions_{who}_compare.png"))
            assert tab.get_by_text("the offline path is used").count() == 0  # the LLM was used
    finally:
        for context, _tab in tabs.values():
            context.close()
    with fake.lock:
        requests = list(fake.requests)
    typed = {f"Bearer {key}" for key in KEYS.values()}
    assert requests and {r["auth"] for r in requests if r["path"] != "/props"} <= typed, \
        {r["auth"] for r in requests}
    for who, key in KEYS.items():
        mine = [r for r in requests if QUESTIONS[who] in repr(r["body"])]
        kinds = {("embeddings" if r["path"].endswith("/embeddings") else "chat") for r in mine}
        assert kinds == {"embeddings", "chat"}, (who, kinds)  # the check is not vacuous
        assert {r["auth"] for r in mine} == {f"Bearer {key}"}, who


def sidebar_metric(tab, label: str) -> int:
    metric = tab.locator('[data-testid="stSidebar"] [data-testid="stMetric"]').filter(has_text=label).first
    return int(metric.locator('[data-testid="stMetricValue"]').inner_text().replace(",", "").strip())


def graph_text(tab) -> str:
    """What the Knowledge graph page shows and holds: its text plus every graph iframe's document."""
    parts = [tab.locator("body").inner_text()]
    for frame in tab.frames[1:]:
        try:
            parts.append(frame.content())
        except Exception:  # noqa: BLE001 - a frame that went away while reading
            continue
    return "\n".join(parts)


def read_graph(tab, url: str) -> tuple[str, dict[str, int]]:
    """Open the Knowledge graph page afresh (a new page load: a new read of the workspace)."""
    tab.goto(url + "/knowledge_graph?workspace=batch", wait_until="domcontentloaded")
    tab.get_by_role("heading", name="Knowledge graph").first.wait_for(timeout=180_000)
    idle(tab)
    tab.locator("iframe").first.wait_for(timeout=120_000)
    tab.wait_for_timeout(1500)
    counts = {label: sidebar_metric(tab, label) for label in ("Chunks", "Entities", "Relations")}
    return graph_text(tab), counts


def wait_file(path: Path, timeout_s: float) -> None:
    deadline = time.time() + timeout_s
    while not path.exists():
        assert time.time() < deadline, f"{path.name} never appeared"
        time.sleep(0.5)


def test_a_reader_never_sees_a_failing_batch_and_cannot_delete_during_it(app, browser):
    before = app["before"]["batch"]["status"]
    committed = {"Chunks": before["chunks"], "Entities": before["entities"], "Relations": before["relations"]}
    hook = app["hook"]
    writer_context, writer = new_session(browser, app["url"] + "/?workspace=batch")
    reader_context, reader = new_session(browser, app["url"] + "/?workspace=batch")
    try:
        text, counts = read_graph(reader, app["url"])
        assert counts == committed and "Ada Lovelace" in text  # the reader sees the committed graph
        (hook / "armed").touch()
        writer.get_by_role("tab", name="Paste text").click()
        writer.get_by_role("textbox", name="Document name").fill("doomed")
        writer.get_by_role("textbox", name="Text", exact=True).fill(DOOMED)
        writer.get_by_role("button", name="Index pasted text").click()
        wait_file(hook / "inside", 900)  # the batch's rows are written, not committed

        text, counts = read_graph(reader, app["url"])  # a fresh read while the batch is open
        reader.screenshot(path=str(ARTIFACTS / "sessions_reader_during_batch.png"))
        assert counts == committed
        assert not [n for n in DOOMED_NAMES if n in text]

        sidebar = reader.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("New / delete workspace").click()
        confirm = sidebar.get_by_role("checkbox", name="Yes, delete workspace batch and its index")
        delete = sidebar.get_by_role("button", name="Delete workspace")
        for _ in range(3):  # on a loaded machine a rerun can swallow the tick: tick again until Delete is enabled
            if not confirm.is_checked():
                sidebar.get_by_text("Yes, delete workspace batch and its index").click()
            idle(reader)
            try:
                delete.wait_for(state="visible", timeout=30_000)
                reader.wait_for_function("b => !b.disabled", arg=delete.element_handle(), timeout=30_000)
                break
            except Exception:  # noqa: BLE001 - playwright's TimeoutError: try the tick once more
                continue
        delete.click()
        refusal = sidebar.get_by_text("Workspace batch was not deleted")
        refusal.wait_for(timeout=120_000)
        message = refusal.inner_text()
        reader.screenshot(path=str(ARTIFACTS / "sessions_delete_refused.png"))
        assert "being indexed" in message and "wait for the job to finish or cancel it" in message, message
        assert (app["root"] / "batch" / "settings.json").exists()

        (hook / "armed").unlink()
        (hook / "release").touch()  # the batch fails now and rolls back
        writer.get_by_text("1 failed.").first.wait_for(timeout=600_000)
        writer.screenshot(path=str(ARTIFACTS / "sessions_writer_failed.png"))
        idle(writer)  # the rerun that ends the run keeps the writer on the tab it used (it once snapped back)
        assert writer.get_by_role("tab", name="Paste text").get_attribute("aria-selected") == "true"
        assert writer.get_by_role("button", name="Index pasted text").is_visible()

        text, counts = read_graph(reader, app["url"])
        assert counts == committed
        assert not [n for n in DOOMED_NAMES if n in text]
    finally:
        writer_context.close()
        reader_context.close()
