"""RAGScope: build graph-based RAG indexes offline and see what each retrieval mode retrieves.

Run with ``streamlit run app.py``. Pages live under ``pages/``; the sidebar is in ``ui/sidebar.py``.
Before any page runs, ``ui.auth_gate`` decides who the session is (local admin, a signed-in user with
a role) or shows only the refusal / sign-in page, for every page URL. Pages a role cannot use are not
in the navigation (Settings: admins only), and the library refuses their actions anyway.
"""
from __future__ import annotations

import core  # noqa: F401 - first: sets the process environment (core.config) before streamlit starts
import streamlit as st

ADMIN_PAGES = {"pages/settings.py"}
PAGES = [
    ("pages/documents.py", "Documents", ":material/description:"),
    ("pages/knowledge_graph.py", "Knowledge graph", ":material/hub:"),
    ("pages/summary_tree.py", "Summary tree", ":material/account_tree:"),
    ("pages/compare.py", "Compare", ":material/view_column:"),
    ("pages/inspect.py", "Inspect", ":material/search:"),
    ("pages/evaluate.py", "Evaluate", ":material/monitoring:"),
    ("pages/settings.py", "Settings", ":material/settings:"),
]


def app_pages(admin: bool = True) -> list:
    """st.Page objects of the pages a role may open (Documents is the default page)."""
    return [st.Page(path, title=title, icon=icon, default=i == 0) for i, (path, title, icon) in enumerate(PAGES)
            if admin or path not in ADMIN_PAGES]


st.set_page_config(page_title="RAGScope", layout="wide")

from core.auth import Role  # noqa: E402
from ui import auth_gate  # noqa: E402

auth_gate.harden()
decision = auth_gate.decide()
if decision.principal is None:  # every page URL shows the same refusal / sign-in page and nothing else
    st.navigation(app_pages(), position="hidden")
    auth_gate.render(decision)
    st.stop()
navigation = st.navigation(app_pages(decision.principal.role >= Role.admin))

from ui.sidebar import render_sidebar  # noqa: E402

render_sidebar()
from ui.warmup import warm_in_background  # noqa: E402

warm_in_background()  # models and the workspace's views load in a daemon thread; the page does not wait
navigation.run()
