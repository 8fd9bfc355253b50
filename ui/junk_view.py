"""The Knowledge graph page's junk-node suggestions (issue 33), for editors and admins only: entities that
look like extraction junk (a number or unit, stop words only, a broken span, an ordinary word taken for a
name; ``core.editing.junk``), each with its reasons, in a table whose ticked rows are deleted in one step
(``core.api.delete_entities``: one logged, undoable ``delete_entity`` edit each); unticked rows can be
dismissed as "not junk" for good. Names are table cells (plain text), never Markdown or HTML."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from core import api
from core.auth import Role
from ui import state
from ui.errors import show_errors
from ui.numbers import count

if TYPE_CHECKING:
    from core.api import JunkNode, Workspace

KEY = "kg_junk"
SHOWN = 100


def frame(found: list["JunkNode"]) -> pd.DataFrame:
    """One row per suggestion; "delete" is pre-ticked unless the only reason is "isolated"."""
    return pd.DataFrame([{"delete": n.strong, "name": n.name[:200], "type": n.type or "—", "relations": n.relations,
                          "chunks": n.chunks, "why": "; ".join(n.reasons)} for n in found],
                        columns=["delete", "name", "type", "relations", "chunks", "why"])


def panel(ws: "Workspace") -> None:
    """The expander (nothing for a viewer)."""
    if not state.can(Role.editor):
        return
    with st.expander("Junk nodes (delete in one step)"):
        st.caption("Entities that are probably not names: a number or unit, stop words only, a broken span "
                   "(unbalanced brackets or quotes, a footnote marker), an ordinary word the corpus mostly writes "
                   "in lower case. Isolated nodes (no relation, one mention) are weak evidence on their own and "
                   "are listed only on request, unticked. Each delete is one edit in the history (undo it there).")
        weak = st.checkbox("Also list isolated nodes", key="kg_junk_weak")
        if st.button("Find junk nodes", key="kg_junk_go"):
            with show_errors():
                found = api.junk_suggestions(state.principal(), ws, top=SHOWN, include_weak=weak)
                st.session_state[KEY] = {"ws": str(ws.path), "found": found}
        cached = st.session_state.get(KEY)
        if not cached or cached.get("ws") != str(ws.path):
            return
        found = cached["found"]
        if not found:
            st.caption("No junk node found.")
            return
        edited = st.data_editor(frame(found), hide_index=True, key="kg_junk_table", disabled=[
            "name", "type", "relations", "chunks", "why"])
        ticked = [n.key for n, keep in zip(found, edited["delete"]) if bool(keep)]
        unticked = [n.key for n, keep in zip(found, edited["delete"]) if not bool(keep)]
        st.text(f"{count(len(ticked))} ticked entit{'y' if len(ticked) == 1 else 'ies'} and their relations will be "
                "deleted.")
        left, right = st.columns(2)
        if left.checkbox("I confirm the deletes", key="kg_junk_ok") and left.button(
                f"Delete {count(len(ticked))} entities", key="kg_junk_delete", disabled=not ticked):
            with show_errors():
                made, failed = api.delete_entities(state.principal(), ws, ticked)
                state.note_own_write(ws)  # this page's own change: no "changed outside this page" notice
                st.session_state.pop(KEY, None)
                st.session_state["kg_edit_message"] = (f"Deleted {count(len(made))} junk entit{'y' if len(made) == 1 else 'ies'}"
                                                       f" (edits {made[0]}–{made[-1]})." if made else "Nothing deleted.")
                if failed:
                    st.session_state["kg_edit_message"] += f" {count(len(failed))} could not be deleted."
                st.rerun()
        if right.button(f"Not junk: dismiss the {count(len(unticked))} unticked", key="kg_junk_dismiss", disabled=not unticked):
            with show_errors():
                for key in unticked:
                    api.dismiss_junk(state.principal(), ws, key)
                state.note_own_write(ws)
                cached["found"] = [n for n in found if n.key not in set(unticked)]
                st.rerun()
