"""``core.api`` functions for workspaces, read-only views, settings, the chat model and annotations.

Re-exported by ``core.api`` (import them from there). Each takes the caller's ``Principal`` first and
declares its minimum role (``core.auth.requires``), as every ``core.api`` function does:

* viewer — ``workspace_names``, ``workspace_path``, ``open_workspace``, ``session_workspace``, ``status``, ``documents``, ``chunk_count``,
  ``chunks_of``, ``chunks_by_id``, ``all_chunk_ids``, ``doc_roots``, ``chat_model``, ``annotation_for``,
  ``annotation_list``, ``export_annotations``, ``graph_provenance``, ``graph_part_origins``;
* editor — ``save_annotation_marks``, ``delete_annotations``, ``import_annotations``;
* admin — ``create_workspace``, ``delete_workspace``, ``save_workspace_settings``, ``store_description``.

Deleting a workspace takes its write lock first, so it is refused (``WorkspaceBusyError``) while an
indexing run of any process holds it, and it removes only a folder directly inside the data folder.
"""
from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from filelock import FileLock, Timeout

from core import config
from core.auth import Principal, Role, require_workspace, requires
from core.errors import WorkspaceBusyError
from core.settings import Settings
from core.workspace import LOCK_FILE, Workspace

__all__ = ["workspace_names", "workspace_path", "open_workspace", "session_workspace", "create_workspace", "delete_workspace", "save_workspace_settings",
           "status", "documents", "chunk_count", "chunks_of", "chunks_by_id", "all_chunk_ids", "doc_roots",
           "chat_model", "annotation_for", "annotation_list", "export_annotations", "save_annotation_marks",
           "delete_annotations", "import_annotations", "graph_provenance", "graph_part_origins",
           "store_description"]


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
    The app opens each one once per process and shares it; give each caller a ``session_workspace``."""
    return Workspace(workspace_path(principal, name), settings=settings)


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


# --- read-only views -----------------------------------------------------------------------------
@requires(Role.viewer)
def status(principal: Principal, ws: Workspace) -> dict[str, Any]:
    """The workspace's counts (documents by status, chunks, entities, relations, summaries)."""
    return ws.status()


@requires(Role.viewer)
def documents(principal: Principal, ws: Workspace, doc_status: Optional[str] = None) -> list[Any]:
    """The workspace's document rows (all, or those with ``doc_status``)."""
    return ws.records.documents(doc_status)


@requires(Role.viewer)
def chunk_count(principal: Principal, ws: Workspace) -> int:
    return ws.records.count("chunks")


@requires(Role.viewer)
def chunks_of(principal: Principal, ws: Workspace, doc_id: str) -> list[Any]:
    return ws.records.chunks_of(doc_id)


@requires(Role.viewer)
def chunks_by_id(principal: Principal, ws: Workspace, chunk_ids: Iterable[str]) -> dict[str, Any]:
    return ws.records.chunks_by_id(chunk_ids)


@requires(Role.viewer)
def all_chunk_ids(principal: Principal, ws: Workspace) -> list[str]:
    return ws.records.all_chunk_ids()


@requires(Role.viewer)
def doc_roots(principal: Principal, ws: Workspace) -> dict[str, tuple[str, Optional[str]]]:
    """Per document: (the root of its summary tree, its summary text or None)."""
    return ws.records.doc_roots()


@requires(Role.viewer)
def chat_model(principal: Principal, ws: Workspace, settings: Settings, api_key: Optional[str],
               cancel_event: Optional[threading.Event] = None) -> Any:
    """The chat model of ``settings`` with the workspace's LLM cache (``core.llm.provider.chat_from_settings``)."""
    from core.llm.provider import chat_from_settings

    return chat_from_settings(settings, api_key, ws.open_llm_cache(), cancel_event=cancel_event)


# --- annotations ---------------------------------------------------------------------------------
@requires(Role.viewer)
def annotation_for(principal: Principal, ws: Workspace, question: str) -> Any:
    from core.annotations import annotation_for as find

    return find(ws, question)


@requires(Role.viewer)
def annotation_list(principal: Principal, ws: Workspace) -> list[Any]:
    from core.annotations import annotations as all_annotations

    return all_annotations(ws)


@requires(Role.viewer)
def export_annotations(principal: Principal, ws: Workspace) -> str:
    """The annotations as a JSONL question file."""
    from core.annotations import export_jsonl

    return export_jsonl(ws)


@requires(Role.editor)
def save_annotation_marks(principal: Principal, ws: Workspace, question: str, marks: Mapping[str, Optional[bool]],
                          mode: Any = "", answer: str = "") -> Any:
    from core.annotations import save_marks

    return save_marks(ws, question, dict(marks), mode=mode, answer=answer)


@requires(Role.editor)
def delete_annotations(principal: Principal, ws: Workspace, qids: list[str]) -> int:
    from core.annotations import delete_questions

    return delete_questions(ws, qids)


@requires(Role.editor)
def import_annotations(principal: Principal, ws: Workspace, lines: Iterable[str], source: str = "annotations") -> Any:
    from core.annotations import import_records

    return import_records(ws, lines, source)


# --- provenance of an imported graph ---------------------------------------------------------------
@requires(Role.viewer)
def graph_provenance(principal: Principal, ws: Workspace) -> Optional[dict[str, Any]]:
    """Where the workspace's graph came from, None for a graph RAGScope built itself; for an imported one
    {provenance ("imported from LightRAG"), source_model (or "unknown"), source, imported_at, lightrag_counts,
    origins (documents, chunks, entities, relations by origin: imported / added by RAGScope's indexing / both)}."""
    from core.importers.lightrag import provenance

    return provenance(ws, origins=True)


@requires(Role.viewer)
def graph_part_origins(principal: Principal, ws: Workspace, entity_keys: Iterable[str] = (),
                       relation_keys: Iterable[tuple[str, str]] = ()) -> dict[Any, str]:
    """"imported" / "added" / "both" per entity key and (source, target) relation key; {} when not imported."""
    from core.importers.lightrag import part_origins

    return part_origins(ws, entity_keys, relation_keys)
