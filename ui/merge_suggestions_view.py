"""The Knowledge graph page's merge suggestions (issue 33), for editors and admins only: ranked candidate
duplicates with their evidence, each with *Merge* (a ``merge`` edit through ``core.api``, logged and
undoable like any other) and *Dismiss* (remembered in the workspace, never suggested again). Computed
on a click (a few seconds on a large graph) and kept for the workspace generation; every name is shown
as plain text (``st.text``), never as Markdown or HTML."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from core import api
from core.auth import Role
from ui import junk_view, state
from ui.errors import show_errors

if TYPE_CHECKING:
    from core.api import MergeSuggestion, Workspace

SHOWN = 20
KEY = "kg_merge_suggestions"


def _line(s: "MergeSuggestion") -> str:
    return (f"{s.merge_name} [{s.merge_type or '—'}]  →  {s.into_name} [{s.into_type or '—'}]   "
            f"score {s.score:.2f}: {'; '.join(s.evidence)}")


def _drop(found: list[Any], *keys: str) -> list[Any]:
    return [s for s in found if not {s.merge, s.into} & set(keys)]


def panel(ws: "Workspace") -> None:
    """The merge suggestions and the junk-node suggestions (``ui.junk_view``) expanders (nothing for a
    viewer)."""
    if not state.can(Role.editor):
        return
    _merges(ws)
    junk_view.panel(ws)


def _merges(ws: "Workspace") -> None:
    with st.expander("Merge suggestions"):
        st.caption("Pairs of entities that are probably one thing: same or often-confused types, names that "
                   "contain, abbreviate or respell one another, close profile vectors, shared source documents "
                   "and neighbours. Merge keeps the right-hand name; Dismiss hides the pair for good.")
        cached = st.session_state.get(KEY)
        if st.button("Find merge suggestions", key="kg_suggest_go"):
            with show_errors():
                found = api.merge_suggestions(state.principal(), ws, top=100)
                cached = st.session_state[KEY] = {"ws": str(ws.path), "found": found}
        if not cached or cached.get("ws") != str(ws.path):
            return
        found = cached["found"]
        if not found:
            st.caption("No suggestion left.")
        for i, s in enumerate(found[:SHOWN]):
            st.text(_line(s))
            merge, dismiss = st.columns(2)
            if merge.button("Merge", key=f"kg_suggest_merge_{i}"):
                with show_errors():
                    result = api.edit_graph(state.principal(), ws, "merge", {"names": [s.merge], "into": s.into})
                    state.note_own_write(ws)  # this page's own change: no "changed outside this page" notice
                    cached["found"] = _drop(found, s.merge)
                    st.session_state["kg_edit_message"] = f"Edit {result.edit_id} (merge) made."
                    st.rerun()
            if dismiss.button("Dismiss", key=f"kg_suggest_dismiss_{i}"):
                with show_errors():
                    api.dismiss_merge_suggestion(state.principal(), ws, s.merge, s.into)
                    state.note_own_write(ws)
                    cached["found"] = [x for x in found if {x.merge, x.into} != {s.merge, s.into}]
                    st.rerun()
