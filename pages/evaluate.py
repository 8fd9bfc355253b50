"""Evaluate: run a question set with gold evidence against selected modes.

Recall@k of gold documents over each mode's ranked evidence, all@k, answer-in-context rate,
answer-in-answer rate (of each mode's offline extractive answer, whole answer and first line),
context tokens and latency, with a BM25 reference row; bootstrap 95% intervals on the bars;
a per-question table and downloads; where each mode lost the gold evidence (``ui.loss_view``).
Below: the LLM judge's pairwise win rates (``ui.judge_view``) and the analyst's annotations
(``ui.annotations_view``), which are also a question source.
"""
from __future__ import annotations

import json

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ui.auth_gate import guard

guard()  # the refusal / sign-in page unless this session may open it (app.py gates first)

from core import api  # noqa: E402
from core.csv_safe import csv_text  # noqa: E402
from core.evaluation.questions import load_questions, parse_questions  # noqa: E402
from core.types import ProgressEvent  # noqa: E402
from ui import annotations_view, judge_view, loss_view, state  # noqa: E402
from ui.eval_tables import (NO_VALUE, answers_frame, auto_chosen_text, auto_frame, counted_over,  # noqa: E402
                            MAX_K, MAX_KS, evidence_frame, gold_rank_columns, gold_rank_frame, parse_ks, rows_frame,
                            summary_notes)
from ui.examples import remember_questions  # noqa: E402
from ui.question_files import left_out_note, offered_question_files  # noqa: E402
from ui.errors import show_errors  # noqa: E402
from ui.state import current_workspace_name, session_settings, workspace  # noqa: E402
from ui.escape import md  # noqa: E402
from ui.safe_tables import safe_dataframe  # noqa: E402

STATE_KEY = "evaluate_last"


def _recall_figure(report, k: int) -> go.Figure:
    modes = list(report.modes)
    values = [100 * (report.modes[m]["recall@k"][str(k)] or 0) for m in modes]
    lows = [report.modes[m]["recall_ci95@k"][str(k)][0] for m in modes]
    highs = [report.modes[m]["recall_ci95@k"][str(k)][1] for m in modes]
    plus = [100 * h - v if h is not None else 0 for h, v in zip(highs, values)]
    minus = [v - 100 * lo if lo is not None else 0 for lo, v in zip(lows, values)]
    fig = go.Figure(go.Bar(x=modes, y=values, error_y={"type": "data", "array": plus, "arrayminus": minus},
                           marker_color=["#888888" if m == "bm25" else "#3b82f6" for m in modes]))
    fig.update_layout(title=f"Recall@{k} of gold documents, averaged over questions (95% bootstrap interval)",
                      yaxis_title="% (mean over questions)",
                      height=360, margin={"l": 40, "r": 10, "t": 50, "b": 40})
    return fig


@show_errors()
def main() -> None:
    st.title("Evaluate")
    st.caption("Evidence recall of each retrieval mode against gold documents, and how often the gold answer is in "
               "the mode's offline extractive answer (answer in answer; no LLM answer is generated, so the rate is "
               "comparable with or without an LLM). The workspace must hold the corpus the questions were written "
               "for, with its doc_ids.")
    ws = workspace()
    if api.chunk_count(state.principal(), ws) == 0:
        st.info("This workspace is empty: index the matching corpus on the Documents page first.")
        return
    modes = api.mode_names(state.principal())
    files, left_out = offered_question_files(ws)  # only the files written for this workspace's corpus
    source = st.radio("Questions", ["Built-in or shared file", "Upload a file", annotations_view.SOURCE_LABEL],
                      key="eval_source", persist_state="session", horizontal=True)
    questions = None
    if source == annotations_view.SOURCE_LABEL:
        questions = annotations_view.questions_from_annotations(ws)
        if not questions:
            st.info("No annotations yet: mark retrieved chunks on the Inspect or Compare page.")
    elif source == "Upload a file":
        upload = st.file_uploader("Question file (.jsonl)", type=["jsonl"], key="eval_upload")
        if upload is not None:
            questions = parse_questions(upload.getvalue().decode("utf-8", errors="replace").splitlines(), upload.name)
            remember_questions(upload.name, questions)
    elif files:
        choice = st.selectbox("Question file", list(files), key="eval_file")
        questions = load_questions(files[choice])
        remember_questions(choice, questions)
    else:
        st.info("No built-in question file is about this workspace's documents: upload a question file.")
    if left_out and source == "Built-in or shared file":
        st.caption(left_out_note(left_out, len(api.doc_names(state.principal(), ws))))
    chosen = st.multiselect("Modes", modes, default=modes, key="eval_modes", persist_state="session")
    ks_text = st.text_input("k values", "2,5,10", key="eval_ks", persist_state="session", max_chars=100,
                            help=f"Recall cut-offs, e.g. 2,5,10: at most {MAX_KS} whole numbers from 1 to {MAX_K}.")
    ks, dropped = parse_ks(ks_text)
    if dropped:  # said before the run, not silently replaced
        st.warning(f"Left out of k values: {md('; '.join(dropped[:5]))}{' …' if len(dropped) > 5 else ''}. "
                   f"The run uses k = {', '.join(map(str, ks))}.")
    limit = st.number_input("Questions to run (0 = all)", min_value=0, value=0, step=5, key="eval_limit",
                            persist_state="session")
    selected = (questions[: int(limit)] if limit else questions) or []
    cap = api.question_limit(state.principal(), ws)
    if len(selected) > cap:  # said before the run (the library refuses it too)
        st.error(f"{len(selected):,} questions, over this workspace's limit of {cap:,} per run: set 'Questions to "
                 f"run' to {cap:,} or fewer, or ask an admin to raise 'Most questions per evaluation' in Settings.")
    if st.button("Run evaluation", type="primary", key="eval_run",
                 disabled=not questions or not chosen or len(selected) > cap):
        bar = st.progress(0.0, text="Starting…")

        def progress(event: ProgressEvent) -> None:
            bar.progress(min(1.0, event.done / max(event.total, 1)), text=f"{event.done:,}/{event.total:,} · {md(event.message)}")

        report = api.evaluate(state.principal(), ws, selected, chosen, ks, settings=session_settings(), progress=progress)
        bar.progress(1.0, text="Done")
        st.session_state[STATE_KEY] = {"workspace": current_workspace_name(), "report": report,
                                       "questions": {q.qid: q.question for q in selected}}
    last = st.session_state.get(STATE_KEY)
    if last and last["workspace"] == current_workspace_name():
        render_report(last["report"], ws, last.get("questions") or {})
    st.divider()
    with show_errors("The judge"):
        judge_view.render_judge(ws, questions, session_settings())
    st.divider()
    with show_errors("Annotations"):
        annotations_view.render_annotation_list(ws)


