"""The sidebar shown on every page: who is signed in (and Sign out), workspace picker (switch; create and
delete for admins), provider status, counts. Every action goes through ``core.api`` with the session's
principal, so the library refuses what the role may not do even if a control were reached."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from core import api
from core.auth import Role
from ui import state
from ui.errors import escape_markdown, show_errors
from ui.escape import md
from ui.numbers import count

if TYPE_CHECKING:
    from core.api import Workspace

_MESSAGE = "sidebar_message"
LIVE_POLL_S = 1.0


@st.cache_data(show_spinner=False, max_entries=32)
def _cached_status(path: str, generation: int, _ws: Workspace) -> dict[str, Any]:
    """The workspace's counts, cached per workspace path and generation."""
    return api.status(state.principal(), _ws)


def _on_select() -> None:
    state.set_workspace(st.session_state["sidebar_workspace"])
    st.session_state["sidebar_delete_confirm"] = False


def _on_create() -> None:
    name = (st.session_state.get("sidebar_new_workspace") or "").strip()
    if not state.valid_workspace_name(name):
        st.session_state[_MESSAGE] = ("error", "Invalid name: use 1–64 letters, digits, '.', '_' or '-', "
                                               "starting with a letter or digit.")
        return
    try:
        _path, existed = api.create_workspace(state.principal(), name)
    except Exception as exc:  # noqa: BLE001 - shown in the sidebar (a callback cannot use show_errors' layout)
        st.session_state[_MESSAGE] = ("error", f"Not created: {exc}")
        return
    state.set_workspace(name)
    st.session_state["sidebar_delete_confirm"] = False  # a tick given for the workspace left behind
    st.session_state["sidebar_new_workspace"] = ""
    st.session_state[_MESSAGE] = ("info", f"Switched to existing workspace {name}." if existed
                                  else f"Created workspace {name}.")


def _on_delete() -> None:
    name = state.current_workspace_name()
    if not st.session_state.get("sidebar_delete_confirm"):
        st.session_state[_MESSAGE] = ("error", "Tick the confirmation box first.")
        return
    try:
        state.delete_workspace(name)
    except Exception as exc:  # noqa: BLE001 - refused (a running job, the lock, the role): say why
        st.session_state["sidebar_delete_confirm"] = False
        st.session_state[_MESSAGE] = ("error", f"Workspace {name} was not deleted: {exc}")
        return
    st.session_state.pop(f"settings::{name}", None)
    st.session_state.pop(f"growth::{name}", None)
    st.session_state["sidebar_delete_confirm"] = False
    st.session_state[_MESSAGE] = ("info", f"Deleted workspace {name}.")


def _workspace_picker() -> str:
    current = state.current_workspace_name()
    names = state.workspace_names()
    if current not in names:
        names = sorted(set(names) | {current})
    if st.session_state.get("sidebar_workspace") != current:
        st.session_state["sidebar_workspace"] = current
    st.selectbox("Workspace", names, key="sidebar_workspace", on_change=_on_select,
                 help="Each workspace is one folder holding its own index and settings.")
    if not state.can(Role.admin):
        _show_message()
        return current
    with st.expander("New / delete workspace", expanded=False):
        st.text_input("New workspace name", key="sidebar_new_workspace", max_chars=64,
                      placeholder="e.g. my-corpus")
        st.button("Create and switch", key="sidebar_create", on_click=_on_create)
        st.divider()
        st.checkbox(f"Yes, delete workspace {current} and its index", key="sidebar_delete_confirm")
        st.button("Delete workspace", key="sidebar_delete", on_click=_on_delete, type="secondary",
                  disabled=not st.session_state.get("sidebar_delete_confirm"))
    _show_message()
    return current


def _show_message() -> None:
    message = st.session_state.pop(_MESSAGE, None)
    if message:
        (st.error if message[0] == "error" else st.success)(escape_markdown(message[1]))
    problem = state.url_error()
    if problem:
        st.warning(escape_markdown(problem))


def _account() -> None:
    """Who is signed in, their role, and Sign out (only with sign-in on)."""
    if not state.signin_on():
        return
    who = state.principal()
    st.text(f"Signed in as {who.label} ({who.role.name})")  # plain text: an e-mail is not turned into a link
    st.button("Sign out", key="sidebar_logout", on_click=st.logout)


def provider_line(settings: Any, has_key: bool) -> str:
    """Plain-text provider status: offline, or 'LLM: model @ url'."""
    if settings.provider == "offline":
        return "Provider: offline (spaCy graph, extractive answers)"
    model = settings.llm_model or "(no model set)"
    url = settings.llm_base_url or "(no base URL set)"
    return f"LLM: {model} @ {url}" + ("" if has_key else " — no API key in this session")


def _counts(ws: Workspace, live: bool = False) -> None:
    from ui.counters import workspace_counts

    status = workspace_counts(ws)  # the same numbers as the Documents page at the same moment
    left, right = st.columns(2)
    left.metric("Documents", count(status["processed"]), help="Indexed documents (as on the Documents page); documents "
                "waiting to be indexed are counted below, failed ones under Failed.")
    right.metric("Chunks", count(status["chunks"]))
    left.metric("Entities", count(status["entities"]))
    right.metric("Relations", count(status["relations"]))
    left.metric("Summaries", count(status["tree_nodes"]))
    right.metric("Failed", count(status["failed"]))
    if status["pending"]:
        st.caption(f"{count(status['pending'])} document(s) waiting to be indexed")


def render_sidebar() -> None:
    """Draw the sidebar; problems (a corrupt workspace, a bad settings file) show as messages."""
    with st.sidebar:
        st.markdown("### RAGScope")
        with show_errors("Account"):
            _account()
        with show_errors("Workspace list"):
            _workspace_picker()
        with show_errors("Settings"):
            settings = state.session_settings()
            st.text(provider_line(settings, bool(state.api_key())))
            server = (f" ({settings.embedding_model} at {settings.embedding_base_url or 'the OpenAI API'})"
                      if settings.embedder == "openai" else "")
            st.text(f"Embedder: {settings.embedder}{server}")
        with show_errors("Workspace"):
            _live_counts()
            notice = state.generation_notice()
            if notice:
                st.info(md(notice))
                st.toast(md(notice))


def _indexing() -> bool:
    job = st.session_state.get("doc_job")  # the Documents page's background indexing job
    return bool(job is not None and getattr(job, "running", False))


def _live_counts() -> None:
    """The counts; while an indexing job runs they are redrawn every second (a fragment), uncached,
    so they grow with the Documents page's counters instead of staying at their first value."""
    if not _indexing():
        _counts(state.workspace())
        return

    @st.fragment(run_every=LIVE_POLL_S)
    def live() -> None:
        running = _indexing()
        _counts(state.workspace(), live=True)
        if running:
            st.caption("Indexing… (counts update live)")
        else:
            st.rerun()  # the job ended: one full rerun draws the final numbers and stops the polling

    live()
