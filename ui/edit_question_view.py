"""Compare's and Inspect's "What the last edits changed for this question" (issue 33), for editors and admins
of a workspace with active graph edits: one click runs the question on the index before the chosen edit
(``core.api.edit_question_diff``: a copy with that edit and every later one undone) and on the index as
it is, and shows per mode what entered or left the top k — evidence chunks, entities, relations, paths —
and whether the extractive answer changed. Every name, label and answer is shown as table cells or plain
text (``st.text``), never as Markdown or HTML."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

import pandas as pd
import streamlit as st

from core import api
from core.auth import Role
from ui import state
from ui.errors import show_errors
from ui.escape import md
from ui.graph_edits_view import edit_summary
from ui.safe_tables import safe_dataframe

if TYPE_CHECKING:
    from core.api import QuestionDiff, Workspace

TOP_K = 10
KIND_LABELS = {"chunks": "chunk", "entities": "entity", "relations": "relation", "paths": "path"}


def edit_label(edit: Any) -> str:
    """An edit in the "Before edit" picker: its number and what it did, in words (no Python lists)."""
    return f"#{edit.id} {edit.op}: {edit_summary(edit.op, edit.args)}"[:120]


def _rank(value: Optional[int]) -> str:
    return "—" if value is None else str(value)


def summary_frame(diff: "QuestionDiff") -> pd.DataFrame:
    """One row per mode: how many chunks, entities, relations and paths entered and left the top k ("2 in,
    1 out"), and whether the answer changed. Not "+2 / −1": a cell starting with + is given the formula guard's
    leading ' by ``safe_dataframe``, and the table showed "'+0 / −0"."""
    rows = []
    for mode in diff.modes:
        row: dict[str, Any] = {"mode": mode.mode}
        for kind in KIND_LABELS:
            row[kind] = f"{len(mode.entered[kind]):,} in, {len(mode.left[kind]):,} out"
        row["answer changed"] = mode.answer_change
        rows.append(row)
    return pd.DataFrame(rows)


def moves_frame(diff: "QuestionDiff", mode: str) -> pd.DataFrame:
    """Every item that entered or left one mode's top k, with its rank before and after."""
    found = next(m for m in diff.modes if m.mode == mode)
    rows: list[dict[str, str]] = []
    for kind, word in KIND_LABELS.items():
        for change, items in (("entered", found.entered[kind]), ("left", found.left[kind])):
            rows.extend({"what": word, "change": change, "item": item.label[:200],
                         "rank before": _rank(item.rank_before), "rank after": _rank(item.rank_after)}
                        for item in items)
    return pd.DataFrame(rows, columns=["what", "change", "item", "rank before", "rank after"])


def render_diff(diff: "QuestionDiff", key: str) -> None:
    """The summary table, then each changed mode's moves and answers."""
    st.caption(f"Before = edit(s) {', '.join(f'#{i}' for i in diff.undone)} undone in a copy of the workspace; "
               f"after = the index as it is. Top {diff.top} of each list; answers are extractive (no LLM) on "
               "both sides.")
    safe_dataframe(summary_frame(diff), hide_index=True, key=f"{key}_edit_diff_summary")
    if not diff.changed_modes:
        st.caption("No mode's top evidence or answer changed for this question.")
        return
    for mode in diff.changed_modes:
        found = next(m for m in diff.modes if m.mode == mode)
        st.markdown(f"**{md(mode)}**")
        frame = moves_frame(diff, mode)
        if len(frame):
            safe_dataframe(frame, hide_index=True, key=f"{key}_edit_diff_{mode}")
        if found.answer_changed:
            st.caption(f"Answer ({found.answer_change} changed): − before, + after")
            st.code("\n".join(line[:400] for line in found.answer_lines()[:40]), language=None, wrap_lines=True)


def panel(ws: "Workspace", question: str, modes: Sequence[str], key: str) -> None:
    """The expander (nothing for a viewer, a workspace without active edits or an empty question)."""
    if not state.can(Role.editor) or not question.strip() or not modes:
        return
    active = [e for e in api.graph_edits(state.principal(), ws) if not e.undone]
    if not active:
        return
    store = f"{key}_edit_diff"
    last = st.session_state.get(store)
    fresh = bool(last and last["ws"] == str(ws.path) and last["question"] == question and last["modes"] == list(modes))
    with st.expander(f"What the graph edits changed for this question ({len(active):,} active edit(s))",
                     expanded=fresh):
        by_id = {e.id: e for e in active}
        ids = sorted(by_id, reverse=True)
        since = st.selectbox("Before edit", ids, format_func=lambda i: edit_label(by_id[i]), key=f"{key}_edit_since",
                             help="Before = the index with this edit and every later one undone (a copy); the "
                                  "newest edit alone by default.")
        if st.button("Show before → after", key=f"{key}_edit_diff_go"):
            with show_errors(), st.spinner("Running the question before the edit(s) (a copy) and after…"):
                diff = api.edit_question_diff(state.principal(), ws, question, list(modes), int(since), TOP_K,
                                              settings=state.session_settings())
                last = {"ws": str(ws.path), "question": question, "modes": list(modes),
                        "generation": api.generation(state.principal(), ws), "diff": diff}
                st.session_state[store] = last
                st.rerun()  # drawn again with the expander open
        if fresh and last:
            if last["generation"] != api.generation(state.principal(), ws):
                st.info("The workspace changed since; press the button again to refresh.")
            render_diff(last["diff"], key)