def render_report(report, ws, questions: dict[str, str]) -> None:
    """The last evaluation's tables, charts, evidence loss and downloads."""
    for warning in report.warnings:
        st.warning(md(warning))
    st.subheader(f"{report.questions:,} questions")
    over = counted_over(report)
    st.markdown("**Evidence: recall of the gold documents, per question then averaged** — over the "
                f"{over['with_gold']:,} of {over['questions']:,} questions that have gold documents "
                f"({over['gold_documents']:,} gold documents in all). R@k: share of a question's gold documents in "
                "the mode's top k; all@k: share of questions with every gold document in the top k.")
    safe_dataframe(evidence_frame(report), hide_index=True, key="eval_summary_table")
    st.markdown(f"**Answers and cost, per question then averaged** — the answer rates over the {over['with_answer']:,} "
                f"of {over['questions']:,} questions that have a gold answer; tokens and latency over all "
                f"{over['questions']:,}. In context / in answer / in first line: the gold answer is in the mode's context, "
                "in its extractive answer, in that answer's first line. Bold = / ≠ gold: the first line's bold short "
                "answer is / is not the gold answer (no bold counts as neither). A gold answer longer than six words "
                "(a sentence) is matched by its content words instead, and left out of the bold columns.")
    safe_dataframe(answers_frame(report), hide_index=True, key="eval_answers_table", width="stretch")
    for note in summary_notes(report):
        st.caption(note)
    routed = auto_frame(report)
    if routed is not None:
        st.markdown("**auto: one mode chosen per question** — against the best fixed mode of this run and the "
                    "per-question oracle (the best mode on each question); regret = oracle − auto. auto chose: "
                    f"{md(auto_chosen_text(report))}.")
        safe_dataframe(routed, hide_index=True, key="eval_auto_table")
    k_plot = st.selectbox("Recall chart at k", report.ks, index=min(1, len(report.ks) - 1), key="eval_k_plot")
    st.plotly_chart(_recall_figure(report, int(k_plot)), key="eval_recall_chart")
    names = api.doc_names(state.principal(), ws)
    st.subheader("Per question: where each mode ranked the gold documents")
    st.caption("Per-question view. One row per question and gold document; a number is the rank at which the mode's ranked evidence "
               "reached that document (1 = first), — = the mode did not retrieve it.")
    ranks = gold_rank_frame(report.rows, questions, names)
    modes = [c for c in ranks.columns if c not in ("qid", "question", "document")]
    widths = gold_rank_columns(modes)
    shown = ranks.drop(columns=["qid"])  # qid: in the rows below
    for mode in modes:  # a missing rank reads "—" (a number column showed NaN as "None")
        shown[mode] = shown[mode].map(lambda v: NO_VALUE if pd.isna(v) else f"{int(v)}")
    safe_dataframe(shown, hide_index=True, key="eval_gold_ranks",
                 column_config={c: st.column_config.TextColumn(c, width=w) for c, w in widths.items()})
    rows = rows_frame(report.rows, names)
    with st.expander("All per-question rows (one per question and mode)", expanded=False):
        safe_dataframe(rows, hide_index=True, key="eval_rows_table")
    raw = pd.DataFrame([{**r, "gold": ", ".join(r["gold"]), "found_ranks": json.dumps(r["found_ranks"]),
                         **{k: json.dumps(r[k]) for k in ("evidence_loss", "evidence_loss_chunks") if k in r}}
                        for r in report.rows])
    st.download_button("Download summary (JSON)", json.dumps(report.summary(), indent=2), "eval_summary.json",
                       "application/json", key="eval_dl_summary")
    st.download_button("Download per-question rows (CSV)", rows_csv(raw), "eval_rows.csv", "text/csv",
                       key="eval_dl_rows")
    loss_view.render_loss(report, names)


def rows_csv(raw: pd.DataFrame) -> str:
    """The per-question rows as CSV, empty cells for missing values, formula-looking cells neutralised
    (``core.csv_safe``: ids and types come from uploaded files)."""
    cells = raw.astype(object).where(raw.notna(), "")
    return csv_text(cells.to_dict("records"), [str(c) for c in raw.columns])


main()
