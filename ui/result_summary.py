"""Compact numbers for retrieval results: per-mode metric lines and the latency chart.

* ``metric_items(result)`` lists only what is non-zero or meaningful for that mode (counts of
  what it retrieved, context tokens, LLM usage only when an LLM was called, retrieval and answer
  time apart), so an offline Compare column is one short line, not an 11-row table of zeros.
* ``latency_figure(results)`` draws retrieval and answering side by side on separate axes: the
  retrieval stages stacked per mode on the left, the answer stage on the right labelled
  "extractive" or "LLM" — so a fast retriever with a slow answer does not look slow.
"""
from __future__ import annotations

from typing import Any, Mapping

import plotly.graph_objects as go
from plotly.subplots import make_subplots

ANSWER_STAGE = "answer"
STAGE_LABELS = {"embed_query": "embed query", "vector_search": "vector search", "graph_walk": "graph walk",
                "keywords": "keywords", "ranking": "ranking", "context": "build context", "retrieval": "retrieval"}
STAGE_COLORS = ["#4e79a7", "#59a14f", "#76b7b2", "#edc948", "#b07aa1", "#9c755f", "#bab0ac", "#86bcb6"]
ANSWER_COLORS = {"extractive": "#f28e2b", "llm": "#e15759", "none": "#bab0ac"}


def retrieval_ms(result: Any) -> float:
    """Milliseconds of every stage but the answer."""
    return round(sum(float(v) for s, v in result.timings_ms.items() if s != ANSWER_STAGE), 1)


def answer_ms(result: Any) -> float:
    return round(float(result.timings_ms.get(ANSWER_STAGE, 0.0)), 1)


def answer_kind(result: Any) -> str:
    answer = getattr(result, "answer", None)
    return getattr(answer, "kind", None) or "none"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def metric_items(result: Any) -> list[str]:
    """Short 'number label' items, only the non-zero or meaningful ones for this result."""
    items: list[str] = []
    for field, word in (("entities", "entity"), ("relations", "relation"), ("paths", "path"),
                        ("chunks", "chunk"), ("summaries", "summary")):
        n = len(getattr(result, field, None) or [])
        if n:
            items.append(_plural(n, word).replace("entitys", "entities").replace("summarys", "summaries"))
    if not items:
        items.append("nothing retrieved")
    items.append(f"{int(result.context_tokens or 0):,} context tokens")
    if result.llm_calls:
        items.append(f"{_plural(int(result.llm_calls), 'LLM call')} ({int(result.prompt_tokens or 0):,} prompt + "
                     f"{int(result.completion_tokens or 0):,} completion tokens)")
    items.append(f"retrieval {retrieval_ms(result):,.0f} ms")
    if ANSWER_STAGE in result.timings_ms:
        kind = answer_kind(result)
        items.append(f"answer {answer_ms(result):,.0f} ms ({'LLM' if kind == 'llm' else kind})")
    return items


def metrics_line(result: Any) -> str:
    """The items joined with ' · ' (numbers and our labels only: safe for st.caption)."""
    return " · ".join(metric_items(result))


def latency_figure(results: Mapping[str, Any]) -> go.Figure:
    """Two panels sharing the mode axis: retrieval stages stacked (left), answer generation (right)."""
    modes = list(results)
    stages: list[str] = []
    for result in results.values():
        stages += [s for s in result.timings_ms if s not in stages and s != ANSWER_STAGE]
    has_answer = any(ANSWER_STAGE in r.timings_ms for r in results.values())
    fig = make_subplots(rows=1, cols=2 if has_answer else 1, shared_yaxes=True, horizontal_spacing=0.06,
                        column_widths=[0.62, 0.38] if has_answer else [1.0],
                        subplot_titles=["Retrieval (ms, stages stacked)"] +
                                       (["Answer generation (ms)"] if has_answer else []))
    for i, stage in enumerate(stages):
        label = STAGE_LABELS.get(stage, stage.replace("_", " "))
        fig.add_bar(name=label, y=modes, x=[float(results[m].timings_ms.get(stage, 0.0)) for m in modes],
                    orientation="h", marker_color=STAGE_COLORS[i % len(STAGE_COLORS)], legendgroup="retrieval",
                    hovertemplate="%{y} · " + label + ": %{x:.1f} ms<extra></extra>", row=1, col=1)
    if has_answer:
        for kind, label in (("extractive", "answer (extractive, no LLM)"), ("llm", "answer (LLM)"),
                            ("none", "answer")):
            xs = [answer_ms(results[m]) if answer_kind(results[m]) == kind else 0.0 for m in modes]
            if not any(xs):
                continue
            fig.add_bar(name=label, y=modes, x=xs, orientation="h", marker_color=ANSWER_COLORS[kind],
                        legendgroup="answer", hovertemplate="%{y} · " + label + ": %{x:.1f} ms<extra></extra>",
                        row=1, col=2)
    totals = [retrieval_ms(results[m]) for m in modes]
    fig.add_scatter(x=totals, y=modes, mode="text", text=[f"{t:,.0f}" for t in totals], textposition="middle right",
                    showlegend=False, hoverinfo="skip", row=1, col=1)
    fig.update_layout(barmode="stack", height=150 + 34 * len(modes), margin=dict(l=10, r=30, t=40, b=10),
                      legend_orientation="h", legend_y=-0.25, yaxis_autorange="reversed")
    fig.update_xaxes(title_text="milliseconds", rangemode="tozero")
    fig.update_xaxes(range=[0, max(totals + [1.0]) * 1.18], row=1, col=1)
    return fig
