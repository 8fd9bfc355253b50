"""Documents page piece: upload a zip of a LightRAG working directory and import it into the open workspace
(``core.importers.lightrag``), with progress, the counts on both sides, and the graph's provenance.

The zip is size-capped and unpacked by ``core.importers.lightrag.archive.unpack_zip`` (entry names checked for
path traversal and links, the uncompressed total bounded while reading) into a temporary folder that is
removed afterwards. Every text that comes from the upload is escaped before it is rendered."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from core import api
from core.importers.lightrag import provenance
from core.importers.lightrag.archive import MAX_ZIP_BYTES, unpack_zip
from core.types import ProgressEvent
from ui import state
from ui.errors import escape_markdown, show_errors

if TYPE_CHECKING:
    from core.workspace import Workspace

STEPS = ["read", "nlp", "delete", "write", "tree", "embed", "import"]


def provenance_caption(ws: Workspace) -> None:
    """One line saying where the workspace's graph came from (nothing for a RAGScope-built graph)."""
    prov = provenance(ws)
    if prov:
        counts = prov.get("lightrag_counts") or {}
        st.caption(f"Graph {escape_markdown(prov['provenance'])} (model: {escape_markdown(prov['source_model'])}; "
                   f"{counts.get('documents', 0)} documents, {counts.get('entities', 0)} entities, "
                   f"{counts.get('relations', 0)} relations in LightRAG).")


def run_import(ws: Workspace, data: bytes, source_model: str) -> dict[str, Any]:
    """Unpack and import, drawing one progress bar; return the report as a dict."""
    bar = st.progress(0.0, text="unpacking the zip")

    def progress(event: ProgressEvent) -> None:
        step = STEPS.index(event.step) if event.step in STEPS else 0
        inner = event.done / event.total if event.total else 0.0
        text = f"{event.step}: {event.message}" if event.message else event.step
        bar.progress(min(1.0, (step + inner) / len(STEPS)), text=escape_markdown(text)[:200])

    with tempfile.TemporaryDirectory(prefix="ragscope_lightrag_") as tmp:
        folder = unpack_zip(data, Path(tmp) / "upload")
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
        result: dict[str, Any] | None = st.session_state.get("lightrag_last_import")
        if result:
            lr, rs = result["lightrag"], result["ragscope"]
            st.success(f"Imported in {result['seconds']} s: {result['new_documents']} new, "
                       f"{result['replaced_documents']} replaced, {result['deleted_documents']} deleted, "
                       f"{result['unchanged_documents']} unchanged document(s).")
            st.table({"": ["documents", "chunks", "entities", "relations"],
                      "LightRAG": [lr[k] for k in ("documents", "chunks", "entities", "relations")],
                      "workspace": [rs[k] for k in ("documents", "chunks", "entities", "relations")]})
