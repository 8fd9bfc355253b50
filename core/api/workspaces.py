"""``core.api`` functions for workspaces: listing, opening (one handle per caller), creating, deleting,
their settings and store, and their state (status counts, generation, another process writing).

* viewer — ``workspace_names``, ``workspace_path``, ``open_workspace``, ``session_workspace``, ``status``,
  ``generation``, ``writer_active``, ``refresh_vectors`` (reopens this process's own vector client: no
  data changes);
* admin — ``create_workspace``, ``delete_workspace``, ``save_workspace_settings``, ``store_description``.

Deleting a workspace takes its write lock first, so it is refused (``WorkspaceBusyError``) while an
indexing run of any process holds it, and it removes only a folder directly inside the data folder.
Re-exported by ``core.api``.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Optional

from filelock import FileLock, Timeout

from core import config
from core.auth import Principal, Role, require_workspace, requires
from core.errors import WorkspaceBusyError, WorkspaceNameError
from core.settings import Settings
from core.workspace import LOCK_FILE, Workspace


# --- workspaces ----------------------------------------------------------------------------------
@requires(Role.viewer)
def workspace_names(principal: Principal) -> list[str]:
    """The workspaces of the data folder that ``principal`` may open (sorted)."""
    return [n for n in config.list_workspaces() if principal.may_open(n) and config.WORKSPACE_NAME.match(n)]


@requires(Role.viewer)
def workspace_path(principal: Principal, name: str) -> Path:
    """The folder of workspace ``name`` (not created): WorkspaceNameError for a malformed name or one
    outside the data folder, PermissionDeniedError for one ``principal`` may not open."""
    path = config.workspace_dir(name)
    require_workspace(principal, path.name)
    return path


@requires(Role.viewer)
def open_workspace(principal: Principal, name: str, settings: Optional[Settings] = None) -> Workspace:
    """Open workspace ``name`` (validated as ``workspace_path`` does) with ``settings`` (default: its own).
    The app opens each one once per process and shares it; give each caller a ``session_workspace``.
    Opening a workspace that does not exist creates it, for an admin, or for anyone when it is the
    operator's default workspace (RAGSCOPE_WORKSPACE, a fresh deployment's first visitor); any other
    name gets a WorkspaceNameError (a viewer typing names into the address must not make folders)."""
    path = workspace_path(principal, name)
    if not path.is_dir() and principal.role < Role.admin and path.name != config.default_workspace_name():
        raise WorkspaceNameError(f"no workspace named “{path.name}” exists; only an admin creates workspaces")
    return Workspace(path, settings=settings)


@requires(Role.viewer)
def session_workspace(principal: Principal, ws: Workspace, api_key: Optional[str] = None) -> Workspace:
    """One caller's handle on the shared ``ws`` (``core.session``): everything shared but ``api_key``,
    which goes with this handle's LLM and embedder calls only (local mode: the key typed in a session)."""
    from core.session import session_handle

    return session_handle(ws, api_key)


@requires(Role.admin)
def create_workspace(principal: Principal, name: str) -> tuple[Path, bool]:
    """Create the workspace folder ``name`` (mode 0700); returns (its path, whether it existed already)."""
    path = workspace_path(principal, name)
    existed = path.is_dir()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path, existed


@requires(Role.admin)
def delete_workspace(principal: Principal, name: str, ws: Optional[Workspace] = None) -> Path:
    """Delete workspace ``name`` (its folder and everything in it) under its write lock: refused with
    WorkspaceBusyError while another writer (an indexing run of this or another process) holds it.
    ``ws``: an open handle on it, closed before the folder goes. Returns the path removed."""
    path = workspace_path(principal, name)
    if not path.is_dir():
        raise FileNotFoundError(f"there is no workspace {name!r} in {path.parent}")
    if ws is not None and Path(ws.path).resolve() != path:
        raise ValueError(f"the open workspace {ws.path} is not {path}")
    if ws is not None:
        with ws.writer():
            ws.close()
            shutil.rmtree(path)
        return path
    lock = FileLock(str(path / LOCK_FILE))  # the lock Workspace.writer takes (a workspace that cannot open)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise WorkspaceBusyError(f"workspace {name!r} is being written to (an indexing run holds its lock): "
                                 "wait for it to finish or cancel it, then delete") from None
    try:
        shutil.rmtree(path)
    finally:
        lock.release()
    return path


@requires(Role.admin)
def save_workspace_settings(principal: Principal, name: str, settings: Settings,
                            ws: Optional[Workspace] = None) -> None:
    """Save ``settings`` to workspace ``name``'s settings.json, after checking that its vectors can be
    used with the new embedder (EmbedderMismatchError otherwise). ``ws``: an open handle, updated too."""
    from core import providers
    from core.settings import save_settings

    if settings.provider == "openai":  # a URL the operator did not allow is refused here too, not only on the page
        providers.check_base_url(settings.llm_base_url, "llm")
    if settings.embedder == "openai":
        providers.check_base_url(settings.embedding_base_url, "embeddings")
    path = workspace_path(principal, name)
    Workspace(path, settings=settings).close()  # raises EmbedderMismatchError for another embedder
    if ws is not None and Path(ws.path).resolve() == path:
        ws.save_settings(settings)
    else:
        save_settings(path, settings)


@requires(Role.admin)
def store_description(principal: Principal, ws: Workspace) -> str:
    """Which store the workspace uses (``sqlite`` or ``postgresql`` and where, without a password) and where
    its vectors are: chosen when the process starts (``--store`` / ``RAGSCOPE_STORE``), never on a page."""
    return ws.store_description()


# --- a workspace's state ---------------------------------------------------------------------------
@requires(Role.viewer)
def status(principal: Principal, ws: Workspace) -> dict[str, Any]:
    """The workspace's counts (documents by status, chunks, entities, relations, summaries), its embedder,
    extractor and LLM usage (``Workspace.status``: a plain mapping shown as a table, no record)."""
    return ws.status()


@requires(Role.viewer)
def generation(principal: Principal, ws: Workspace) -> int:
    """The workspace's generation: it moves after every commit and every rollback (a cache key)."""
    return ws.generation()


@requires(Role.viewer)
def embedder_setting(principal: Principal, ws: Workspace) -> str:
    """The ``embedder`` setting the open workspace uses: the chosen one, or (none chosen) the local model it
    recorded — a workspace the torch MiniLM built keeps it although new workspaces default to int8."""
    return ws.settings.embedder


@requires(Role.viewer)
def writer_active(principal: Principal, ws: Workspace) -> bool:
    """True while a live process holds the workspace's write lock."""
    return ws.writer_active()


@requires(Role.viewer)
def refresh_vectors(principal: Principal, ws: Workspace) -> None:
    """Reopen the vector store on next use (another process added vectors); no data changes."""
    ws.reopen_vectors()
