"""Inspect: one retrieval mode in depth.

Keywords; entity and relation tables with scores and reasons; PathRAG paths with per-node
resources and reliability; the retrieved subgraph highlighted on the knowledge graph; the tree
mode's h-loop trace and branch; the exact context with its token count; a JSON download; and
per-mode parameter overrides (this page only, passed through ``Settings.with_overrides``).
"""
from __future__ import annotations

import json
import time
from typing import Any

import streamlit as st

from core import api
from ui.auth_gate import guard

guard()  # the refusal / sign-in page unless this session may open it (app.py gates first)

from core.api import run_modes  # noqa: E402
from core.settings import Settings, is_numeric_field  # noqa: E402
from core.types import RetrievalResult  # noqa: E402
from ui import annotations_view  # noqa: E402
from ui import edit_question_view  # noqa: E402
from ui.numbers import count  # noqa: E402
from ui import evidence_links  # noqa: E402
from ui import ppr_view  # noqa: E402
from ui import provenance  # noqa: E402
from ui import results_view as rv  # noqa: E402
from ui.errors import show_errors  # noqa: E402
from ui.examples import example_picker, share_question, take_shared_question  # noqa: E402
from ui.llm import llm_for_queries  # noqa: E402
from ui.settings_widgets import settings_field_widget  # noqa: E402
from ui.escape import md  # noqa: E402
from ui.state import current_workspace_name, indexed_workspace, principal, session_settings  # noqa: E402
from ui.safe_tables import safe_dataframe  # noqa: E402

MAX_QUESTION_CHARS = 2000
MAX_GRAPH_NODES = 300
GRAPH_HEIGHT = 560
STATE_KEY = "inspect_last"
INSPECT_FINE_STEP = 0.01  # +/- step of a fractional parameter here (finer than the Settings page's 0.05)


def parameter_overrides(mode: str, settings: Settings) -> dict[str, Any]:
    """Number inputs for the mode's parameters (``ui.settings_widgets``, as on the Settings page); returns
    the values that differ from the settings."""
    declared = api.mode_params(principal(), mode)  # the settings the mode declares it reads
    names = [name for name in declared if is_numeric_field(name)]
    overrides: dict[str, Any] = {}
    with st.expander(f"Parameters of {mode} (overrides for this page only)", expanded=False):
        cols = st.columns(3)
        for i, name in enumerate(names):
            current = getattr(settings, name)
            with cols[i % 3]:
                value = settings_field_widget(name, current, f"inspect_param_{mode}_{name}",
                                              fine_step=INSPECT_FINE_STEP)
            if value is not None and value != current:
                overrides[name] = value
        st.caption("Defaults come from Settings; change them there to make them permanent.")
    return overrides


def _stream_answer(result: RetrievalResult, llm) -> None:
    """Generate an LLM answer into a plain-text placeholder as it streams."""
    holder = st.empty()
    parts: list[str] = []
    started = time.perf_counter()
    with holder.container(border=True):
        st.caption(f"LLM answer ({md(getattr(llm, 'model', ''))}) — streaming…")
        box = st.empty()
        for piece in api.stream_answer(principal(), llm, result):
            parts.append(piece)
            box.text("".join(parts))
    result.timings_ms["answer"] = round((time.perf_counter() - started) * 1000, 3)
    holder.empty()  # the finished answer is shown with the rest of the result below


def run_one(ws, mode: str, question: str, overrides: dict[str, Any]) -> None:
    """Run one mode (with overrides) and keep the result in the session."""
    settings = session_settings().with_overrides(overrides) if overrides else session_settings()
    llm, keywords = llm_for_queries(ws, settings)
    with st.spinner(f"Running {mode}…"):
        streaming = llm is not None
        results = run_modes(principal(), ws, question, [mode], settings=settings, with_answers=not streaming, llm=llm,
                            keywords=keywords)
    result = results[mode]
    if streaming:
        _stream_answer(result, llm)
    st.session_state[STATE_KEY] = {"workspace": current_workspace_name(), "generation": api.generation(principal(), ws),
                                   "mode": mode, "question": question, "overrides": overrides, "result": result,
                                   "graph_html": None}


