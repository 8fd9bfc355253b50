"""Keep what a user typed or picked on a page while another page is open.

Streamlit drops a widget's value at the end of every run that does not draw the widget, so switching
pages lost the Knowledge graph's search and filters, the Summary tree's view, Evaluate's question
settings and the modes picked on Compare, Inspect and Evaluate. Writing a value back into
``st.session_state`` during such a run turns it into a plain session value, which the widget picks up
again when its page is drawn (Streamlit's documented way to keep widget values across pages).

Only the keys of pages *other* than the one running are written: a value written in the same run as
its widget would make Streamlit warn that the widget was given both a default and a session value.
Buttons, uploaders and choices whose options come from the data (a document, a node) are not kept."""
from __future__ import annotations

import streamlit as st

KEPT: dict[str, tuple[str, ...]] = {  # page URL path -> widget keys kept while another page runs
    "knowledge_graph": ("kg_mention", "kg_search", "kg_depth", "kg_max_nodes", "kg_min_degree", "kg_types",
                        "kg_types_mention", "kg_size_by_degree", "kg_show_all"),
    "summary_tree": ("tree_scope",),
    "compare": ("compare_modes",),
    "inspect": ("inspect_mode",),
    "evaluate": ("eval_source", "eval_modes", "eval_ks", "eval_limit"),
}


def keep_other_pages(running: str) -> None:
    """Write back the kept widget values of every page but ``running`` (the URL path of the page this
    run draws), so that they outlive the run."""
    for page, keys in KEPT.items():
        if page == running:
            continue
        for key in keys:
            if key in st.session_state:
                st.session_state[key] = st.session_state[key]
