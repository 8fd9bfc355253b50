"""Session state of the app: data folder, current workspace (cached resource), settings, LLM key.

Each workspace is opened once per process and settings (``st.cache_resource``) and shared by every
browser session; ``workspace()`` hands each session its own handle on it (``core.api.session_workspace``,
``core.session``) carrying only that session's API key, so a key typed in one tab is never used for
another tab's LLM or embedder calls.

The data folder is ``core.config.data_dir()`` (``RAGSCOPE_DATA_DIR``, default ``data/workspaces``). Workspaces are cached
with ``st.cache_resource`` keyed by path; derived tables use ``st.cache_data`` keyed by the
workspace's generation, so they refresh after every write.

Writes from outside the app (``python -m core index`` while the app is open): the SQLite tables
show them at once, but an embedded ChromaDB store opened earlier keeps its old index in memory.
``workspace()`` therefore remembers the generation it last saw per workspace; when the generation
moved and no writer is active (no indexing job of this app, no write lock held), it reopens the
vector store, so the next query searches the new vectors too, and says so once
(``generation_notice``). While another process is still writing, it says the results may be stale.

Who is calling: ``principal()`` is ``core.auth.LOCAL_ADMIN`` when sign-in is off, else the signed-in
user's principal from the operator's role mapping (``[ragscope.roles]`` / ``RAGSCOPE_ROLES``, read once
per process). Every workspace is opened and changed through ``core.api`` with that principal. The
chosen workspace is kept in the URL (``?workspace=NAME``), so a reload or a shared link opens it again;
a name from the URL is validated (and checked against the principal's workspaces) like any other.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import streamlit as st

from core import api, auth
from core.config import WORKSPACE_NAME
from core.config import data_dir as configured_data_dir
from core.config import default_workspace_name, load_settings
from core.errors import PermissionDeniedError, RAGScopeError, WorkspaceBusyError, WorkspaceNameError
from core.settings import Settings
from ui import own_writes

if TYPE_CHECKING:
    from core.api import Workspace

URL_PARAM = "workspace"
NOTICE_KEY = "workspace_generation_notice"


def data_dir() -> Path:
    path = configured_data_dir()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


@st.cache_resource(show_spinner=False)
def _secrets() -> dict[str, Any]:
    """Streamlit's secrets as a plain dict, read once per process ({} without a secrets file)."""
    try:
        return st.secrets.to_dict()
    except Exception:  # noqa: BLE001 - no secrets file (or an unreadable one): local mode
        return {}


def signin_on() -> bool:
    """True when the operator configured sign-in (``[auth]`` in the secrets)."""
    return auth.signin_enabled(_secrets())


@st.cache_resource(show_spinner=False)
def role_map() -> auth.RoleMap:
    """The operator's role mapping, read once per process (RoleConfigError when malformed)."""
    return auth.load_role_map(_secrets())


def signed_in() -> bool:
    """Whether this browser session signed in (``st.user``; False where Streamlit has no user, e.g. AppTest)."""
    try:
        return bool(st.user.is_logged_in)
    except AttributeError:
        return False


def principal() -> auth.Principal:
    """The caller of this browser session: LOCAL_ADMIN without sign-in, else the signed-in user's
    principal (PermissionDeniedError when not signed in or when the mapping gives no role)."""
    if not signin_on():
        return auth.LOCAL_ADMIN
    if not signed_in():
        raise PermissionDeniedError("Sign in first.")
    return role_map().principal_for(st.user.to_dict())


def can(role: auth.Role) -> bool:
    """Whether this session's principal has at least ``role`` (False when it has none)."""
    try:
        return principal().role >= role
    except RAGScopeError:
        return False


def workspace_names() -> list[str]:
    data_dir()  # created on first use
    names = api.workspace_names(principal())
    return names or [_fallback_workspace()]


def valid_workspace_name(name: str) -> bool:
    return bool(WORKSPACE_NAME.match(name or ""))


def _fallback_workspace() -> str:
    """The workspace a session starts in: RAGSCOPE_WORKSPACE (default "default") if this principal may
    open it, else the first one it may open."""
    who = principal()
    name = default_workspace_name()
    if who.may_open(name) or not who.workspaces:
        return name
    return sorted(who.workspaces)[0]


def current_workspace_name() -> str:
    """The session's workspace: chosen in the sidebar, else the URL's ``?workspace=``, else the fallback;
    kept in the URL so that a reload comes back to it."""
    name = st.session_state.get("workspace_name")
    if not name:
        wanted = st.query_params.get(URL_PARAM)
        name = _fallback_workspace()
        if wanted and wanted != name:
            try:
                found = api.workspace_path(principal(), wanted).name
                if found not in api.workspace_names(principal()):  # an address never creates a workspace
                    raise WorkspaceNameError(f"no workspace named “{found}” exists (an admin creates "
                                             "workspaces in the sidebar)")
                name = found
            except RAGScopeError as exc:
                st.session_state[URL_ERROR_KEY] = f"The workspace in the address was not opened: {exc}"
        st.session_state["workspace_name"] = name
    if st.query_params.get(URL_PARAM) != name:
        st.query_params[URL_PARAM] = name
    return name


URL_ERROR_KEY = "workspace_url_error"


def url_error() -> Optional[str]:
    """Why the workspace named in the URL was not opened (shown once), or None."""
    return st.session_state.pop(URL_ERROR_KEY, None)


def set_workspace(name: str) -> None:
    st.session_state["workspace_name"] = name
    st.query_params[URL_PARAM] = name


def workspace_path(name: Optional[str] = None) -> Path:
    """The validated folder of workspace ``name`` (default: the current one) for this principal."""
    return api.workspace_path(principal(), name or current_workspace_name())


