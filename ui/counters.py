"""One source for the workspace counters the sidebar and the Documents page show.

While this session's indexing job runs on the workspace, both read the job's last recorded status
(``IndexJob.snapshot()["status"]``, recorded by the job thread every few seconds and after every
document), so at any moment they show the same numbers; otherwise both read ``Workspace.status()``
cached per workspace path and generation (it moves after every write), read through ``core.api.status``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from core import api

if TYPE_CHECKING:
    from core.api import Workspace

JOB_KEY = "doc_job"  # the Documents page's job in the session (pages/documents.py uses the same key)


@st.cache_data(show_spinner=False, max_entries=32)
def _status(path: str, generation: int, _ws: Workspace) -> dict[str, Any]:
    from ui import state

    return api.status(state.principal(), _ws)


def running_job(ws: Workspace) -> Any:
    """This session's running indexing job on ``ws`` (None when there is none)."""
    job = st.session_state.get(JOB_KEY)
    if job is None or not getattr(job, "running", False):
        return None
    same = str(getattr(getattr(job, "ws", None), "path", "")) == str(getattr(ws, "path", ""))
    return job if same and hasattr(job, "snapshot") else None


def workspace_counts(ws: Workspace) -> dict[str, Any]:
    """The counters of ``ws`` as this session shows them (see the module docstring)."""
    job = running_job(ws)
    if job is not None:
        status = job.snapshot()["status"]
        if status:
            return status
    from ui import state

    return _status(str(ws.path), api.generation(state.principal(), ws), ws)
