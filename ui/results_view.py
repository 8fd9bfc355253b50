"""Rendering helpers for retrieval results (Compare and Inspect pages).

Document text is untrusted: entity names, descriptions, chunk texts, answers and traces are
only ever shown through ``st.dataframe``, ``st.text`` and ``st.code`` (or as plotly data, which
plotly escapes), never through Markdown. One exception, for the short answer in bold: the first line
of an extractive answer goes through ``st.html`` fully HTML-escaped, with only our own bold markers
turned into ``<b>`` (``first_line_html``). The pure functions (tables, overlap matrices,
subgraph selection) take plain results so they can be tested without a browser.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Literal, Mapping, Optional

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from ui.errors import escape_markdown
from ui.escape import plotly_text

from core import api
from core.citations import hit_citation
from ui.answer_line import first_line_html
from ui.citation_links import render_citation_links
from ui.safe_tables import safe_dataframe
from core.types import Answer, PathHit, RetrievalResult


def mode_blurb(mode: str) -> str:
    """One line on what ``mode`` does, from its ``ModeSpec`` (empty for an unknown mode)."""
    from ui.state import principal

    return api.mode_help(principal(), mode)


COUNT_FIELDS = ("entities", "relations", "paths", "chunks", "summaries")


def shown_mode(result: RetrievalResult) -> str:
    """The mode whose retrieval a result holds: the chosen mode for an ``auto`` result, else its own mode."""
    chosen = result.route.get("chosen") if result.route else None
    return str(chosen) if chosen else result.mode


QUESTION_FORM = ("words", "clauses", "possessives")  # the hop router's deciding features shown with its choice
FEATURE_SCALE = {"words": 10.0}  # core.routing.features stores the word count / 10: shown as the count


def route_frame(result: RetrievalResult, top: int = 3) -> pd.DataFrame:
    """The routing decision of an ``auto`` result as a table (empty for other modes): chosen mode, the
    default, the reason, and the ``top`` predicted recall@5 gains over the default, largest first."""
    route = result.route or {}
    if not route:
        return pd.DataFrame(columns=["field", "value"])
    gains = dict(route.get("gains") or {})
    hops = gains.pop("predicted_hops", None)  # the hop router's prediction, not a gain
    ranked = sorted(((str(m), float(g)) for m, g in gains.items()), key=lambda mg: (-mg[1], mg[0]))[:top]
    default = "fallback mode (when a candidate is missing)" if hops is not None else "default mode"
    rows = [("chosen mode", str(route.get("chosen", ""))), (default, str(route.get("default", ""))),
            ("model", str(route.get("model", ""))), ("reason", str(route.get("reason", "")))]
    if hops is not None:
        rows.append(("predicted hops (gold passages)", f"{float(hops):.2f}"))
        features = route.get("features") or {}
        rows += [(f"question feature: {f}", f"{float(features[f]) * FEATURE_SCALE.get(f, 1.0):g}")
                 for f in QUESTION_FORM if f in features]
    rows += [(f"predicted gain: {m}", f"{g:+.3f}") for m, g in ranked]
    return pd.DataFrame(rows, columns=["field", "value"])


def render_route(result: RetrievalResult, key_prefix: str) -> None:
    """For an ``auto`` result: which mode it ran and why (a dataframe, so no text is read as markup)."""
    if not result.route:
        return
    reason = str(result.route.get("reason") or "")
    # the reason is a sentence: in a table cell it was clipped to the column's width, so it is a line of its own
    st.caption(escape_markdown(f"auto ran {shown_mode(result)}" + (f" — {reason}" if reason else "")))
    frame = route_frame(result)
    frame = frame[frame["field"] != "reason"]
    safe_dataframe(frame, hide_index=True, key=f"{key_prefix}_route", height=table_height(len(frame)))


# --- small accessors -----------------------------------------------------------------------
def answer_label(answer: Optional[Answer]) -> str:
    """The caption above an answer: extractive answers are labelled as quotations."""
    if answer is None:
        return "No answer (retrieval only)"
    if answer.kind == "llm":
        return f"LLM answer ({answer.model or 'unknown model'})"
    if answer.ranking == "lexical":  # no sentence vectors: the sentences were ranked by today's lexical score
        return ("Extractive answer — quoted from the retrieved context (sentences ranked by shared words: this "
                "workspace has no sentence vectors; `repair --sentences` adds them, an embeddings server gives none)")
    return "Extractive answer — quoted from the retrieved context"


def counts(result: RetrievalResult) -> dict[str, int]:
    """Number of retrieved items per kind."""
    return {name: len(getattr(result, name) or []) for name in COUNT_FIELDS}


def total_ms(result: RetrievalResult) -> float:
    """Total latency over all recorded stages."""
    return round(sum(float(v) for v in result.timings_ms.values()), 1)


def overview_frame(result: RetrievalResult) -> pd.DataFrame:
    """Counts, tokens, LLM calls and total latency as a two-column table."""
    rows: list[tuple[str, Any]] = [(name, n) for name, n in counts(result).items()]
    rows += [("evidence chunks", len(result.evidence_chunk_ids)), ("context tokens", result.context_tokens),
             ("prompt tokens", result.prompt_tokens), ("completion tokens", result.completion_tokens),
             ("LLM calls", result.llm_calls), ("total ms", total_ms(result))]
    return pd.DataFrame(rows, columns=["metric", "value"]).astype({"value": "float"})


def stages_frame(result: RetrievalResult) -> pd.DataFrame:
    """Latency per stage, in the order the stages ran."""
    rows = [(stage, round(float(ms), 1)) for stage, ms in result.timings_ms.items()]
    return pd.DataFrame(rows, columns=["stage", "ms"])


# --- overlap between modes -------------------------------------------------------------------
def chunk_set(result: RetrievalResult) -> set[str]:
    """Chunks a mode's context rests on (evidence list; falls back to the chunk records)."""
    return set(result.evidence_chunk_ids) or {c.chunk_id for c in result.chunks} - {""}


