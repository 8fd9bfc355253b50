"""Evaluate: the LLM judge — pairwise win rates between modes (LightRAG's and PathRAG's evaluation).

The section asks for modes, a criteria set and how many questions of the chosen file to judge; shows
the cost estimate (calls and tokens, cached calls free) before the run is allowed; runs the judge on a
background thread (``ui.judge_job``) with progress and a Cancel button; and shows the results: one
win-rate heatmap per criterion, the counts with invalid verdicts, the judge's position bias and order
agreement, estimated against measured cost, and per question both answers side by side with the
verdicts of both orders and their one-line reasons. A report saved by ``python -m core judge --json``
can be loaded to view it without an LLM. Answers, reasons and replies are untrusted text: shown with
``st.text``, ``st.dataframe`` and ``st.code`` only.
"""
from __future__ import annotations

import json
import math
import threading
from typing import TYPE_CHECKING, Any, Optional, Sequence

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core import api
from core.api import JudgeReport
from core.judge.prompt import CRITERIA_SETS
from ui.errors import escape_markdown, show_errors
from ui.judge_job import JudgeJob
from ui.escape import label, md, plotly_text
from ui.safe_tables import safe_dataframe
from ui.numbers import count

if TYPE_CHECKING:
    from core.api import Workspace

STATE_KEY = "judge_last"
JOB_KEY = "judge_job"
ESTIMATE_KEY = "judge_estimate_result"
POLL_S = 1.0
DEFAULT_QUESTIONS = 5


def win_rate_figure(report: JudgeReport, criterion: str) -> go.Figure:
    """Heatmap: the win rate of the row's mode over the column's mode (ties count half), counts on hover."""
    rates = report.win_rates()[criterion]
    counts = report.pairs()
    modes = report.modes
    z, text, hover = [], [], []
    for a in modes:
        row_z, row_t, row_h = [], [], []
        for b in modes:
            value = rates[a][b]
            row_z.append(math.nan if value is None else value)
            row_t.append("–" if value is None else f"{100 * value:.0f}%")
            key = f"{a}|{b}" if f"{a}|{b}" in counts else f"{b}|{a}"
            n = counts.get(key, {}).get(criterion)
            row_h.append("" if n is None else f"{plotly_text(a, 60)} {n[a]} · {plotly_text(b, 60)} {n[b]} · "
                                               f"tie {n['tie']} · invalid {n['invalid']}")
        z.append(row_z)
        text.append(row_t)
        hover.append(row_h)
    shown = [plotly_text(m, 60) for m in modes]  # a report read from a file names its own modes
    fig = go.Figure(go.Heatmap(z=z, x=shown, y=shown, zmin=0, zmax=1, zmid=0.5, colorscale="RdBu", text=text,
                               texttemplate="%{text}", customdata=hover,
                               hovertemplate="%{y} over %{x}: %{text}<br>%{customdata}<extra></extra>"))
    readable = any(v is not None for row in rates.values() for v in row.values())
    title = plotly_text(criterion) + ("" if readable else " — no readable verdict")
    fig.update_layout(title=title, height=140 + 46 * len(modes), yaxis_autorange="reversed",
                      margin=dict(l=10, r=10, t=40, b=10), xaxis_title="against", yaxis_title="win rate of")
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def counts_frame(report: JudgeReport) -> pd.DataFrame:
    """One row per pair and criterion: both modes' wins, ties and invalid verdicts."""
    rows = []
    for key, by_criterion in report.pairs().items():
        a, b = key.split("|", 1)
        for criterion, n in by_criterion.items():
            rows.append({"pair": f"{a} vs {b}", "criterion": criterion, "mode A": a, "A wins": n[a], "mode B": b,
                         "B wins": n[b], "ties": n["tie"], "invalid": n["invalid"]})
    return pd.DataFrame(rows, columns=["pair", "criterion", "mode A", "A wins", "mode B", "B wins", "ties", "invalid"])


def cost_frame(estimate: Optional[dict[str, Any]], usage: Optional[dict[str, Any]]) -> pd.DataFrame:
    """Estimated and measured cost side by side."""
    rows = []
    if estimate:
        rows.append({"": "estimate (before)", "calls": estimate.get("calls"), "cached": estimate.get("cached"),
                     "prompt tokens": estimate.get("prompt_tokens"),
                     "completion tokens": estimate.get("completion_tokens"),
                     "completion tokens (max)": estimate.get("completion_tokens_max"), "seconds": None})
    if usage:
        rows.append({"": "measured (after)", "calls": usage.get("calls"), "cached": usage.get("cached"),
                     "prompt tokens": usage.get("prompt_tokens"), "completion tokens": usage.get("completion_tokens"),
                     "completion tokens (max)": None, "seconds": usage.get("seconds")})
    return pd.DataFrame(rows, columns=["", "calls", "cached", "prompt tokens", "completion tokens",
                                       "completion tokens (max)", "seconds"])


