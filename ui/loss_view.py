"""Evaluate: where each mode lost the gold evidence (``core.evaluation.loss``).

Over the question set: one line per mode naming its biggest loss, a stacked bar of the stages per mode
and the funnel (gold → reached → selected → in context → top k) per mode. Per question: the same
funnel for the chosen question and a table of each gold document's stage per mode. The figures take
plain report rows, so they can be tested without a browser.
"""
from __future__ import annotations

import html
from typing import Any, Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from ui.safe_tables import safe_dataframe

from core.evaluation.loss import LEVELS, STAGE_LABELS, STAGES, funnel, loss_sentence, stage_counts

LEVEL_COLOURS = {"gold": "#64748b", "reached": "#f97316", "selected": "#facc15", "in context": "#86efac",
                 "top k": "#16a34a"}
COLOURS = {"found": "#16a34a", "below_k": "#86efac", "over_budget": "#facc15", "not_selected": "#fb923c",
           "not_reached": "#dc2626"}


def counts_by_mode(rows: Sequence[Mapping[str, Any]], qid: str | None = None) -> dict[str, dict[str, int]]:
    """Stage counts per mode over the rows (of one question when ``qid`` is given), modes in row order."""
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    return {m: stage_counts(r.get("evidence_loss") or {} for r in rows if r["mode"] == m
                            and (qid is None or r["qid"] == qid)) for m in modes}


def funnel_figure(counts: Mapping[str, Mapping[str, int]], title: str, per_row: int = 4) -> go.Figure:
    """A small funnel per mode: gold items that got at least as far as each level."""
    from plotly.subplots import make_subplots

    modes = list(counts)
    rows = max(1, -(-len(modes) // per_row))
    cols = min(per_row, max(len(modes), 1))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=modes, shared_yaxes=True,
                        horizontal_spacing=0.03, vertical_spacing=0.12)
    for i, mode in enumerate(modes):
        levels = funnel(counts[mode])
        fig.add_trace(go.Funnel(name=mode, y=list(LEVELS), x=[levels[level] for level in LEVELS], textinfo="value",
                                marker={"color": [LEVEL_COLOURS[level] for level in LEVELS]},
                                connector={"fillcolor": "#e5e7eb"}, showlegend=False,
                                hovertemplate=mode + " · %{y}: %{x}<extra></extra>"),
                      row=i // cols + 1, col=i % cols + 1)
    fig.update_layout(title=title, height=80 + 190 * rows, margin=dict(l=10, r=10, t=60, b=10))
    fig.update_yaxes(automargin=True)
    return fig


def stage_share_figure(counts: Mapping[str, Mapping[str, int]], title: str) -> go.Figure:
    """Stacked horizontal bars: the share of gold items ending at each stage, one bar per mode."""
    modes = list(counts)
    fig = go.Figure()
    for stage in STAGES:
        shares = [100 * counts[m][stage] / max(sum(counts[m].values()), 1) for m in modes]
        fig.add_bar(name=STAGE_LABELS[stage], y=modes, x=shares, orientation="h", marker_color=COLOURS[stage],
                    hovertemplate="%{y} · " + STAGE_LABELS[stage] + ": %{x:.0f}%<extra></extra>")
    fig.update_layout(title=title, barmode="stack", height=120 + 34 * len(modes), xaxis_title="% of gold documents",
                      margin=dict(l=10, r=10, t=40, b=10), legend_orientation="h", legend_y=-0.3,
                      yaxis_autorange="reversed")
    fig.update_yaxes(automargin=True)
    return fig


def question_table(rows: Sequence[Mapping[str, Any]], qid: str, names: Mapping[str, str]) -> pd.DataFrame:
    """Gold document × mode → stage, for one question."""
    mine = [r for r in rows if r["qid"] == qid]
    docs = list(dict.fromkeys(d for r in mine for d in r.get("evidence_loss") or {}))
    data = {"gold document": [names.get(d, d) for d in docs]}
    for r in mine:
        data[r["mode"]] = [STAGE_LABELS.get((r.get("evidence_loss") or {}).get(d, ""), "") for d in docs]
    return pd.DataFrame(data)


def render_loss(report: Any, names: Mapping[str, str] | None = None) -> None:
    """The evidence-loss section of an ``EvalReport``."""
    rows = [r for r in report.rows if r.get("evidence_loss")]
    st.subheader("Where the evidence was lost")
    if not rows:
        st.info("No question of this set has gold documents, so there is no evidence to follow.")
        return
    k = max(report.ks)
    questions = len({r["qid"] for r in rows})
    pooled = sum(len(r["evidence_loss"]) for r in rows if r["mode"] == rows[0]["mode"])
    st.caption(f"Pooled view: every gold document of the set counts once ({pooled:,} gold documents from {questions:,} "
               "questions), so a question with many gold documents weighs more here than in the per-question "
               "averages of the summary; the two percentages can differ.")
    st.caption(f"Each gold document's furthest stage in each mode, at k = {k}: never reached by the mode's search, "
               "reached (a source chunk of a retrieved entity, relation or path, or a tree candidate) but not "
               "selected, selected but cut by a token budget, in the context but ranked below k, or found.")
    counts = counts_by_mode(rows)
    st.text("\n".join(loss_sentence(mode, c) for mode, c in counts.items()))
    left, right = st.columns(2)
    with left:
        st.plotly_chart(stage_share_figure(counts, "Gold documents by stage (pooled)"), key="loss_share_chart")
    with right:
        st.plotly_chart(funnel_figure(counts, "Funnel of the pooled gold documents"), key="loss_funnel_chart")
    qids = list(dict.fromkeys(r["qid"] for r in rows))
    qid = st.selectbox("Question", qids, key="loss_question", help="Follow one question's gold documents.")
    if qid:
        st.plotly_chart(funnel_figure(counts_by_mode(rows, qid), f"Funnel of {html.escape(qid)} (per question)"),
                        key="loss_question_funnel")
        table = question_table(rows, qid, names or {})  # one column per gold document: it fits, a column per mode did not
        shown = table.set_index(table.columns[0]).T.rename_axis("mode").reset_index() if not table.empty else table
        safe_dataframe(shown, hide_index=True, key="loss_question_table")
