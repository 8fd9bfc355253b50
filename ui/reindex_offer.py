"""The offer to re-index after a save changed how documents are cut into chunks (Settings page).

The documents already indexed keep their chunks (and the graph and tree built from them) until they are
indexed again; saving a new chunk size now offers that as a button. Pressing it starts the same kind of
background job as indexing on the Documents page (``ui.indexing.IndexJob`` under the Documents page's
job key, calling ``core.api.reindex``) and opens the Documents page, which shows its progress, counters
and Cancel. The button is shown to editors and admins only (``core.api.reindex`` refuses anyone else).
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import streamlit as st

from core import api
from core.auth import Role
from core.settings import Settings
from ui import state
from ui.counters import JOB_KEY
from ui.indexing import IndexJob, running_job_on
from ui.llm import session_llm
from ui.settings_labels import label_for
from ui.numbers import count

if TYPE_CHECKING:
    from core.api import Workspace

CHUNK_FIELDS = ("chunk_tokens", "chunk_overlap", "short_document_tokens", "short_document_chunk_tokens")
OFFER_KEY = "settings_reindex_offer"
BUTTON_KEY = "settings_reindex"
DOCUMENTS_PAGE = "pages/documents.py"


def note_saved(before: Settings, after: Settings) -> None:
    """After a save: remember (for this workspace) which chunking fields changed, so the offer is shown."""
    changed = [label_for(f) for f in CHUNK_FIELDS if getattr(before, f) != getattr(after, f)]
    if changed:
        st.session_state[OFFER_KEY] = (state.current_workspace_name(), changed)


def _start(ws: "Workspace") -> None:
    who = state.principal()
    llm = session_llm(ws, cancel_event=threading.Event())
    calls = [lambda progress, **options: api.reindex(who, ws, progress, **options)]
    job = IndexJob(ws, calls, "the indexed documents again (new chunk size)", llm.chat, llm.cancel_event,
                   principal=who)
    st.session_state[JOB_KEY] = job.start()


def reindex_offer() -> None:
    """The offer under the saved message: how many documents keep their old chunks and a button that
    re-indexes them as a job (nothing when no chunking field changed, the workspace has no indexed
    document, or the session is below editor)."""
    offer = st.session_state.get(OFFER_KEY)
    if not offer or offer[0] != state.current_workspace_name() or not state.can(Role.editor):
        return
    ws = state.workspace()
    indexed = int(api.status(state.principal(), ws).get("processed", 0))
    if not indexed:
        st.session_state.pop(OFFER_KEY, None)
        return
    busy = running_job_on(str(ws.path)) is not None
    st.warning(f"{count(indexed)} indexed document(s) still have the chunks they were cut into before "
               f"({', '.join(offer[1])} changed). Re-indexing cuts them again from their stored text and rebuilds "
               "their graph and summary tree; it runs like indexing, with its progress and Cancel on the Documents "
               "page. Marks on their chunks are dropped (the chunks change).")
    if st.button(f"Re-index {count(indexed)} document(s) now", key=BUTTON_KEY, disabled=busy,
                 help="An indexing run is already going on this workspace." if busy else None):
        st.session_state.pop(OFFER_KEY, None)
        _start(ws)
        st.switch_page(DOCUMENTS_PAGE)