def verdicts_frame(report: JudgeReport, question_index: int, pair: str) -> pd.DataFrame:
    """Both orders' verdicts for one question and pair: who was shown first, the winner, the reason."""
    rows = []
    for j in report.questions[question_index].judgments:
        if j.pair != pair:
            continue
        for criterion in report.criteria:
            rows.append({"Answer 1 → Answer 2": f"{j.first} → {j.second}", "criterion": criterion,
                         "winner": j.verdicts.get(criterion, ""), "reason": j.reasons.get(criterion, ""),
                         "note": j.note})
    return pd.DataFrame(rows, columns=["Answer 1 → Answer 2", "criterion", "winner", "reason", "note"])


def render_report(report: JudgeReport) -> None:
    """Heatmaps, counts, judge checks, cost, and per-question verdicts with both answers side by side."""
    st.caption(f"Judge: {md(report.model or 'unknown model')} · criteria: {md(', '.join(report.criteria))} · "
               f"{count(len(report.questions))} question(s), {count(len(report.pair_keys()))} pair(s), each asked in both orders")
    if report.cancelled:
        st.warning("The run was cancelled: these are the questions finished before the stop. Run it again to "
                   "resume (the calls already answered are cached).")
    columns = st.columns(2)
    for i, criterion in enumerate(report.criteria):
        with columns[i % 2]:
            st.plotly_chart(win_rate_figure(report, criterion), key=f"judge_heatmap_{criterion}")
    consistency = report.consistency()
    invalid = report.invalid_count()
    share, agree = consistency["first_position_share"], consistency["order_agreement"]
    st.caption(
        f"Invalid verdicts (the reply named no winner): {invalid}. "
        + (f"Decisive verdicts for the answer shown first: {100 * share:.0f}% (50% = no position bias). "
           if share is not None else "")
        + (f"Both orders named the same winner in {100 * agree:.0f}% of {consistency['judged_in_both_orders']} "
           "verdicts judged in both." if agree is not None else ""))
    safe_dataframe(counts_frame(report), hide_index=True, key="judge_counts")
    safe_dataframe(cost_frame(report.estimate, report.usage), hide_index=True, key="judge_cost")
    if not report.questions:
        return
    st.markdown("**Per question**")
    labels = [f"{q.qid}: {q.question[:90]}" for q in report.questions]
    index = st.selectbox("Question", range(len(labels)), format_func=lambda i: labels[i], key="judge_question")
    pair = st.selectbox("Pair", report.pair_keys(), format_func=lambda p: p.replace("|", " vs "), key="judge_pair")
    q = report.questions[int(index)]
    st.text(q.question)
    a, b = pair.split("|", 1)
    left, right = st.columns(2)
    for column, mode in ((left, a), (right, b)):
        with column:
            st.caption(f"{md(mode)} · {count(q.context_tokens.get(mode, 0))} context tokens")
            st.text(q.answers.get(mode, "") or "(no answer)")
    safe_dataframe(verdicts_frame(report, int(index), pair), hide_index=True, key="judge_verdicts")
    for j in q.judgments:
        if j.pair == pair and j.raw:
            with st.expander(f"Judge reply ({label(j.first)} shown first): not fully readable"):
                st.code(j.raw, language=None)
    st.download_button("Download the judge report (JSON)", json.dumps(report.to_dict(), indent=1),
                       "judge_report.json", "application/json", key="judge_download", on_click="ignore")


def _signature(questions: Sequence[Any], modes: Sequence[str], criteria: str, generation: int) -> str:
    return json.dumps([[q.qid for q in questions], list(modes), criteria, generation])


def _cancel() -> None:
    job = st.session_state.get(JOB_KEY)
    if job is not None:
        job.cancel()


@st.fragment(run_every=POLL_S)
def _job_panel() -> None:
    job: Optional[JudgeJob] = st.session_state.get(JOB_KEY)
    if job is None:
        return
    if not job.running:
        st.session_state.pop(JOB_KEY, None)
        if job.state == "error":
            st.session_state["judge_error"] = job.error
        else:
            st.session_state[STATE_KEY] = {"workspace": job.ws.name, "report": job.report}
        st.rerun()
    snap = job.snapshot()
    fraction = snap["done"] / snap["total"] if snap["total"] else 0.0
    st.progress(min(fraction, 1.0), text=escape_markdown(f"Judging: {snap['done']}/{snap['total']} · "
                                                         f"{snap['message']} ({snap['seconds']:.0f} s)"))
    if snap["cancelling"]:
        st.warning("Cancelling at the next safe point (LLM calls in flight finish; their replies are cached)…")
    else:
        st.button("Cancel", key="judge_cancel", on_click=_cancel,
                  help="Stop after the calls in flight; run again to resume from the cache.")