def entity_set(result: RetrievalResult) -> set[str]:
    return {e.key for e in result.entities} - {""}


def jaccard_matrix(sets: Mapping[str, set[str]]) -> pd.DataFrame:
    """Pairwise Jaccard overlap |A∩B| / |A∪B|; NaN where either set is empty (nothing to compare)."""
    names = list(sets)
    data = []
    for a in names:
        row = []
        for b in names:
            both = sets[a] and sets[b]
            row.append(len(sets[a] & sets[b]) / len(sets[a] | sets[b]) if both else math.nan)
        data.append(row)
    return pd.DataFrame(data, index=names, columns=names)


def overlap_figure(matrix: pd.DataFrame, title: str) -> go.Figure:
    """A heatmap of a Jaccard matrix with the values written in the cells."""
    z = matrix.to_numpy(dtype=float)
    text = [["–" if math.isnan(v) else f"{v:.2f}" for v in row] for row in z]
    fig = go.Figure(go.Heatmap(z=z, x=list(matrix.columns), y=list(matrix.index), zmin=0, zmax=1,
                               colorscale="Blues", text=text, texttemplate="%{text}",
                               hovertemplate="%{y} vs %{x}: %{text}<extra></extra>"))
    fig.update_layout(title=title, height=120 + 40 * len(matrix), margin=dict(l=10, r=10, t=40, b=10),
                      yaxis_autorange="reversed")
    return fig


def render_overlaps(results: Mapping[str, RetrievalResult], key_prefix: str) -> None:
    """Chunk and entity overlap heatmaps side by side."""
    if len(results) < 2:
        st.info("Run at least two modes to compare what they retrieve.")
        return
    left, right = st.columns(2)
    with left:
        chunks = jaccard_matrix({m: chunk_set(r) for m, r in results.items()})
        st.plotly_chart(overlap_figure(chunks, "Chunk overlap (Jaccard)"), key=f"{key_prefix}_chunk_overlap")
    with right:
        entities = jaccard_matrix({m: entity_set(r) for m, r in results.items()})
        st.plotly_chart(overlap_figure(entities, "Entity overlap (Jaccard)"), key=f"{key_prefix}_entity_overlap")
    st.caption("Jaccard = shared / all distinct items of the two modes; “–” = one of the two modes retrieved none of that kind.")


# --- record tables -------------------------------------------------------------------------
def _join(values: Any) -> str:
    if isinstance(values, (list, tuple, set)):
        return ", ".join(str(v) for v in values)
    return "" if values is None else str(values)


def _cell(value: Any) -> Any:
    """A table cell: lists joined into text, numbers kept as numbers, anything else as text."""
    if isinstance(value, (int, float)) or value is None:
        return value
    return _join(value)


def _join_cited(cited: Any) -> str:
    """A hit's ``cited`` list (one "doc, pp. 3, 5" per document) as one cell; empty when unknown."""
    return "; ".join(cited or [])


def entities_frame(result: RetrievalResult) -> pd.DataFrame:
    rows = [{"rank": i + 1, "name": e.name, "type": e.type, "score": e.score, "reason": e.reason,
             "description": e.description, "chunks": len(e.source_chunk_ids), "cited": _join_cited(e.cited)}
            for i, e in enumerate(result.entities)]
    return pd.DataFrame(rows, columns=["rank", "name", "type", "score", "reason", "description", "chunks", "cited"])


