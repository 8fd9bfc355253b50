"""AppTest of the sign-in gate and the role-dependent pages (issue 20), and the workspace kept in the URL
(issue 25).

* Started on a non-loopback address without ``[auth]``, every page shows only the refusal. (The test
  sets Streamlit's ``server.address`` option in-process: nothing binds a public interface.)
* With sign-in configured and nobody signed in, every page shows only the sign-in page.
* A viewer sees no upload, paste, delete or workspace controls and is refused Settings; an editor sees the
  upload controls but is refused Settings (which the navigation hides from non-admins: see the browser test); the library refuses a viewer's delete even if the page were bypassed.
  (The signed-in identity is injected here; tests/test_browser_auth.py signs in through a real provider.)
* ``?workspace=NAME`` opens that workspace on a fresh session; a bad or forbidden name is refused with a
  warning and the default workspace opens.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from core.auth import Principal, Role

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["pages/documents.py", "pages/knowledge_graph.py", "pages/summary_tree.py", "pages/compare.py",
         "pages/inspect.py", "pages/evaluate.py", "pages/settings.py"]
TIMEOUT = 300


@pytest.fixture()
def data_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "workspaces"
    folder.mkdir()
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(folder))
    for name in ("RAGSCOPE_WORKSPACE", "RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "RAGSCOPE_ROLES"):
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.fixture()
def address():
    """Set Streamlit's server.address for the test (restored afterwards)."""
    before = st_config.get_option("server.address")
    details = st_config.get_option("client.showErrorDetails")

    def set_address(value):
        st_config.set_option("server.address", value)

    yield set_address
    st_config.set_option("server.address", before)
    st_config.set_option("client.showErrorDetails", details)


def texts(at: AppTest) -> str:
    parts = [e.value for e in at.error] + [e.value for e in at.markdown] + [e.value for e in at.info]
    parts += [e.value for e in at.title] + [b.label for b in at.button]
    return "\n".join(map(str, parts)).replace("\\", "")  # Markdown escapes removed