def render_judge(ws: "Workspace", questions: Optional[Sequence[Any]], settings: Any) -> None:
    """The Judge section of the Evaluate page (``questions``: those the page loaded, or None)."""
    from ui.llm import session_llm
    from ui.state import principal

    st.subheader("Judge: LLM win rates between modes")
    st.caption("As in the LightRAG and PathRAG papers: each mode answers with the LLM, and the LLM judges every "
               "pair of answers on the chosen criteria, each pair in both orders (to cancel position bias); no "
               "gold answers are needed. Everything is cached: a re-run costs nothing and a cancelled run resumes.")
    with show_errors("Loading a judge report"):
        upload = st.file_uploader("View a saved judge report (JSON from `python -m core judge --json`)",
                                  type=["json"], key="judge_report_upload")
        if upload is not None:
            report = JudgeReport.from_dict(json.loads(upload.getvalue().decode("utf-8", errors="replace")))
            st.session_state[STATE_KEY] = {"workspace": ws.name, "report": report}
    llm = session_llm(ws, settings, build=False)
    if not llm.enabled:
        from core.auth import Role
        from ui.state import can

        where = ("choose the OpenAI-compatible provider in Settings" if can(Role.admin)
                 else "an admin chooses the provider in Settings (ask the operator)")
        st.info(escape_markdown(llm.note or f"The judge needs an LLM: {where} (offline answers are extractive "
                                "quotes, which the papers do not judge)."))
    elif not questions:
        st.info("Choose a question file above: the judge needs questions (answers are not needed).")
    else:
        cols = st.columns([3, 2, 2])
        chosen = cols[0].multiselect("Modes to compare", api.mode_names(principal()), default=["naive", "hybrid", "path"],
                                     key="judge_modes")
        criteria = cols[1].radio("Criteria", list(CRITERIA_SETS), key="judge_criteria", horizontal=True,
                                 help="; ".join(f"{k}: {', '.join(c.name for c in v)}" for k, v in CRITERIA_SETS.items()))
        how_many = int(cols[2].number_input("Questions", min_value=1, max_value=len(questions),
                                         value=min(DEFAULT_QUESTIONS, len(questions)), key="judge_count"))
        selected = list(questions[:how_many])
        signature = _signature(selected, chosen, criteria, api.generation(principal(), ws))
        running = st.session_state.get(JOB_KEY) is not None
        if st.button("Estimate cost", key="judge_estimate", disabled=len(chosen) < 2 or running):
            with show_errors("Estimating the cost"), st.spinner("Retrieving and reading the cache…"):
                chat = session_llm(ws, settings).chat
                estimate = api.estimate_judge_cost(principal(), ws, selected, chosen, chat, criteria=criteria, settings=settings)
                st.session_state[ESTIMATE_KEY] = {"signature": signature, "estimate": estimate}
        known: Any = st.session_state.get(ESTIMATE_KEY)  # None or the estimate dict stored above
        ready = bool(known) and known["signature"] == signature
        if ready:
            e = known["estimate"]
            st.text(f"Estimate: {e['calls']} LLM call(s) to make and {e['cached']} cached; ~{e['prompt_tokens']:,} "
                    f"prompt + ~{e['completion_tokens']:,} completion tokens (at most {e['completion_tokens_max']:,}).")
        elif len(chosen) >= 2:
            st.caption("Estimate the cost first; the run starts after you have seen it.")
        if st.button("Run judge", type="primary", key="judge_run", disabled=not ready or running):
            with show_errors("Starting the judge"):
                cancel = threading.Event()
                chat = session_llm(ws, settings, cancel_event=cancel).chat
                job = JudgeJob(ws, selected, chosen, chat, cancel, estimate=known["estimate"], principal=principal(),
                               criteria=criteria, settings=settings)
                st.session_state[JOB_KEY] = job.start()
                st.rerun()
        _job_panel()
    error = st.session_state.pop("judge_error", None)
    if error is not None:
        from ui.errors import render_exception

        render_exception(error, "The judge stopped")
    last = st.session_state.get(STATE_KEY)
    if last and last["workspace"] == ws.name and last["report"] is not None:
        render_report(last["report"])