def relations_frame(result: RetrievalResult) -> pd.DataFrame:
    rows = [{"rank": i + 1, "source": r.source, "target": r.target, "keywords": _join(r.keywords), "weight": r.weight,
             "score": r.score, "reason": r.reason, "description": r.description, "cited": _join_cited(r.cited)}
            for i, r in enumerate(result.relations)]
    return pd.DataFrame(rows, columns=["rank", "source", "target", "keywords", "weight", "score", "reason",
                                       "description", "cited"])


def chunks_frame(result: RetrievalResult) -> pd.DataFrame:
    rows = [{"rank": i + 1, "document": c.doc_name or c.doc_id, "position": c.order + 1, "score": c.score,
             "reason": c.reason, "text": c.text, "chunk_id": c.chunk_id,
             "cited": hit_citation(c)}
            for i, c in enumerate(result.chunks)]
    return pd.DataFrame(rows, columns=["rank", "document", "position", "score", "reason", "text", "chunk_id", "cited"])


def summaries_frame(result: RetrievalResult) -> pd.DataFrame:
    rows = [{"rank": i + 1, "level": s.level, "score": s.score, "leaves": len(s.leaf_chunk_ids), "text": s.text,
             "node_id": s.node_id, "cited": _join_cited(s.cited)} for i, s in enumerate(result.summaries)]
    return pd.DataFrame(rows, columns=["rank", "level", "score", "leaves", "text", "node_id", "cited"])


def paths_frame(result: RetrievalResult) -> pd.DataFrame:
    rows = [{"rank": i + 1, "reliability": p.score, "edges": p.hops, "question entities": p.question_entities,
             "path": " → ".join(p.nodes), "why kept": p.why or "", "cited": " | ".join(p.hop_cited or [])}
            for i, p in enumerate(result.paths)]
    return pd.DataFrame(rows, columns=["rank", "reliability", "edges", "question entities", "path", "why kept",
                                       "cited"])


def table_height(rows: int) -> int:
    """Pixel height that shows ``rows`` dataframe rows and the header without scrolling."""
    return 35 * (rows + 1) + 3


def show_table(frame: pd.DataFrame, key: str, empty: str, height: int | Literal["auto"] = "auto",
               on_row: Optional[Any] = None) -> None:
    """A dataframe (text is never interpreted), or an info line when it is empty. With ``on_row`` a
    row can be selected (single row) and ``on_row(selection event)`` is called after the rerun."""
    if frame.empty:
        st.info(empty)
        return
    config = {"score": st.column_config.NumberColumn(format="%.4f"),
              "reliability": st.column_config.NumberColumn(format="%.4f")}
    if on_row is None:
        safe_dataframe(frame, hide_index=True, key=key, height=height, column_config=config)
        return
    st.caption("Select a row (the box at its left) to open its source in the Source viewer, the span highlighted.")
    event = safe_dataframe(frame, hide_index=True, key=key, height=height, column_config=config,
                         on_select="rerun", selection_mode="single-row")
    on_row(event)


# --- composite views -----------------------------------------------------------------------
def render_answer(result: RetrievalResult) -> None:
    """The answer in a bordered box, labelled extractive or LLM. An extractive answer's first line
    (its best sentence, short answer in bold) is shown apart from its evidence lines."""
    with st.container(border=True):
        st.caption(answer_label(result.answer))
        text = (result.answer.text if result.answer else "").strip()
        if result.answer is not None and result.answer.kind == "extractive" and text:
            first, _, rest = text.partition("\n")
            st.html(first_line_html(first, result.answer.bold))
            if result.answer.note:  # why no short answer is bolded (core.answers.claim)
                st.caption(escape_markdown(result.answer.note))
            if rest.strip():
                st.text(rest.strip())
        else:
            st.text(text or "(the retrieved context gave no answer)")
            if result.answer is not None and result.answer.note:  # an LLM reply citing a source not in the context
                st.warning(escape_markdown(result.answer.note))
        render_citation_links(result)  # each citation opens the Source viewer at its sentence


def render_mode_column(mode: str, result: RetrievalResult, key_prefix: str) -> None:
    """One Compare column: heading, answer, counts/tokens, latency per stage."""
    st.subheader(mode, help=mode_blurb(mode) or None)
    render_answer(result)
    from ui.result_summary import metrics_line

    c = counts(result)
    st.caption(metrics_line(result))  # only what is non-zero or meaningful for this mode
    if result.route:
        with st.expander(f"Routing: ran {shown_mode(result)}", expanded=False):
            render_route(result, f"{key_prefix}_{mode}")
    with st.expander("Latency per stage", expanded=False):
        stages = stages_frame(result)
        safe_dataframe(stages, hide_index=True, key=f"{key_prefix}_{mode}_stages", height=table_height(len(stages)))
    if not any(c.values()):
        st.warning("Nothing was retrieved for this question.")


