"""Compare: one question through several retrieval modes, side by side.

Per mode: the answer (labelled extractive or LLM), counts, tokens, LLM calls and latency per
stage; below, what differs (each mode's top-5 evidence in order, ★ where only that mode has a
chunk in its top-5), then heatmaps of how much the modes' retrieved chunks and entities overlap. The last
run is kept in ``st.session_state["compare_last"]`` so reruns (widget clicks) never recompute.
"""
from __future__ import annotations


import streamlit as st

from core import api
from ui.auth_gate import guard

guard()  # the refusal / sign-in page unless this session may open it (app.py gates first)

from core.api import run_modes  # noqa: E402
from ui import annotations_view  # noqa: E402
from ui import edit_question_view  # noqa: E402
from ui import results_view as rv  # noqa: E402
from ui.errors import show_errors  # noqa: E402
from ui.examples import example_picker, share_question, take_shared_question  # noqa: E402
from ui.llm import llm_for_queries  # noqa: E402
from ui.mode_differences import render_differences  # noqa: E402
from ui.result_summary import latency_figure  # noqa: E402
from ui.state import current_workspace_name, indexed_workspace, principal, session_settings  # noqa: E402

MAX_QUESTION_CHARS = 2000
COLUMNS_PER_ROW = 4
STATE_KEY = "compare_last"


def _available_modes() -> list[str]:
    return api.mode_names(principal())


def _run(ws, question: str, chosen: list[str]) -> None:
    """Run the chosen modes once and keep the results in the session."""
    settings = session_settings()
    llm, keywords = llm_for_queries(ws, settings)
    label = f"Running {len(chosen):,} mode(s): {', '.join(chosen)}…"
    with st.status(label, expanded=False) as status:
        results = run_modes(principal(), ws, question, chosen, settings=settings, llm=llm, keywords=keywords)
        status.update(label=f"Ran {len(results):,} mode(s)", state="complete")
    st.session_state[STATE_KEY] = {
        "workspace": current_workspace_name(), "generation": api.generation(principal(), ws), "question": question,
        "modes": list(results), "results": results,
    }


def _render(last: dict, ws) -> None:
    """Columns of per-mode results, the latency chart and the overlap heatmaps."""
    results = last["results"]
    st.caption("Question")
    st.text(last["question"])
    if last.get("generation") != api.generation(principal(), ws):
        st.info("The workspace changed since this run; press Run to refresh the results.")
    for row in rv.iter_rows(list(results), COLUMNS_PER_ROW):
        for column, mode in zip(st.columns(len(row) if len(results) <= COLUMNS_PER_ROW else COLUMNS_PER_ROW), row):
            with column:
                rv.render_mode_column(mode, results[mode], "compare")
    st.divider()
    st.subheader("What differs")
    render_differences(results)
    with show_errors("What the graph edits changed"):
        edit_question_view.panel(ws, last["question"], last["modes"], "compare")
    st.subheader("Latency per stage")
    st.caption("Retrieval and answer generation on separate axes: offline answers are extractive (no LLM).")
    st.plotly_chart(latency_figure(results), key="compare_latency_chart")
    st.subheader("Overlap between modes")
    rv.render_overlaps(results, "compare")
    with show_errors("Annotations"):
        annotations_view.render_marking(ws, last["question"], results, "compare")


def main() -> None:
    st.title("Compare retrieval modes")
    st.caption("One question through several modes at once: what each retrieves, what it answers, and at what cost.")
    ws = indexed_workspace("compare modes")
    if ws is None:
        return
    available: list[str] = []
    with show_errors("Loading the retrieval modes"):
        available = _available_modes()
    if not available:
        return

    take_shared_question("compare_question")
    example_picker(ws, "compare_question")
    question = st.text_area("Question", key="compare_question", height=90,
                            placeholder="e.g. Who founded the Velmora Marine Institute and why?")
    share_question(question)
    chosen = st.multiselect("Modes", available, default=available, key="compare_modes", persist_state="session",
                            help="; ".join(f"{m}: {rv.mode_blurb(m)}" for m in available))
    if st.button("Run", type="primary", key="compare_run"):
        text = (question or "").strip()
        if not text:
            st.warning("Type a question first, then press Run.")
        elif not chosen:
            st.warning("Pick at least one mode to run.")
        else:
            if len(text) > MAX_QUESTION_CHARS:
                st.info(f"The question had {len(text):,} characters; only the first {MAX_QUESTION_CHARS:,} are used.")
                text = text[:MAX_QUESTION_CHARS]
            with show_errors("Running the modes"):
                _run(ws, text, chosen)

    last = st.session_state.get(STATE_KEY)
    if last and last.get("workspace") == current_workspace_name():
        _render(last, ws)
    elif not last:
        st.caption("Type a question, choose modes and press Run.")


main()
