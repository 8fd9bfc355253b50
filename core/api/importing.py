"""``core.api`` functions for importing a LightRAG working directory (``core.importers.lightrag``).

An editor imports a directory the app has on hand (an uploaded zip, unpacked: ``import_lightrag``);
naming a directory that lies on the server is for admins only, because it reads the server's disk. The
operator allows one folder (``RAGSCOPE_IMPORT_ROOT`` or ``import_root`` in ``[ragscope]`` of the secrets
file, ``core.importers.lightrag.server_dirs``); unset, ``server_import_root`` returns None and
``import_lightrag_from_server`` refuses. Both return the importer's ``ImportReport``
(re-exported by ``core.api`` as ``LightRAGImportReport``). Re-exported by ``core.api``.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

from core.auth import Principal, Role, requires
from core.types import ProgressCallback, no_progress
from core.workspace import Workspace

if TYPE_CHECKING:
    from core.importers.lightrag.importer import ImportReport


@requires(Role.editor)
def import_lightrag(principal: Principal, ws: Workspace, directory: Path | str, source_model: Optional[str] = None,
                    lightrag_workspace: Optional[str] = None, progress: ProgressCallback = no_progress,
                    reuse_vectors: bool = False, wait: bool = False, vectors_model: Optional[str] = None) -> ImportReport:
    """Import (or re-import: only the difference) a LightRAG working directory into ``ws``
    (``core.importers.lightrag``); returns its ``ImportReport``."""
    from core.importers.lightrag import import_lightrag as run_import

    return run_import(ws, directory, source_model=source_model, lightrag_workspace=lightrag_workspace,
                      progress=progress, reuse_vectors=reuse_vectors, wait=wait, vectors_model=vectors_model)


@requires(Role.admin)
def server_import_root(principal: Principal) -> Optional[Path]:
    """The folder the operator allows server-side imports from; None: server-side import is off."""
    from core.importers.lightrag.server_dirs import import_root

    return import_root()


@requires(Role.admin)
def server_import_dirs(principal: Principal) -> Optional[list[str]]:
    """The LightRAG working directories under that folder (relative names), None when the option is off."""
    from core.importers.lightrag.server_dirs import candidate_dirs, import_root

    root = import_root()
    return None if root is None else candidate_dirs(root)


@requires(Role.admin)
def import_lightrag_from_server(principal: Principal, ws: Workspace, directory: str,
                                source_model: Optional[str] = None, lightrag_workspace: Optional[str] = None,
                                progress: ProgressCallback = no_progress, reuse_vectors: bool = False,
                                vectors_model: Optional[str] = None, wait: bool = False) -> ImportReport:
    """Import the server directory ``directory`` (relative to the allowed folder, or absolute inside it);
    ``ServerImportError`` when the option is off or the path is outside the folder or links out of it."""
    from core.importers.lightrag import import_lightrag
    from core.importers.lightrag.server_dirs import ENV, ServerImportError, import_root, resolve_under_root

    root = import_root()
    if root is None:
        raise ServerImportError(f"server-side import is off: the operator allows a folder with {ENV} (or "
                                "import_root in the [ragscope] table of the secrets file)")
    folder = resolve_under_root(root, directory)
    return import_lightrag(ws, folder, source_model=source_model, lightrag_workspace=lightrag_workspace,
                           progress=progress, reuse_vectors=reuse_vectors, vectors_model=vectors_model, wait=wait)
