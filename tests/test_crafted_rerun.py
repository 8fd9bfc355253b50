"""A signed-in viewer who scripts Streamlit's websocket protocol cannot do what the pages hide (issue 38).

Hiding a page or a button is not a defence on its own: a browser session is a websocket, and a client
can send any rerun (any page name, any widget ids and values). Here three identities sign in through
the real OIDC provider in Chromium (as tests/test_browser_auth.py does); their session cookies are then
used by a plain websocket client (``tests/streamlit_ws.py``) that sends crafted reruns:

* Settings (admin only): the naive top-k changed and Save pressed, with the widget ids an admin's own
  session drew;
* the sidebar's "Create and switch" (admin only) with a new workspace name;
* the Knowledge graph's edit history "Undo" (editor and up) of an edit made before the server started;
* Documents' "Index pasted text" (editor and up) with a name and a text, and "Load sample corpus".

For each, the viewer's crafted rerun changes nothing on disk (settings file, workspace folders, the
edit log, the documents table), and then the *same* crafted message from an identity that has the role
does change it — the positive control that shows the message is a working request, so the viewer's is
refused by the server (Streamlit keeps no state for a widget a session was never shown, and ``core.api``
checks the role again), not ignored as malformed. Each viewer session is also checked to be signed in
(it drew "Sign out"), so the refusal is not the signed-out page's.

Fails instead of skipping when ``RAGSCOPE_REQUIRE`` names ``oidc`` (or ``browser``, or ``all``).
"""
from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

from browser_harness import chromium, free_port, require_browser, streamlit_app
from streamlit_ws import connect, run_page
from test_browser_auth import oidc, sign_in, write_secrets  # noqa: F401 - the provider fixture, shared

pytestmark = [pytest.mark.browser, pytest.mark.slow]

USERS = {"viewer@example.com": "viewer", "editor@example.com": "editor", "admin@example.com": "admin"}


@pytest.fixture(scope="module")
def app(oidc, tmp_path_factory, sample_workspace_dir):  # noqa: F811 - oidc is the imported fixture
    """The app with sign-in on over a copy of the sample workspace, with one graph edit (a rename) made
    before the server starts, so the edit history shows an Undo button."""
    from core import api
    from core.auth import LOCAL_ADMIN
    from core.workspace import Workspace

    require_browser()
    data = tmp_path_factory.mktemp("crafted_data")
    shutil.copytree(sample_workspace_dir, data / "default")
    ws = Workspace(data / "default")
    try:
        name = _an_entity(ws)
        api.edit_graph(LOCAL_ADMIN, ws, "rename", {"name": name, "to": name + " (renamed)"})
    finally:
        ws.close()
    port = free_port()
    secrets_file = write_secrets(tmp_path_factory.mktemp("crafted_secrets"), port, oidc, USERS)
    with streamlit_app(data, tmp_path_factory.mktemp("crafted_log"), args=["--secrets.files", str(secrets_file)],
                       port=port) as url:
        yield {"url": url, "data": data}


def _an_entity(ws: Any) -> str:
    db = sqlite3.connect(f"file:{ws.path / 'ragscope.sqlite3'}?mode=ro", uri=True)
    try:
        return str(db.execute("SELECT name FROM entities ORDER BY name LIMIT 1").fetchone()[0])
    finally:
        db.close()


@pytest.fixture(scope="module")
def cookies(app) -> dict[str, dict[str, str]]:
    """Each identity's browser cookies after signing in through the provider in Chromium."""
    found = {}
    with chromium() as browser:
        for who in USERS:
            context = browser.new_context()
            try:
                tab = context.new_page()
                sign_in(tab, app["url"], who)
                tab.get_by_text(f"Signed in as {who}").wait_for(timeout=180_000)
                found[who] = {c["name"]: c["value"] for c in context.cookies(app["url"])}
            finally:
                context.close()
    for who, jar in found.items():
        assert any(name.startswith("_streamlit_user") for name in jar), (who, sorted(jar))
    return found


