"""RAGScope: build graph-based RAG indexes offline and see what each retrieval mode retrieves.

Run with ``streamlit run app.py``. Pages live under ``pages/``; the sidebar is in ``ui/sidebar.py``.
"""
from __future__ import annotations

import core  # noqa: F401 - first: sets the process environment (core.config) before streamlit starts
import streamlit as st

PAGES = [
    ("pages/documents.py", "Documents", ":material/description:"),
    ("pages/knowledge_graph.py", "Knowledge graph", ":material/hub:"),
    ("pages/summary_tree.py", "Summary tree", ":material/account_tree:"),
    ("pages/compare.py", "Compare", ":material/view_column:"),
    ("pages/inspect.py", "Inspect", ":material/search:"),
    ("pages/evaluate.py", "Evaluate", ":material/monitoring:"),
    ("pages/settings.py", "Settings", ":material/settings:"),
]


def app_pages() -> list:
    """st.Page objects of the pages (Documents is the default page)."""
    return [st.Page(path, title=title, icon=icon, default=i == 0) for i, (path, title, icon) in enumerate(PAGES)]


st.set_page_config(page_title="RAGScope", layout="wide")
navigation = st.navigation(app_pages())  # before the heavier imports, so the first paint has our pages

from ui.sidebar import render_sidebar  # noqa: E402

render_sidebar()
navigation.run()
