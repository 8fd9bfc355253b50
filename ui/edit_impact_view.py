"""The Knowledge graph page's "What the edits changed" (issue 33), for editors and admins only: one click
re-runs a question file on the index before edit N (a copy with edits N and later undone) and on the
index as it is, through ``core.api.evaluate_edits``, and shows every mode's recall before → after and
the questions whose evidence or answer changed. Tables only (cells are plain text)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import pandas as pd
import streamlit as st

from core import api
from core.auth import Role
from core.evaluation.questions import load_questions
from ui import state
from ui.errors import show_errors
from ui.question_files import left_out_note, offered_question_files, uploaded_questions
from ui.safe_tables import safe_dataframe
from ui.numbers import count

if TYPE_CHECKING:
    from core.api import EditImpact, Workspace

KEY = "kg_edit_impact"
UPLOAD = "Upload a question file"


def _pct(value: Optional[float]) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def table_frame(impact: "EditImpact") -> pd.DataFrame:
    """One row per mode: each measure as "before → after" (percent), and how many questions changed."""
    rows = []
    for row in impact.table():
        out: dict[str, Any] = {"mode": row["mode"]}
        for key, value in row.items():
            if key not in ("mode", "changed", "ctx-tokens"):
                out[key] = f"{_pct(value[0])} → {_pct(value[1])}"
        out["questions changed"] = row["changed"]
        rows.append(out)
    return pd.DataFrame(rows)


def _found(value: Optional[bool]) -> str:
    """A question's answer-in-answer as read: yes / no, or "—" when it has no gold answer (was "None")."""
    return "—" if value is None else ("yes" if value else "no")


def changed_frame(impact: "EditImpact", texts: dict[str, str]) -> pd.DataFrame:
    """One row per (question, mode) that changed: recall and the gold documents whose rank moved."""
    ks = impact.after.ks
    rows = []
    for c in impact.changed:
        moved = "; ".join(f"{g}: {c['gold_ranks_before'].get(g) or '—'} → {r or '—'}"
                          for g, r in c["gold_ranks_after"].items() if c["gold_ranks_before"].get(g) != r)
        rows.append({"question": texts.get(c["qid"], c["qid"])[:160], "mode": c["mode"],
                     **{f"R@{k}": f"{_pct(c[f'R@{k}'][0])} → {_pct(c[f'R@{k}'][1])}" for k in ks},
                     "answer found": f"{_found(c['answer_in_answer'][0])} → {_found(c['answer_in_answer'][1])}",
                     "gold rank moved": moved})
    return pd.DataFrame(rows)


def panel(ws: "Workspace") -> None:
    """The expander (nothing for a viewer or a workspace without active edits)."""
    if not state.can(Role.editor):
        return
    active = [e for e in api.graph_edits(state.principal(), ws) if not e.undone]
    if not active:
        return
    with st.expander("What the edits changed (evaluation before → after)"):
        files, left_out = offered_question_files(ws)  # only those written for this workspace's corpus
        choice = st.selectbox("Questions", [*files, UPLOAD], key="kg_impact_file")
        if left_out:
            st.caption(left_out_note(left_out, len(api.doc_names(state.principal(), ws))))
        upload = (st.file_uploader("Question file (.jsonl)", type=["jsonl"], key="kg_impact_upload")
                  if choice == UPLOAD else None)
        ids = [e.id for e in active]
        since = st.selectbox("Edits from number", ids, key="kg_impact_since",
                             help="Before = the index with this edit and every later one undone (in a copy).")
        limit = st.number_input("First N questions (0 = all)", 0, 100_000, 0, key="kg_impact_limit")
        if st.button("Re-run before → after", key="kg_impact_go", disabled=choice == UPLOAD and upload is None):
            with show_errors(), st.spinner("Evaluating twice: before the edits (a copy) and after…"):
                questions = load_questions(files[choice]) if choice in files else uploaded_questions(upload)
                questions = questions[: int(limit)] if limit else questions
                impact = api.evaluate_edits(state.principal(), ws, questions, api.mode_names(state.principal()),
                                            int(since))
                st.session_state[KEY] = {"ws": str(ws.path), "impact": impact,
                                         "texts": {q.qid: q.question for q in questions}}
        last = st.session_state.get(KEY)
        if last and last["ws"] == str(ws.path):
            impact = last["impact"]
            st.caption(f"{count(impact.after.questions)} questions; before = edits {', '.join(map(str, impact.undone))} "
                       "undone in a copy of the workspace.")
            safe_dataframe(table_frame(impact), hide_index=True, use_container_width=True)
            if impact.changed:
                safe_dataframe(changed_frame(impact, last["texts"]), hide_index=True, use_container_width=True)
            else:
                st.caption("No question's evidence or answer changed.")