def run_page(page: str, query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if page != PAGES[0]:
        at.switch_page(page)
        at.run()
    return at


@pytest.mark.parametrize("page", PAGES)
def test_non_loopback_without_signin_shows_only_the_refusal(data_dir, address, page) -> None:
    address("0.0.0.0")
    at = run_page(page)
    assert not at.exception, [e.value for e in at.exception]
    shown = texts(at)
    assert "without sign-in" in shown and "[auth]" in shown
    assert not at.sidebar.selectbox  # no workspace picker, no counts
    assert "Document status" not in shown and len(at.title) == 1
    assert not list(data_dir.iterdir())  # nothing was opened or created
    assert st_config.get_option("client.showErrorDetails") == "none"  # no tracebacks outside local mode


def test_loopback_without_signin_is_the_local_tool(data_dir, address) -> None:
    address("127.0.0.1")
    at = run_page(PAGES[0])
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.sidebar.selectbox(key="sidebar_workspace").value == "default"
    assert at.text_area(key="doc_paste_text") is not None


@pytest.fixture()
def signed_in(monkeypatch, address):
    """Sign-in configured; ``as_(principal or None)`` sets who is signed in (None: nobody)."""
    from ui import state

    address("0.0.0.0")  # a shared server: sign-in makes it allowed
    monkeypatch.setattr(state, "signin_on", lambda: True)

    def as_(principal: Principal | None) -> None:
        monkeypatch.setattr(state, "signed_in", lambda: principal is not None)
        if principal is None:
            def nobody() -> Principal:
                from core.errors import PermissionDeniedError

                raise PermissionDeniedError("Sign in first.")

            monkeypatch.setattr(state, "principal", nobody)
        else:
            monkeypatch.setattr(state, "principal", lambda: principal)

    return as_


def assert_settings_refused(at: AppTest) -> None:
    """Settings is not in a non-admin's navigation, and the page run on its own refuses too."""
    with pytest.raises(ValueError, match="navigation page"):
        at.switch_page("pages/settings.py")
    alone = AppTest.from_file(str(ROOT / "pages" / "settings.py"), default_timeout=TIMEOUT).run()
    assert not alone.exception
    assert "settings_save" not in {b.key for b in alone.button}
    assert any("needs the admin role" in e.value for e in alone.error), [e.value for e in alone.error]


@pytest.mark.parametrize("page", PAGES)
def test_signed_out_visitor_sees_only_the_sign_in_page(data_dir, signed_in, page) -> None:
    signed_in(None)
    at = run_page(page)
    assert not at.exception, [e.value for e in at.exception]
    assert [b.label for b in at.button] == ["Sign in"]
    assert not at.sidebar.selectbox
    assert "Document status" not in texts(at)


def test_viewer_sees_no_write_controls_and_the_library_refuses_anyway(data_dir, signed_in, sample_workspace_dir):
    from core import api
    from core.errors import PermissionDeniedError
    from core.workspace import Workspace

    shutil.copytree(sample_workspace_dir, data_dir / "default")
    viewer = Principal("v", "viewer@example.com", Role.viewer)
    signed_in(viewer)
    at = run_page(PAGES[0])
    assert not at.exception and not at.error, [e.value for e in at.error]
    keys = {w.key for w in at.button} | {w.key for w in at.text_area} | {w.key for w in at.multiselect}
    assert not keys & {"doc_load_samples", "doc_index_uploads", "doc_paste_index", "doc_paste_text", "doc_delete",
                       "doc_delete_select", "doc_retry", "doc_resume"}
    assert "needs the editor role" in texts(at)
    tables = [d.value for d in at.dataframe if "status" in d.value.columns]
    assert tables and len(tables[0]) == 11  # the sample corpus's documents are still listed
    assert "sidebar_create" not in {b.key for b in at.sidebar.button}
    assert "Signed in as viewer@example.com (viewer)" in [t.value for t in at.sidebar.text]
    assert_settings_refused(at)
    ws = Workspace(data_dir / "default")
    try:
        doc_id = api.documents(viewer, ws)[0].doc_id
        with pytest.raises(PermissionDeniedError):
            api.delete(viewer, ws, [doc_id])
        assert doc_id in {d.doc_id for d in api.documents(viewer, ws)}
    finally:
        ws.close()


def test_editor_sees_upload_but_not_settings_or_workspace_admin(data_dir, signed_in) -> None:
    signed_in(Principal("e", "editor@example.com", Role.editor))
    at = run_page(PAGES[0])
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "doc_paste_index" in {b.key for b in at.button}
    assert "sidebar_create" not in {b.key for b in at.sidebar.button}
    assert_settings_refused(at)


# --- the workspace in the URL (issue 25) ---------------------------------------------------------
def test_workspace_from_the_url_opens_on_a_fresh_session(data_dir, address) -> None:
    address("127.0.0.1")
    (data_dir / "proj").mkdir()
    (data_dir / "default").mkdir()
    at = run_page(PAGES[0], {"workspace": "proj"})
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["workspace_name"] == "proj"
    assert at.sidebar.selectbox(key="sidebar_workspace").value == "proj"
    assert at.query_params["workspace"] == ["proj"] or at.query_params["workspace"] == "proj"
    at.sidebar.selectbox(key="sidebar_workspace").select("default").run()
    assert at.query_params["workspace"] in ("default", ["default"])  # a switch is written back to the URL


@pytest.mark.parametrize("bad", ["../outside", "/etc", "no such/name"])
def test_bad_workspace_in_the_url_is_refused(data_dir, address, bad) -> None:
    address("127.0.0.1")
    at = run_page(PAGES[0], {"workspace": bad})
    assert not at.exception
    assert at.session_state["workspace_name"] == "default"
    assert any("was not opened" in w.value for w in at.sidebar.warning), [w.value for w in at.sidebar.warning]
    assert sorted(p.name for p in data_dir.iterdir()) == ["default"]


@pytest.mark.parametrize("role", [Role.viewer, Role.admin])
def test_a_workspace_named_only_in_the_url_is_not_created(data_dir, signed_in, role) -> None:
    """An address naming a workspace that does not exist opens the fallback and says why; no folder is
    made, whatever the role (an admin creates workspaces in the sidebar)."""
    (data_dir / "default").mkdir()
    signed_in(Principal("v", "v@example.com", role))
    at = run_page(PAGES[0], {"workspace": "typedname"})
    assert not at.exception
    assert at.session_state["workspace_name"] == "default"
    assert any("no workspace named “typedname” exists" in w.value for w in at.sidebar.warning), \
        [w.value for w in at.sidebar.warning]
    assert sorted(p.name for p in data_dir.iterdir()) == ["default"]


def test_forbidden_workspace_in_the_url_is_refused(data_dir, signed_in) -> None:
    (data_dir / "team").mkdir()
    (data_dir / "secret").mkdir()
    signed_in(Principal("t", "t@example.com", Role.viewer, frozenset({"team"})))
    at = run_page(PAGES[0], {"workspace": "secret"})
    assert not at.exception
    assert at.session_state["workspace_name"] == "team"
    assert any("may not open" in w.value for w in at.sidebar.warning)
    assert at.sidebar.selectbox(key="sidebar_workspace").options == ["team"]
