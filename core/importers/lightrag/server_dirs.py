"""Server-side LightRAG directories an admin may import: only under the folder the operator allows.

The operator names the folder with ``RAGSCOPE_IMPORT_ROOT`` (environment) or ``import_root`` in the
``[ragscope]`` table of ``.streamlit/secrets.toml``; unset, the option does not exist (``import_root`` is
None and the page hides it). A requested directory is given relative to that folder (or as an absolute path
inside it) and is refused when

* it resolves outside the folder (``..``, an absolute path elsewhere, or a symbolic link on the way that
  points out of it);
* anything the importer would read inside it (its files and its LightRAG workspace subfolders) is a
  symbolic link that resolves outside the folder;
* it is not a directory.

``ServerImportError`` says which rule refused it; the operator's folder itself is named, the resolved
target of a link out of it is not (that would tell the admin about the rest of the file system).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Optional

from core.errors import RAGScopeError
from core.importers.lightrag.reader import MARKERS

ENV = "RAGSCOPE_IMPORT_ROOT"
MAX_LISTED = 200  # directories offered for choice
MAX_DEPTH = 3  # folder levels searched below the root for LightRAG working directories


class ServerImportError(RAGScopeError, ValueError):
    """A server-side directory cannot be imported (outside the allowed folder, a link out of it, none set)."""


def import_root(secrets: Optional[Mapping[str, Any]] = None, environ: Optional[Mapping[str, str]] = None
                ) -> Optional[Path]:
    """The folder the operator allows server-side imports from, None when unset. ``secrets`` default: the
    secrets files Streamlit reads (``core.auth.read_secrets``)."""
    env = os.environ if environ is None else environ
    value = (env.get(ENV) or "").strip()
    if not value:
        if secrets is None:
            from core.auth import read_secrets

            secrets = read_secrets()
        value = str(((secrets or {}).get("ragscope") or {}).get("import_root") or "").strip()
    return Path(value).expanduser() if value else None


def _root(root: Path) -> Path:
    real = root.resolve()
    if not real.is_dir():
        raise ServerImportError(f"the server import folder {root} ({ENV}) is not a directory; the operator must "
                                "fix the setting")
    return real


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def resolve_under_root(root: Path, requested: str) -> Path:
    """The real directory ``requested`` names under ``root``, or ``ServerImportError`` (see the module doc)."""
    real_root = _root(root)
    text = (requested or "").strip()
    if not text or "\x00" in text:
        raise ServerImportError("name a directory under the server import folder")
    candidate = Path(text)
    if not candidate.is_absolute():
        candidate = real_root / candidate
    resolved = candidate.resolve()
    if not _inside(resolved, real_root):
        why = "a symbolic link points out of it" if _inside(Path(os.path.abspath(candidate)), real_root) else \
            "it is outside that folder"
        raise ServerImportError(f"{text}: not importable: {why} (server imports are allowed under {root} only)")
    if not resolved.is_dir():
        raise ServerImportError(f"{text}: not a directory under {root}")
    for folder in [resolved] + [p for p in resolved.iterdir() if p.is_dir()]:
        for entry in [folder] + list(folder.iterdir()):
            if entry.is_symlink() and not _inside(entry.resolve(), real_root):
                inner = entry.relative_to(resolved) if entry != resolved else entry.name
                raise ServerImportError(f"{text}: not importable: {inner} is a symbolic link out of the server "
                                        f"import folder {root}")
    return resolved


def _is_lightrag_dir(folder: Path) -> bool:
    return all((folder / m).is_file() for m in MARKERS)


def candidate_dirs(root: Path) -> list[str]:
    """Folders under ``root`` that hold LightRAG storages (relative names, sorted, at most ``MAX_LISTED``): a
    working directory with LightRAG workspace subfolders is listed once per workspace; links out of the
    folder are not followed."""
    real_root = _root(root)
    found: list[str] = []
    level = [real_root]
    for _ in range(MAX_DEPTH + 1):
        below: list[Path] = []
        for folder in level:
            if _is_lightrag_dir(folder):
                found.append("." if folder == real_root else str(folder.relative_to(real_root)))
                continue
            try:
                children = sorted(p for p in folder.iterdir() if p.is_dir())
            except OSError:
                continue
            below += [p for p in children if _inside(p.resolve(), real_root) and not p.name.startswith(".")]
        level = below
        if len(found) >= MAX_LISTED:
            break
    return sorted(found)[:MAX_LISTED]
