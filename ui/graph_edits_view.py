"""The edit part of the Knowledge graph page's Details panel (issue 33): for editors and admins only,
the edits a node or an edge allows — merge with another node, rename, retype, describe, delete, add a
relation; delete a relation — each behind a confirmation that says what will change, and the edit
history with undo. Every edit goes through ``core.api`` (which checks the role again); every name and
description is shown as plain text (``st.text``, captions escaped), never as Markdown or HTML."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import streamlit as st

from core import api
from core.auth import Role
from ui import state
from ui.errors import escape_markdown, show_errors
from ui.numbers import count

if TYPE_CHECKING:
    from core.api import EdgeDetail, NodeDetail, Workspace


def allowed() -> bool:
    """Whether this session may see and make edits (editor or admin)."""
    return state.can(Role.editor)


def _counts(detail: "NodeDetail") -> str:
    data = detail.attributes
    return (f"{count(detail.degree)} relation(s), {count(len(data.get('source_chunk_ids') or []))} source chunk(s), "
            f"{count(len(data.get('aliases') or []))} alias(es)")


def _run(ws: "Workspace", op: str, args: dict[str, Any]) -> None:
    with show_errors():
        result = api.edit_graph(state.principal(), ws, op, args)
        state.note_own_write(ws)  # this page's own change: no "changed outside this page" notice
        st.session_state["kg_edit_message"] = f"Edit {result.edit_id} ({op}) made."
        st.session_state.pop("kg_edge", None)
        st.rerun()


def _confirmed(key: str, what: str, action: Callable[[], None]) -> None:
    """A plain-text statement of the change, a confirmation tick and the button that runs it. The tick
    belongs to the statement: when it changes (another entity picked, another partner, another new
    name) the tick is cleared, so a change is never applied on a confirmation given for another."""
    st.text(what)
    if st.session_state.get(f"{key}_what") != what:
        st.session_state.pop(f"{key}_ok", None)
        st.session_state[f"{key}_what"] = what
    if st.checkbox("I confirm this change", key=f"{key}_ok") and st.button("Apply", key=f"{key}_go"):
        action()


def _changed(new: str, old: str, what: str) -> bool:
    """Whether a new name / type is worth a confirmation: the field starts with the current one, and Apply
    on it logged an edit that changed nothing (an empty one failed with "rename needs to")."""
    if not new.strip():
        st.caption(f"Type the new {what}.")
        return False
    if new.strip() == old.strip():
        st.caption(f"Type the new {what}: this is the current one.")
        return False
    return True


def entity_edits(ws: "Workspace", detail: "NodeDetail", others: dict[str, str]) -> None:
    """Merge, rename, retype, describe, delete and relate for one entity; ``others``: key -> name of the
    entities of the current view (search the graph to bring others into it)."""
    if not allowed():
        return
    name = str(detail.attributes.get("name") or detail.key)
    choices = sorted((k for k in others if k != detail.key), key=lambda k: others[k].lower())
    with st.expander("Edit this entity"):
        kind = st.radio("Edit", ["merge", "rename", "retype", "describe", "delete", "add relation"],
                        horizontal=True, key="kg_edit_kind")
        if kind == "merge" and choices:
            other = st.selectbox("Merge into this entity (search the graph to find others)", choices,
                                 format_func=lambda k: others[k][:80], key="kg_edit_merge_other")
            peer = api.graph_node(state.principal(), ws, False, other)
            if peer is not None:
                _confirmed("kg_merge", f"{others[other]} ({_counts(peer)}) will be merged into {name} "
                           f"({_counts(detail)}); {name} keeps its name and type, relations between the two are "
                           "dropped, parallel relations merged.",
                           lambda: _run(ws, "merge", {"names": [other], "into": detail.key}))
        elif kind == "rename":
            new = st.text_input("New name", value=name, key="kg_edit_rename", max_chars=300)
            if _changed(new, name, "name"):
                _confirmed("kg_rename", f"{name} will be named {new} ({count(detail.degree)} relation(s) re-embedded); the "
                           "old name stays as an alias.", lambda: _run(ws, "rename", {"name": detail.key, "to": new}))
        elif kind == "retype":
            old_type = str(detail.attributes.get("type") or "")
            new = st.text_input("New type", value=old_type, key="kg_edit_type", max_chars=60)
            if _changed(new, old_type, "type"):
                _confirmed("kg_retype", f"{name}: type {old_type or '—'} → {new}",
                           lambda: _run(ws, "retype", {"name": detail.key, "type": new}))
        elif kind == "describe":
            text = st.text_area("Description", value=str(detail.attributes.get("description") or ""),
                                key="kg_edit_describe", max_chars=4000)
            _confirmed("kg_describe", f"The description of {name} will be replaced.",
                       lambda: _run(ws, "describe", {"name": detail.key, "description": text}))
        elif kind == "delete":
            _confirmed("kg_delete", f"{name} and its {count(detail.degree)} relation(s) will be deleted "
                       f"({_counts(detail)}).", lambda: _run(ws, "delete_entity", {"name": detail.key}))
        elif kind == "add relation" and choices:
            other = st.selectbox("Relate to", choices, format_func=lambda k: others[k][:80], key="kg_edit_rel_other")
            text = st.text_input("Description", key="kg_edit_rel_text", max_chars=4000)
            keywords = st.text_input("Keywords (comma-separated)", key="kg_edit_rel_kw", max_chars=300)
            chunks = list(detail.attributes.get("source_chunk_ids") or [])
            chunk = st.selectbox("Source chunk", [""] + chunks, key="kg_edit_rel_chunk")
            _confirmed("kg_relate", f"A relation {name} — {others[other]} will be added (or completed).",
                       lambda: _run(ws, "relate", {"source": detail.key, "target": other, "description": text,
                                                   "keywords": [k for k in keywords.split(",") if k.strip()],
                                                   "chunk_id": chunk}))


def relation_edits(ws: "Workspace", edge: "EdgeDetail") -> None:
    """Delete one relation (editor or admin)."""
    if not allowed():
        return
    with st.expander("Edit this relation"):
        _confirmed("kg_delete_relation", f"The relation {edge.name_a} — {edge.name_b} will be deleted.",
                   lambda: _run(ws, "delete_relation", {"source": edge.a, "target": edge.b}))


def _shown(value: Any) -> str:
    """An edit argument as read: a list as its items joined with commas (was Python's ['a', 'b'])."""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def edit_summary(op: str, args: dict[str, Any]) -> str:
    """What an edit of the log did, in words: "anwen merged into river anwen", "kestrel island — anwen
    valley deleted"; an operation without a sentence lists its arguments (name: value)."""
    a = {k: _shown(v) for k, v in args.items()}
    sentences = {
        "merge": lambda: f"{a['names']} merged into {a['into']}",
        "rename": lambda: f"{a['name']} renamed to {a['to']}",
        "retype": lambda: f"{a['name']} given the type {a['type']}",
        "describe": lambda: f"{a['name']} described as: {a.get('description', '')}",
        "delete_entity": lambda: f"{a['name']} deleted",
        "delete_relation": lambda: f"the relation {a['source']} — {a['target']} deleted",
        "relate": lambda: (f"{a['source']} — {a['target']} related"
                           + (f" (keywords: {a['keywords']})" if a.get("keywords") else "")
                           + (f": {a['description']}" if a.get("description") else "")),
    }
    try:
        return sentences[op]()
    except KeyError:  # an unknown operation or a missing argument (an imported log): its arguments as written
        return "; ".join(f"{k}: {v}" for k, v in sorted(a.items()))


def history(ws: "Workspace") -> None:
    """The edit log, newest first, with undo (editor or admin)."""
    if not allowed():
        return
    if message := st.session_state.pop("kg_edit_message", None):
        st.success(escape_markdown(message))
    edits = api.graph_edits(state.principal(), ws)
    with st.expander(f"Edit history ({count(sum(not e.undone for e in edits))} active)"):
        if not edits:
            st.caption("No edits yet.")
        for edit in reversed(edits[-50:]):
            label = edit_summary(edit.op, edit.args)
            st.text(f"#{edit.id} {edit.op} {'(undone) ' if edit.undone else ''}by {edit.principal or '—'}: "
                    f"{label[:200]}")
            if not edit.undone and st.button("Undo", key=f"kg_undo_{edit.id}"):
                with show_errors():
                    api.undo_graph_edit(state.principal(), ws, edit.id)
                    state.note_own_write(ws)
                    st.session_state["kg_edit_message"] = f"Edit {edit.id} undone."
                    st.rerun()
