"""Session state of the app: data folder, current workspace (cached resource), settings, LLM key.

The data folder is ``core.config.data_dir()`` (``RAGSCOPE_DATA_DIR``, default ``data/workspaces``). Workspaces are cached
with ``st.cache_resource`` keyed by path; derived tables use ``st.cache_data`` keyed by the
workspace's generation, so they refresh after every write.

Writes from outside the app (``python -m core index`` while the app is open): the SQLite tables
show them at once, but an embedded ChromaDB store opened earlier keeps its old index in memory.
``workspace()`` therefore remembers the generation it last saw per workspace; when the generation
moved and no writer is active (no indexing job of this app, no write lock held), it reopens the
vector store, so the next query searches the new vectors too, and says so once
(``generation_notice``). While another process is still writing, it says the results may be stale.
"""
from __future__ import annotations

import os
import re
import shutil
import threading
from pathlib import Path
from typing import Optional

import streamlit as st

from core.config import data_dir as configured_data_dir
from core.config import default_workspace_name, list_workspaces, load_settings
from core.settings import Settings
from core.workspace import Workspace

_NAME_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_SEEN: dict[str, int] = {}  # workspace path -> generation its vector store was last (re)opened at
_SEEN_LOCK = threading.Lock()
NOTICE_KEY = "workspace_generation_notice"


def data_dir() -> Path:
    path = configured_data_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path


def workspace_names() -> list[str]:
    data_dir()  # created on first use
    return list_workspaces() or ["default"]


def valid_workspace_name(name: str) -> bool:
    return bool(_NAME_OK.match(name or ""))


def current_workspace_name() -> str:
    name = st.session_state.get("workspace_name") or default_workspace_name()
    st.session_state["workspace_name"] = name
    return name


def set_workspace(name: str) -> None:
    st.session_state["workspace_name"] = name


@st.cache_resource(show_spinner="Opening workspace…", max_entries=8)
def _open(path: str, settings_json: str) -> Workspace:
    return Workspace(Path(path), settings=Settings.model_validate_json(settings_json))


def session_settings(name: Optional[str] = None) -> Settings:
    """Settings of the current workspace: the saved file plus unsaved session edits."""
    name = name or current_workspace_name()
    key = f"settings::{name}"
    if key not in st.session_state:
        st.session_state[key] = load_settings(data_dir() / name)
    return st.session_state[key]


def store_session_settings(settings: Settings, name: Optional[str] = None) -> None:
    st.session_state[f"settings::{name or current_workspace_name()}"] = settings


_PROVIDERS_LOCK = threading.Lock()
_PROVIDERS: dict[str, object] = {}


def _secrets_dict() -> dict:
    try:
        return st.secrets.to_dict()
    except Exception:  # noqa: BLE001 - no secrets file is fine
        return {}


def signin_enabled() -> bool:
    """Whether the operator turned sign-in on (``[auth]`` in the secrets)."""
    try:
        from core.auth import signin_enabled as enabled  # the auth helper's function, once merged
    except ImportError:  # FALLBACK until core.auth lands: the same test, done here
        auth = _secrets_dict().get("auth")
        return isinstance(auth, dict) and bool(auth)
    return bool(enabled(_secrets_dict()))


def configure_providers() -> None:
    """Install the operator's provider allowlist and keys (environment + Streamlit secrets) once per
    process; local mode = sign-in off (``core.providers``)."""
    from core import providers

    with _PROVIDERS_LOCK:
        if "policy" not in _PROVIDERS:
            _PROVIDERS["policy"] = providers.configure(os.environ, _secrets_dict(), local_mode=not signin_enabled())


def api_key() -> Optional[str]:
    """This browser session's own API key (local mode only; never saved). The operator's keys
    (OPENAI_API_KEY etc. in the environment or secrets) are not returned: ``core.providers`` adds them
    inside the HTTP clients, for the operator's allowed URLs only."""
    configure_providers()
    if signin_enabled():
        return None  # with sign-in on there is no key field: the operator's keys only
    return st.session_state.get("llm_api_key") or None


def workspace() -> Workspace:
    """The current workspace (opened once per path and settings), its vectors reopened when another
    process changed it (see the module docstring)."""
    name = current_workspace_name()
    settings = session_settings(name)
    ws = _open(str(data_dir() / name), settings.model_dump_json())
    ws.api_key = api_key()
    follow_generation(ws)
    return ws


def app_is_writing(ws: Workspace) -> bool:
    from ui.indexing import active_paths

    return str(ws.path) in active_paths()


def follow_generation(ws: Workspace) -> Optional[str]:
    """Reopen ``ws``'s vector store if its generation moved while nobody writes; returns the notice
    shown to the user (also kept in the session for ``generation_notice``), or None."""
    key = str(ws.path)
    generation = ws.generation()
    notice = None
    with _SEEN_LOCK:
        seen = _SEEN.setdefault(key, generation)
        if generation == seen:
            return None
        if app_is_writing(ws):
            return None  # our own indexing job: its writes go through this very store
        if ws.writer_active():
            notice = ("Another process is writing to this workspace right now: results may miss its newest "
                      "documents until it finishes.")
        else:
            ws.reopen_vectors()
            _SEEN[key] = generation
            notice = (f"The workspace changed outside this page (generation {seen} → {generation}, e.g. the CLI "
                      "indexed documents): its vector store was reopened, so queries search the new documents too.")
    try:
        st.session_state[NOTICE_KEY] = notice
    except Exception:  # noqa: BLE001 - outside a Streamlit session (library use)
        pass
    return notice


def generation_notice() -> Optional[str]:
    """The last generation notice of this session (shown once, then cleared)."""
    return st.session_state.pop(NOTICE_KEY, None)


def indexed_workspace(purpose: str) -> Optional[Workspace]:
    """The current workspace if it has indexed documents; otherwise a notice saying how to get some
    (``purpose`` ends it: "then come back to <purpose>") or the error of opening it, and None."""
    from ui.errors import show_errors

    ws = None
    with show_errors("Opening the workspace"):
        ws = workspace()
    if ws is None:
        return None
    if ws.status()["chunks"] == 0:
        st.info(f"The workspace “{current_workspace_name()}” has no indexed documents yet. Open the Documents "
                f"page to upload files or load the built-in sample corpus, then come back to {purpose}.")
        return None
    return ws


def forget_workspace() -> None:
    _open.clear()


def delete_workspace(name: str) -> None:
    forget_workspace()
    shutil.rmtree(data_dir() / name, ignore_errors=True)
    if st.session_state.get("workspace_name") == name:
        st.session_state["workspace_name"] = "default"


def generation(ws: Workspace) -> int:
    """Cache key for derived data: changes after every write to the workspace."""
    return ws.generation()