def render_header(last: dict, result: RetrievalResult) -> None:
    """Answer, headline numbers, keywords and the parameters used."""
    st.subheader(f"Result of {last['mode']}", help=rv.mode_blurb(last["mode"]) or None)
    st.caption("Question")
    st.text(last["question"])
    rv.render_answer(result)
    c = rv.counts(result)
    cols = st.columns(6)
    cols[0].metric("Entities", count(c["entities"]), help="Retrieved entities: the entity records this mode returned "
                                                   "(the same count as the subgraph caption below).")
    cols[1].metric("Relations", count(c["relations"]))
    cols[2].metric("Paths", count(c["paths"]))
    cols[3].metric("Chunks / summaries", f"{count(c['chunks'])} / {count(c['summaries'])}")
    cols[4].metric("Context tokens", count(result.context_tokens))
    cols[5].metric("Total ms", f"{rv.total_ms(result):.0f}")
    st.caption(f"LLM calls {count(result.llm_calls)} · prompt tokens {count(result.prompt_tokens)} · "
               f"completion tokens {count(result.completion_tokens)}")
    rv.render_route(result, "inspect")  # auto only: the mode it ran, why, and the top predicted gains
    rv.render_keywords(result)
    if last.get("overrides"):
        st.caption("Overrides used: " + ", ".join(f"{k} = {v}" for k, v in last["overrides"].items()))


def _opener(ws: Any, kind: str, items: list[Any]) -> Any:
    """A table's row handler: the selected row opens its source in the Source viewer (no workspace: none)."""
    return None if ws is None else (lambda event: evidence_links.open_row(ws, kind, items, event))


def render_tabs(result: RetrievalResult, ws: Any = None) -> None:
    """Tables, paths, tree trace, context and timings, one tab each (an imported graph's tables also say
    where each entity and relation came from)."""
    names = ["Entities", "Relations", "Paths", "Tree trace", "Chunks", "Summaries", "Context", "Trace & timings"]
    tabs = dict(zip(names, st.tabs(names, key="inspect_tabs")))
    entities, relations = rv.entities_frame(result), rv.relations_frame(result)
    if ws is not None and (origins := provenance.origin_column(ws, [e.key for e in result.entities])):
        entities["origin"] = origins
    if ws is not None and (origins := provenance.origin_column(
            ws, [(r.source_key, r.target_key) for r in result.relations], relations=True)):
        relations["origin"] = origins
    with tabs["Entities"]:
        rv.show_table(entities, "inspect_entities", f"{result.mode} retrieved no entities.",
                      on_row=_opener(ws, "entity", result.entities))
    with tabs["Relations"]:
        rv.show_table(relations, "inspect_relations", f"{result.mode} retrieved no relations.",
                      on_row=_opener(ws, "relation", result.relations))
    with tabs["Paths"]:
        rv.render_paths(result, "inspect", on_row=_opener(ws, "path", result.paths))
    with tabs["Tree trace"]:
        rv.render_tree_trace(result, "inspect")
    with tabs["Chunks"]:
        ppr_view.render_ppr(result, "inspect")  # ppr only: seeds, top entities by mass, why each chunk ranked
        rv.show_table(rv.chunks_frame(result), "inspect_chunks", f"{result.mode} retrieved no chunks.",
                      on_row=_opener(ws, "chunk", result.chunks))
    with tabs["Summaries"]:
        msg = "Only the tree mode retrieves summary-tree nodes." if result.mode != "tree" else \
            "The tree mode answered from chunks (local branch), not from summaries."
        rv.show_table(rv.summaries_frame(result), "inspect_summaries", msg, on_row=_opener(ws, "summary", result.summaries))
    with tabs["Context"]:
        st.caption(f"The exact context given to the answer step: {result.context_tokens:,} tokens (cl100k), "
                   f"{len(result.context_text):,} characters.")
        st.code(result.context_text or "(empty context)", language=None, wrap_lines=True, height=500)
    with tabs["Trace & timings"]:
        st.code("\n".join(result.trace_lines()) or "(no trace)", language=None, wrap_lines=True)
        safe_dataframe(rv.stages_frame(result), hide_index=True, key="inspect_stages")
        st.caption("Parameters")
        st.code(json.dumps(result.params, indent=2, default=str), language="json")