def _widgets(app, jar: dict[str, str], page: str) -> dict[str, tuple[str, str]]:
    """The widgets (label -> kind, id) a session with the cookies ``jar`` is drawn on ``page``."""
    conn = connect(app["url"], jar)
    try:
        return run_page(conn, page)
    finally:
        conn.close()


def _crafted(app, jar: dict[str, str], page: str, make_states: Callable[[], list],
             alerts: Optional[list[str]] = None) -> dict[str, tuple[str, str]]:
    """A session with the cookies ``jar`` opens ``page`` as a tab does, then sends one crafted rerun of
    it with ``make_states()``; returns the widgets of that rerun (its alerts appended to ``alerts``)."""
    conn = connect(app["url"], jar)
    try:
        first = run_page(conn, page)
        assert "Sign out" in first and "Sign in" not in first, sorted(first)  # signed in
        return run_page(conn, page, states=make_states(), alerts=alerts)
    finally:
        conn.close()


def _state(widget: tuple[str, str], **value: Any) -> Any:
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    return WidgetState(id=widget[1], **value)


def _wait_until(check: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.5)
    return check()


def _read(data: Path, sql: str) -> list[tuple]:
    db = sqlite3.connect(f"file:{data / 'default' / 'ragscope.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def _settings_bytes(data: Path) -> bytes:
    path = data / "default" / "settings.json"
    return path.read_bytes() if path.exists() else b""


def test_a_viewers_crafted_save_of_settings_changes_nothing(app, cookies) -> None:
    from ui.settings_labels import label_for

    admin_view = _widgets(app, cookies["admin@example.com"], "settings")
    top_k, save = admin_view[label_for("naive_top_k")], admin_view["Save"]
    states = lambda: [_state(top_k, double_value=17), _state(save, trigger_value=True)]  # noqa: E731
    before = _settings_bytes(app["data"])

    drawn = _crafted(app, cookies["viewer@example.com"], "settings", states)
    assert "Save" not in drawn and label_for("naive_top_k") not in drawn
    time.sleep(2)
    assert _settings_bytes(app["data"]) == before

    _crafted(app, cookies["admin@example.com"], "settings", states)  # the same message from an admin saves
    assert _wait_until(lambda: b'"naive_top_k": 17' in _settings_bytes(app["data"]).replace(b'":17', b'": 17'),
                       30), _settings_bytes(app["data"])[:400]


def test_a_viewers_crafted_workspace_creation_creates_nothing(app, cookies) -> None:
    admin_view = _widgets(app, cookies["admin@example.com"], "")
    name_box, create = admin_view["New workspace name"], admin_view["Create and switch"]

    def states(name: str) -> Callable[[], list]:
        return lambda: [_state(name_box, string_value=name), _state(create, trigger_value=True)]

    _crafted(app, cookies["viewer@example.com"], "", states("crafted-by-viewer"))
    time.sleep(2)
    assert not (app["data"] / "crafted-by-viewer").exists()

    _crafted(app, cookies["admin@example.com"], "", states("crafted-by-admin"))
    assert _wait_until(lambda: (app["data"] / "crafted-by-admin").exists(), 30)


def test_a_viewers_crafted_undo_of_a_graph_edit_changes_nothing(app, cookies) -> None:
    assert _read(app["data"], "SELECT undone FROM graph_edits") == [(0,)]
    editor_view = _widgets(app, cookies["editor@example.com"], "knowledge_graph")
    undo = editor_view["Undo"]
    states = lambda: [_state(undo, trigger_value=True)]  # noqa: E731

    drawn = _crafted(app, cookies["viewer@example.com"], "knowledge_graph", states)
    assert "Undo" not in drawn
    time.sleep(2)
    assert _read(app["data"], "SELECT undone FROM graph_edits") == [(0,)]

    said: list[str] = []
    _crafted(app, cookies["editor@example.com"], "knowledge_graph", states, said)  # an editor's Undo works
    assert _wait_until(lambda: _read(app["data"], "SELECT undone FROM graph_edits") == [(1,)], 60), said


def test_a_viewers_crafted_indexing_registers_nothing(app, cookies) -> None:
    editor_view = _widgets(app, cookies["editor@example.com"], "")
    name_box, text_box = editor_view["Document name"], editor_view["Text"]
    paste, samples = editor_view["Index pasted text"], editor_view["Load sample corpus"]
    documents = lambda: _read(app["data"], "SELECT name FROM documents ORDER BY name")  # noqa: E731
    before = documents()

    def states(name: str, with_samples: bool) -> Callable[[], list]:
        return lambda: [_state(name_box, string_value=name),
                        _state(text_box, string_value="Captain Orla Venn sailed to Carrow Sound in 1911."),
                        _state(paste, trigger_value=True)] + ([_state(samples, trigger_value=True)] if with_samples else [])

    drawn = _crafted(app, cookies["viewer@example.com"], "", states("crafted-by-viewer", True))
    assert "Index pasted text" not in drawn and "Load sample corpus" not in drawn
    time.sleep(3)
    assert documents() == before

    said: list[str] = []
    _crafted(app, cookies["editor@example.com"], "", states("crafted-by-editor", False), said)  # an editor's is indexed
    assert _wait_until(lambda: ("crafted-by-editor.txt",) in documents(), 120), said


def _chunk_ids(data: Path) -> list[tuple]:
    return _read(data, "SELECT chunk_id FROM chunks ORDER BY chunk_id")


def _settled(data: Path) -> bool:
    """No document of the workspace waits or is being indexed."""
    return _read(data, "SELECT count(*) FROM documents WHERE status IN ('pending', 'processing')") == [(0,)]


def test_a_viewers_crafted_reindex_changes_nothing(app, cookies) -> None:
    """The re-index offer (Settings, after a save changed the chunk size; ``core.api.reindex``, editor and
    up). An admin's session draws it after saving a new chunk size; the viewer sends that session's chunk
    size, Save and Re-index presses in one rerun and nothing changes (settings file, chunks). Then the
    admin's own press of the drawn button re-cuts every document. Last in this file: it re-indexes."""
    from ui.settings_labels import label_for

    admin = cookies["admin@example.com"]
    first = _widgets(app, admin, "settings")
    chunk_box, save = first[label_for("chunk_tokens")], first["Save"]
    data = app["data"]
    # an earlier test's entitled control (pasted text, the sample) may still be indexing in the server: start
    # from a workspace where nothing waits and the chunks stay put
    assert _wait_until(lambda: _settled(data) and _chunk_ids(data) == (time.sleep(2) or _chunk_ids(data)), 900)
    settings_before, chunks_before = _settings_bytes(data), _chunk_ids(data)
    new_size = lambda: _state(chunk_box, double_value=300)  # noqa: E731 - a number input's value is a double

    conn = connect(app["url"], admin)  # the admin saves a new chunk size: the offer is drawn
    try:
        run_page(conn, "settings", states=[new_size(), _state(save, trigger_value=True)])
        assert _wait_until(lambda: _settings_bytes(data) != settings_before, 30)
        offered = run_page(conn, "settings", states=[new_size()])
        button = next((w for label, w in offered.items() if label.startswith("Re-index ")), None)
        assert button is not None, sorted(offered)
        saved = _settings_bytes(data)

        drawn = _crafted(app, cookies["viewer@example.com"], "settings",
                         lambda: [_state(chunk_box, double_value=200), _state(save, trigger_value=True),
                                  _state(button, trigger_value=True)])
        assert not [label for label in drawn if label.startswith("Re-index ") or label == "Save"], sorted(drawn)
        time.sleep(3)
        assert _settings_bytes(data) == saved and _chunk_ids(data) == chunks_before  # refused: nothing changed

        said: list[str] = []
        run_page(conn, "settings", states=[new_size(), _state(button, trigger_value=True)], alerts=said)
    finally:
        conn.close()
    assert _wait_until(lambda: _chunk_ids(data) != chunks_before and _settled(data), 900), said  # re-cut
