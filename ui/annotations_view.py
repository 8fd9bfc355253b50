"""Annotations in the app: marking retrieved chunks (Inspect, Compare) and the list on Evaluate.

``render_marking`` shows the chunks of one or several results for a question, each with a
relevant / not relevant choice, plus an optional expected answer, in one form saved to the workspace
(``core.annotations``). ``render_annotation_list`` lists the annotated questions on Evaluate with an
export (a question file that ``eval`` and the Evaluate page read as it is), an import and deletion.
Chunk texts and document names are untrusted: texts go through ``st.text``/``st.dataframe`` and names
are escaped before they reach Markdown.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional

import pandas as pd
import streamlit as st

from core import api
from core.auth import Role
from core.citations import pages_label
from core.types import RetrievalResult
from ui.errors import escape_markdown, show_errors
from ui.state import can, principal
from ui.safe_tables import safe_dataframe
from ui.numbers import count

if TYPE_CHECKING:
    from core.api import Workspace

CHOICES = ("—", "relevant", "not relevant")
VALUES: dict[str, Optional[bool]] = {"—": None, "relevant": True, "not relevant": False}
EXCERPT_CHARS = 600
DEFAULT_SHOWN = 10
SOURCE_LABEL = "Annotations of this workspace"


def chunk_rows(results: Mapping[str, RetrievalResult]) -> list[dict[str, Any]]:
    """The chunks of several results, once each, in order of their best rank (ties: mode order), with
    the modes that retrieved them."""
    rows: dict[str, dict[str, Any]] = {}
    for m_index, (mode, result) in enumerate(results.items()):
        for rank, chunk in enumerate(result.chunks):
            chunk_id = chunk.chunk_id
            if not chunk_id:
                continue
            row = rows.setdefault(chunk_id, {"chunk_id": chunk_id, "doc_id": chunk.doc_id,
                                             "doc_name": chunk.doc_name or chunk.doc_id, "order": chunk.order,
                                             "text": chunk.text, "modes": [], "rank": (rank, m_index),
                                             "pages": pages_label(chunk.page_start, chunk.page_end)})
            row["modes"].append(mode)
            row["rank"] = min(row["rank"], (rank, m_index))
    return sorted(rows.values(), key=lambda r: r["rank"])


def _choice(value: Optional[bool]) -> int:
    return 0 if value is None else (1 if value else 2)


def render_marking(ws: "Workspace", question: str, results: Mapping[str, RetrievalResult], key_prefix: str) -> None:
    """The annotation form for the chunks of ``results`` (one mode on Inspect, several on Compare)."""
    if not can(Role.editor):
        return  # annotating is an editor's action (the library refuses it for viewers too)
    st.subheader("Annotate the retrieved chunks")
    st.caption("Mark chunks relevant or not relevant to this question and, if you know it, the expected answer. "
               "The marks are kept in the workspace; the Evaluate page lists them and exports them as a question "
               "file with gold evidence.")
    rows = chunk_rows(results)
    if not rows:
        st.info("No chunk was retrieved: there is nothing to mark (summaries and graph records are not marked).")
        return
    existing = None
    with show_errors("Reading the annotations"):
        existing = api.annotation_for(principal(), ws, question)
    current = {m.chunk_id: m.relevant for m in existing.marks} if existing else {}
    qid = api.question_id(principal(), question)
    shown = int(st.number_input("Chunks to show", min_value=1, max_value=len(rows), value=min(DEFAULT_SHOWN, len(rows)),
                                key=f"{key_prefix}_annotate_count"))
    choices: dict[str, str] = {}
    with st.form(key=f"{key_prefix}_annotate_form"):
        for i, row in enumerate(rows[:shown]):
            by = ", ".join(row["modes"])
            st.caption(escape_markdown(f"{i + 1}. {row['doc_name']}, {row['pages'] + ', ' if row.get('pages') else ''}"
                                       f"chunk {row['order'] + 1} — retrieved by {by}"))
            text = row["text"]
            st.text(text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + " …")
            choices[row["chunk_id"]] = st.radio(
                "Relevance", CHOICES, index=_choice(current.get(row["chunk_id"])), horizontal=True,
                key=f"{key_prefix}_mark_{qid}_{row['chunk_id']}", label_visibility="collapsed")
        answer = st.text_input("Expected answer (optional)", value=existing.answer if existing else "",
                               key=f"{key_prefix}_answer_{qid}", max_chars=2000)
        saved = st.form_submit_button("Save annotations", key=f"{key_prefix}_annotate_save")
    if saved:
        marks = {chunk_id: VALUES[choice] for chunk_id, choice in choices.items()}
        modes = {row["chunk_id"]: ",".join(row["modes"]) for row in rows}
        with show_errors("Saving the annotations"):
            stored = api.save_annotation_marks(principal(), ws, question, marks, mode=modes, answer=answer)
            st.success(f"Saved: {count(len(stored.relevant))} relevant and {count(len(stored.not_relevant))} not relevant chunk(s) "
                       f"for this question ({count(len(stored.gold_doc_ids))} gold document(s)).")
    elif existing is not None and existing.marks:
        st.caption(f"Stored for this question: {count(len(existing.relevant))} relevant, {count(len(existing.not_relevant))} "
                   "not relevant chunk(s).")


def annotations_frame(ws: "Workspace") -> pd.DataFrame:
    """One row per annotated question."""
    names = api.doc_names(principal(), ws)
    rows = [{"qid": q.qid, "question": q.question, "expected answer": q.answer, "relevant": len(q.relevant),
             "not relevant": len(q.not_relevant),
             "gold documents": ", ".join(names.get(d, d) for d in q.gold_doc_ids),
             "modes": ", ".join(sorted({m.mode for m in q.marks if m.mode}))} for q in api.annotation_list(principal(), ws)]
    return pd.DataFrame(rows, columns=["qid", "question", "expected answer", "relevant", "not relevant",
                                       "gold documents", "modes"])


def questions_from_annotations(ws: "Workspace") -> list[Any]:
    """The annotations as evaluation questions, read from the export exactly as a file would be."""
    from core.evaluation.questions import parse_questions

    text = api.export_annotations(principal(), ws)
    return parse_questions(text.splitlines(), "annotations") if text.strip() else []


def render_annotation_list(ws: "Workspace") -> None:
    """The Evaluate page's Annotations section: list, export, import, delete."""
    st.subheader("Annotations")
    frame = annotations_frame(ws)
    if frame.empty:
        if can(Role.editor):
            st.caption("No annotations yet: mark retrieved chunks relevant or not relevant on the Inspect or "
                       "Compare page, or import a file of marks below.")
        else:  # a viewer has neither the marks nor the import
            st.caption("No annotations yet: an editor marks retrieved chunks relevant or not relevant on the "
                       "Inspect or Compare page, or imports a file of marks; they then show here.")
    else:
        st.caption(f"{count(len(frame))} annotated question(s). Chunks marked relevant become gold evidence: choose "
                   f"“{SOURCE_LABEL}” above to evaluate the modes on them, or download them as a question file.")
        safe_dataframe(frame, hide_index=True, key="annotations_table")
        st.download_button("Download annotations (JSONL question file)", api.export_annotations(principal(), ws),
                           file_name=f"annotations-{getattr(ws, 'name', 'workspace')}.jsonl",
                           mime="application/jsonl", key="annotations_download", on_click="ignore")
    if not can(Role.editor):
        return  # deleting and importing marks is an editor's action
    if not frame.empty:
        doomed = st.multiselect("Delete annotated questions", list(frame["qid"]), key="annotations_delete_pick",
                                format_func=lambda q: f"{q} — {frame.set_index('qid').loc[q, 'question'][:80]}")
        if st.button("Delete", key="annotations_delete", disabled=not doomed):
            with show_errors("Deleting annotations"):
                st.success(f"Deleted {count(api.delete_annotations(principal(), ws, doomed))} annotated question(s).")
                st.rerun()
    upload = st.file_uploader("Import marks from a question file (.jsonl)", type=["jsonl"],
                              key="annotations_upload")
    if st.button("Import", key="annotations_import", disabled=upload is None) and upload is not None:
        with show_errors("Importing annotations"):
            report = api.import_annotations(principal(), ws, upload.getvalue().decode("utf-8", errors="replace").splitlines(),
                                    upload.name)
            st.success(f"Imported {count(report.questions)} question(s) and {count(report.marks)} mark(s).")
            for reason in report.skipped:
                st.warning(escape_markdown(f"Skipped {reason}"))