def render_keywords(result: RetrievalResult) -> None:
    """Low- and high-level keywords as plain text."""
    low, high = st.columns(2)
    with low:
        st.caption("Low-level keywords (entities)")
        st.text(", ".join(result.keywords.get("low", [])) or "(none)")
    with high:
        st.caption("High-level keywords (themes)")
        st.text(", ".join(result.keywords.get("high", [])) or "(none)")


def path_resource_figure(path: PathHit, rank: int) -> go.Figure:
    """Bars of S(v) for the nodes of one path, in path order."""
    nodes, resources = path.nodes, path.resources
    labels = [f"{i + 1}. {plotly_text(n, 60)}" for i, n in enumerate(nodes)]  # names: tags stripped
    values = [float(resources.get(n, 0.0)) for n in nodes]
    fig = go.Figure(go.Bar(x=labels, y=values, text=[f"{v:.3f}" for v in values], textposition="outside",
                           width=0.45, marker_color="#1f77b4", hovertemplate="%{x}: S = %{y:.4f}<extra></extra>"))
    fig.update_layout(height=230, margin=dict(l=10, r=10, t=20, b=10), yaxis_title="resource S(v)",
                      meta={"path_rank": rank, "reliability": path.score},
                      yaxis_range=[0, max(values + [1.0]) * 1.15])
    return fig


def render_paths(result: RetrievalResult, key_prefix: str, expanded: int = 3, on_row: Optional[Any] = None) -> None:
    """The path table (``on_row``: see ``show_table``) and one resource bar chart per path."""
    if not result.paths:
        mode = shown_mode(result)  # an auto result is judged by the mode it ran
        msg = "No path connected the retrieved nodes within the hop limit." if mode == "path" \
            else f"The {mode} mode does not build paths (the path mode does)."
        st.info(msg)
        return
    show_table(paths_frame(result), f"{key_prefix}_paths_table", "", height=table_height(min(len(result.paths), 15)),
               on_row=on_row)
    st.caption("Reliability = sum of S over the path's nodes / number of edges. The prompt lists paths from "
               "least to most reliable.")
    for i, path in enumerate(result.paths):
        label = f"Path {i + 1} · reliability {path.score:.3f} · {len(path.nodes):,} nodes"
        with st.expander(label, expanded=i < expanded):
            if path.why:
                st.text(f"Why kept: {path.why}")  # st.text never interprets the names as markup
            st.plotly_chart(path_resource_figure(path, i + 1), key=f"{key_prefix}_path_{i}")
            if path.relations:
                hops = list(path.hop_cited or [])
                safe_dataframe(pd.DataFrame([{"source": r.source, "target": r.target, "keywords": _join(r.keywords),
                                            "description": r.description, "weight": r.weight,
                                            "rests on": hops[h] if h < len(hops) else ""}
                                           for h, r in enumerate(path.relations)]),
                             hide_index=True, key=f"{key_prefix}_path_rel_{i}")


def render_tree_trace(result: RetrievalResult, key_prefix: str) -> None:
    """The tree mode's chosen branch, final h and h-loop history."""
    if shown_mode(result) != "tree":  # an auto result that ran tree has the tree's trace
        st.info(f"The h-loop belongs to the tree mode; {shown_mode(result)} has no tree trace.")
        return
    params = result.params
    st.text(f"Branch: {params.get('branch', '?')}")  # a metric would cut a long branch name ("global-occurr…")
    cols = st.columns(2)
    cols[0].metric("Final h", str(params.get("final_h", "–")))
    cols[1].metric("Starting h", str(params.get("tree_hops", "–")))
    steps = params.get("h_loop") or params.get("loop")
    if isinstance(steps, list) and steps and all(isinstance(s, Mapping) for s in steps):
        safe_dataframe(pd.DataFrame([{k: _cell(v) for k, v in s.items()} for s in steps]), hide_index=True,
                     key=f"{key_prefix}_hloop")
    st.caption("Trace (h-loop history)")
    st.code("\n".join(result.trace_lines()) or "(no trace)", language=None, wrap_lines=True)  # long lines wrap, never cut


# --- the retrieved subgraph ------------------------------------------------------------------
def relation_keys(result: RetrievalResult) -> tuple[list[str], list[tuple[str, str]]]:
    """Endpoint keys and edges (key pairs) of a result's relations and paths, in rank order."""
    nodes: list[str] = []
    edges: list[tuple[str, str]] = []
    for r in result.relations:
        nodes += [r.source_key, r.target_key]
        edges.append((r.source_key, r.target_key))
    for p in result.paths:
        nodes += p.keys
        edges += list(zip(p.keys, p.keys[1:]))
    return nodes, edges


def iter_rows(items: Iterable[Any], size: int) -> Iterable[list[Any]]:
    """Split a list into rows of at most ``size`` (for laying out many columns)."""
    items = list(items)
    for start in range(0, len(items), size):
        yield items[start:start + size]

