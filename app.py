"""RAGScope: build graph-based RAG indexes offline and see what each retrieval mode retrieves.

Run with ``streamlit run app.py``. Pages live under ``pages/`` (only those present are listed,
so the app runs while pages are still being written); the sidebar is in ``ui/sidebar.py``.
"""
from __future__ import annotations

import os
from pathlib import Path

for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("ANONYMIZED_TELEMETRY", "False"),
                      ("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")):
    os.environ.setdefault(_name, _value)

import streamlit as st  # noqa: E402

ROOT = Path(__file__).resolve().parent
PAGES = [
    ("pages/documents.py", "Documents", ":material/description:"),
    ("pages/knowledge_graph.py", "Knowledge graph", ":material/hub:"),
    ("pages/summary_tree.py", "Summary tree", ":material/account_tree:"),
    ("pages/compare.py", "Compare", ":material/view_column:"),
    ("pages/inspect.py", "Inspect", ":material/search:"),
    ("pages/evaluate.py", "Evaluate", ":material/monitoring:"),
    ("pages/settings.py", "Settings", ":material/settings:"),
]


def available_pages() -> list:
    """st.Page objects for the page files that exist (Documents is the default page)."""
    pages = []
    for path, title, icon in PAGES:
        if (ROOT / path).exists():
            pages.append(st.Page(path, title=title, icon=icon, default=not pages))
    return pages


st.set_page_config(page_title="RAGScope", layout="wide")
navigation = st.navigation(available_pages())  # before the heavier imports, so the first paint has our pages

from ui.sidebar import render_sidebar  # noqa: E402

render_sidebar()
navigation.run()