def render_subgraph(ws, last: dict, result: RetrievalResult) -> None:
    """The retrieved entities and the entities their relations/paths name (``ui.subgraph_view``):
    at most ``subgraph_view.DEFAULT_BUDGET`` nodes unless "Show all"; neighbours on request; GraphML
    and standalone-HTML downloads of exactly what is drawn."""
    from ui import subgraph_view
    from ui.graph_view import show_graph

    st.subheader("Retrieved subgraph")
    cols = st.columns([3, 2, 2, 1])  # wide enough that no label is cut at 1280 px (checked in Chromium)
    if not cols[0].toggle("Show the retrieved subgraph", value=True, key="inspect_show_graph"):
        return
    show_all = cols[1].checkbox("Show all", key="inspect_graph_all",
                                help=f"Draw every retrieved node (default: the best-ranked "
                                     f"{subgraph_view.DEFAULT_BUDGET:,}).")
    neighbours = cols[2].checkbox("Show neighbours", key="inspect_graph_neighbours",
                                  help="Add the 1-hop neighbours of the retrieved nodes (faded).")
    budget = MAX_GRAPH_NODES if show_all else subgraph_view.DEFAULT_BUDGET
    view = subgraph_view.query_subgraph(api.knowledge_graph(principal(), ws), result, budget, neighbours)
    if not view.highlighted:
        st.info(f"No entity retrieved by {result.mode} is a node of the knowledge graph "
                "(naive retrieves chunks only; tree uses the mention graph).")
        return
    st.caption(subgraph_view.caption(view, result.mode))
    signature = (show_all, neighbours)
    if last.get("graph_html") is None or last.get("graph_signature") != signature:
        with st.spinner("Drawing the subgraph…"):
            last["graph_html"] = subgraph_view.subgraph_html(view, GRAPH_HEIGHT)
            last["graph_signature"] = signature
    show_graph(last["graph_html"], GRAPH_HEIGHT)
    left, right = st.columns(2)
    stem = f"ragscope-{result.mode}-subgraph"
    left.download_button("Download subgraph (GraphML)", subgraph_view.graphml_bytes(view), file_name=f"{stem}.graphml",
                         mime="application/xml", key="inspect_subgraph_graphml", on_click="ignore")
    standalone = subgraph_view.standalone_subgraph_html(view, last["graph_html"], result.mode, result.query)
    right.download_button("Download subgraph (HTML, works offline)", standalone, file_name=f"{stem}.html",
                          mime="text/html", key="inspect_subgraph_html", on_click="ignore")


def main() -> None:
    st.title("Inspect one mode")
    st.caption("Everything one retrieval mode retrieved for a question, and why.")
    ws = indexed_workspace("inspect a mode")
    if ws is None:
        return
    provenance.provenance_caption(ws)
    available: list[str] = []
    with show_errors("Loading the retrieval modes"):
        available = api.mode_names(principal())
    if not available:
        return
    left, right = st.columns([1, 3])
    with left:
        mode = st.selectbox("Mode", available, index=available.index("path") if "path" in available else 0,
                            key="inspect_mode", persist_state="session")
    with right:
        take_shared_question("inspect_question")  # start from the question last typed on Compare
        example_picker(ws, "inspect_question")
        question = st.text_area("Question", key="inspect_question", height=90,
                                placeholder="e.g. How is the Kestrel Point Lighthouse connected to the Great Velmora Flood?")
        share_question(question)
    st.caption(rv.mode_blurb(mode))
    overrides: dict[str, Any] = {}
    with show_errors("Reading the parameters"):
        overrides = parameter_overrides(mode, session_settings())
    if st.button("Run", type="primary", key="inspect_run"):
        text = (question or "").strip()
        if not text:
            st.warning("Type a question first, then press Run.")
        else:
            if len(text) > MAX_QUESTION_CHARS:
                st.info(f"The question had {len(text):,} characters; only the first {MAX_QUESTION_CHARS:,} are used.")
                text = text[:MAX_QUESTION_CHARS]
            with show_errors(f"Running {mode}"):
                run_one(ws, mode, text, overrides)

    last = st.session_state.get(STATE_KEY)
    if not last or last.get("workspace") != current_workspace_name():
        st.caption("Choose a mode, type a question and press Run.")
        return
    result: RetrievalResult = last["result"]
    if last.get("generation") != api.generation(principal(), ws):
        st.info("The workspace changed since this run; press Run to refresh the result.")
    st.divider()
    render_header(last, result)
    render_tabs(result, ws)
    with show_errors("Drawing the subgraph"):  # above the annotation cards (one per retrieved item)
        render_subgraph(ws, last, result)
    with show_errors("What the graph edits changed"):
        edit_question_view.panel(ws, last["question"], [result.mode], "inspect")
    with show_errors("Annotations"):
        annotations_view.render_marking(ws, last["question"], {result.mode: result}, "inspect")
    st.download_button("Download the result as JSON", json.dumps(result.to_dict(), indent=2, default=str),
                       file_name=f"ragscope-{result.mode}.json", mime="application/json", key="inspect_download",
                       on_click="ignore")


main()
