"""Documents page piece: upload a zip of a LightRAG working directory and import it into the open workspace
(``core.importers.lightrag``), with progress, the counts on both sides, and the graph's provenance.

An admin may instead pick a directory on the server, under the folder the operator allows
(``RAGSCOPE_IMPORT_ROOT``; the option is hidden when it is unset): ``core.api.import_lightrag_from_server``.

The zip is size-capped and unpacked by ``core.importers.lightrag.archive.unpack_zip`` (entry names checked for
path traversal and links, the uncompressed total bounded while reading) into a temporary folder that is
removed afterwards. Every text that comes from the upload is escaped before it is rendered."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import streamlit as st

from core import api
from core.auth import Role
from core.importers.lightrag.archive import MAX_ZIP_BYTES, unpack_zip
from core.types import ProgressEvent
from ui import state
from ui.errors import escape_markdown, show_errors
from ui.provenance import provenance_caption
from ui.numbers import count

if TYPE_CHECKING:
    from core.api import Workspace

STEPS = ["read", "nlp", "delete", "write", "tree", "embed", "import"]


def _progress_bar(first: str) -> tuple[Any, Callable[[ProgressEvent], None]]:
    bar = st.progress(0.0, text=first)

    def progress(event: ProgressEvent) -> None:
        step = STEPS.index(event.step) if event.step in STEPS else 0
        inner = event.done / event.total if event.total else 0.0
        text = f"{event.step}: {event.message}" if event.message else event.step
        bar.progress(min(1.0, (step + inner) / len(STEPS)), text=escape_markdown(text)[:200])

    return bar, progress


def run_server_import(ws: Any, directory: str, source_model: str) -> dict[str, Any]:
    """Import a directory under the operator's server import folder (admin), with a progress bar."""
    bar, progress = _progress_bar(f"reading {escape_markdown(directory)[:150]}")
    report = api.import_lightrag_from_server(state.principal(), ws, directory, source_model=source_model.strip() or None,
                                             progress=progress)
    bar.progress(1.0, text="imported")
    return report.as_dict()


def server_section(ws: Any, model: str) -> None:
    """Admins, when the operator allows a server folder: pick a LightRAG directory in it and import it."""
    who = state.principal()
    if who.role < Role.admin:
        return
    dirs = api.server_import_dirs(who)
    if dirs is None:  # the operator allows no server folder: no option
        return
    root = api.server_import_root(who)
    st.caption(f"Or, as an admin, a LightRAG directory on the server, under {escape_markdown(str(root))}:")
    if not dirs:
        st.caption("No LightRAG working directory found there.")
        return
    chosen = st.selectbox("Server directory", dirs, key="lightrag_server_dir")  # options render as plain text
    if st.button("Import server directory", key="lightrag_server_import"):
        with show_errors("Import failed") as guard:
            st.session_state["lightrag_last_import"] = run_server_import(ws, str(chosen), model or "")
        if guard.failed:
            st.session_state.pop("lightrag_last_import", None)


def run_import(ws: Any, data: bytes, source_model: str) -> dict[str, Any]:
    """Unpack and import, drawing one progress bar; return the report as a dict."""
    bar, progress = _progress_bar("unpacking the zip")
    with tempfile.TemporaryDirectory(prefix="ragscope_lightrag_") as tmp:
        folder = unpack_zip(data, Path(tmp) / "upload", max_ratio=state.session_settings().max_archive_ratio)
        report = api.import_lightrag(state.principal(), ws, folder, source_model=source_model.strip() or None, progress=progress)
    bar.progress(1.0, text="imported")
    return report.as_dict()


def import_section(ws: Workspace) -> None:
    """The expander with the zip upload, the import button and the last import's result."""
    provenance_caption(ws)
    with st.expander("Import a LightRAG index (zip of its working directory)", expanded=False):
        st.caption("A LightRAG working directory written by lightrag-hku 1.5.7's default file storages "
                   "(kv_store_*.json, vdb_*.json, graph_chunk_entity_relation.graphml). Import it into a new "
                   "workspace; importing the same directory again later applies only what LightRAG changed. "
                   f"Up to {MAX_ZIP_BYTES // 2**20} MB. Vectors are re-embedded with this workspace's embedder.")
        upload = st.file_uploader("LightRAG working directory (.zip)", type=["zip"], key="lightrag_zip")
        model = st.text_input("Model that built it (provenance)", key="lightrag_model", max_chars=120,
                              placeholder="unknown")
        if st.button("Import LightRAG index", key="lightrag_import", disabled=upload is None) and upload is not None:
            with show_errors("Import failed") as guard:
                st.session_state["lightrag_last_import"] = run_import(ws, upload.getvalue(), model or "")
            if guard.failed:
                st.session_state.pop("lightrag_last_import", None)
        server_section(ws, model or "")
        result: dict[str, Any] | None = st.session_state.get("lightrag_last_import")
        if result:
            lr, rs = result["lightrag"], result["ragscope"]
            st.success(f"Imported in {result['seconds']} s: {count(result['new_documents'])} new, "
                       f"{count(result['replaced_documents'])} replaced, {count(result['deleted_documents'])} deleted, "
                       f"{count(result['unchanged_documents'])} unchanged document(s).")
            st.table({"": ["documents", "chunks", "entities", "relations"],
                      "LightRAG": [count(lr[k]) for k in ("documents", "chunks", "entities", "relations")],
                      "workspace": [count(rs[k]) for k in ("documents", "chunks", "entities", "relations")]})