@st.cache_resource(show_spinner="Opening workspace…", max_entries=8)
def _open(path: str, settings_json: str, _who: auth.Principal) -> Workspace:
    """The process-wide workspace at ``path`` with these settings (shared by every session; ``_who``,
    the first caller, is not part of the cache key: ``workspace_path`` checked every caller already)."""
    return api.open_workspace(_who, Path(path).name, Settings.model_validate_json(settings_json))


def session_settings(name: Optional[str] = None) -> Settings:
    """Settings of the current workspace: the saved file plus unsaved session edits."""
    name = name or current_workspace_name()
    key = f"settings::{name}"
    if key not in st.session_state:
        st.session_state[key] = load_settings(workspace_path(name))
    return st.session_state[key]


def store_session_settings(settings: Settings, name: Optional[str] = None) -> None:
    st.session_state[f"settings::{name or current_workspace_name()}"] = settings


_PROVIDERS_LOCK = threading.Lock()
_PROVIDERS: dict[str, object] = {}


def signin_enabled() -> bool:
    """Whether the operator turned sign-in on (``[auth]`` in the secrets)."""
    return signin_on()


def configure_providers() -> None:
    """Install the operator's provider allowlist and keys (environment + Streamlit secrets) once per
    process; local mode = sign-in off (``core.providers``)."""
    from core import providers

    with _PROVIDERS_LOCK:
        if "policy" not in _PROVIDERS:
            _PROVIDERS["policy"] = providers.configure(os.environ, _secrets(), local_mode=not signin_enabled())


def api_key() -> Optional[str]:
    """This browser session's own API key (local mode only; never saved). The operator's keys
    (OPENAI_API_KEY etc. in the environment or secrets) are not returned: ``core.providers`` adds them
    inside the HTTP clients, for the operator's allowed URLs only."""
    configure_providers()
    if signin_enabled():
        return None  # with sign-in on there is no key field: the operator's keys only
    return st.session_state.get("llm_api_key") or None


def workspace() -> Workspace:
    """This browser session's handle on the current workspace (``core.session``): the workspace is
    opened once per path and settings and shared by every session, the handle carries this session's
    own API key only (a key typed in one tab never goes with another tab's calls). Its vectors are
    reopened when another process changed it (see the module docstring)."""
    name = current_workspace_name()
    settings = session_settings(name)
    who = principal()
    shared = _open(str(workspace_path(name)), settings.model_dump_json(exclude_unset=True), who)  # chosen fields only
    ws = api.session_workspace(who, shared, api_key())
    used = api.embedder_setting(who, ws)
    if used != settings.embedder and "embedder" not in settings.model_fields_set:
        store_session_settings(settings.with_overrides({"embedder": used}), name)  # its recorded model, shown
    follow_generation(ws)
    return ws


def app_is_writing(ws: Workspace) -> bool:
    from ui.indexing import active_paths

    return str(ws.path) in active_paths()


def follow_generation(ws: Workspace) -> Optional[str]:
    """Reopen ``ws``'s vector store if its generation moved while nobody writes; returns the notice
    shown to the user (also kept in the session for ``generation_notice``), or None."""
    key = str(ws.path)
    who = principal()
    generation = api.generation(who, ws)
    notice = None
    with own_writes.SEEN_LOCK:
        seen = own_writes.SEEN.setdefault(key, generation)
        if generation == seen:
            return None
        if app_is_writing(ws):
            return None  # our own indexing job: its writes go through this very store
        if api.writer_active(who, ws):
            notice = ("Another process is writing to this workspace right now: results may miss its newest "
                      "documents until it finishes.")
        else:
            api.refresh_vectors(who, ws)
            own_writes.SEEN[key] = generation
            notice = (f"The workspace changed outside this page (generation {seen} → {generation}, e.g. the CLI "
                      "indexed documents): its vector store was reopened, so queries search the new documents too.")
    try:
        st.session_state[NOTICE_KEY] = notice
    except Exception:  # noqa: BLE001 - outside a Streamlit session (library use)
        pass
    return notice


def note_own_write(ws: Workspace, who: Optional[auth.Principal] = None) -> None:
    """This process wrote ``ws`` through its shared store (an indexing job, a delete): its vectors are
    current, so the generation it reached is not a change "outside this page". ``who``: the caller
    (default: this session's; a job thread passes the principal that started it)."""
    own_writes.note_own_write(ws, who or principal())


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
    if api.chunk_count(principal(), ws) == 0:
        st.info(f"The workspace “{current_workspace_name()}” has no indexed documents yet. Open the Documents "
                f"page to upload files or load the built-in sample corpus, then come back to {purpose}.")
        return None
    return ws


def forget_workspace() -> None:
    _open.clear()


def delete_workspace(name: str) -> None:
    """Delete workspace ``name`` through ``core.api`` (admins only; refused while this app indexes it or
    any process holds its write lock), then forget its open handles and switch this session away."""
    path = workspace_path(name)
    if str(path) in _active_paths():
        raise WorkspaceBusyError(f"workspace {name!r} is being indexed in this app: wait for the job to "
                                     "finish or cancel it, then delete")
    ws = None
    try:
        ws = _open(str(path), session_settings(name).model_dump_json(exclude_unset=True), principal())
    except Exception:  # noqa: BLE001 - a workspace that cannot be opened can still be deleted
        ws = None
    api.delete_workspace(principal(), name, ws)
    forget_workspace()
    if st.session_state.get("workspace_name") == name:
        st.session_state["workspace_name"] = None
        st.query_params.pop(URL_PARAM, None)


def _active_paths() -> set[str]:
    from ui.indexing import active_paths

    return set(active_paths())


def generation(ws: Workspace) -> int:
    """Cache key for derived data: changes after every write to the workspace."""
    return api.generation(principal(), ws)
