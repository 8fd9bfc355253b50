"""RAGScope: build graph-based RAG indexes offline and see what each retrieval mode retrieves.

Run with ``streamlit run app.py``. Pages live under ``pages/``; the sidebar is in ``ui/sidebar.py``.
Before any page runs, ``ui.auth_gate`` decides who the session is (local admin, a signed-in user with
a role) or shows only the refusal / sign-in page, for every page URL. Pages a role cannot use are not
in the navigation (Settings: admins only), and the library refuses their actions anyway.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import core  # noqa: F401 - first: sets the process environment (core.config) before streamlit starts
import streamlit as st

ADMIN_PAGES = {"pages/settings.py"}
# (path, title, icon): no icons — Streamlit fetches its Material icons from fonts.gstatic.com, and emoji
# draw as empty boxes where the browser has no emoji font
PAGES = [
    ("pages/documents.py", "Documents", None),
    ("pages/knowledge_graph.py", "Knowledge graph", None),
    ("pages/summary_tree.py", "Summary tree", None),
    ("pages/compare.py", "Compare", None),
    ("pages/inspect.py", "Inspect", None),
    ("pages/source.py", "Source viewer", None),
    ("pages/evaluate.py", "Evaluate", None),
    ("pages/settings.py", "Settings", None),
]


def _redirect(page: Any) -> Callable[[], None]:
    def go() -> None:
        st.switch_page(page, query_params=st.query_params.to_dict())  # "?workspace=…" survives the switch
    return go


def _refused_here() -> None:
    """What a non-admin sees at an admin page's URL ("/settings"): the page needs the admin role (the
    same refusal ``ui.auth_gate.guard`` gives), not Streamlit's "Page not found"."""
    from core.auth import Role
    from ui.auth_gate import guard

    guard(Role.admin)


def app_pages(admin: bool = True) -> list:
    """st.Page objects of the pages a role may open, and for each a hidden page at its capitalised and
    upper-case URL ("/Compare", "/COMPARE") that switches to it: Streamlit matches URL paths exactly and
    showed "Page not found" for a capitalised page name typed from the navigation's title. The app's
    root ("/") is a hidden default page that switches to Documents: Streamlit serves its default page
    only at "/" while reserving the page's own name, so "/documents" (the name the navigation shows)
    was "Page not found" while Documents was the default. Public API only (``st.Page`` with a callable,
    ``st.switch_page``)."""
    shown = [p for p in PAGES if admin or p[0] not in ADMIN_PAGES]
    pages = [st.Page(path, title=title, icon=icon) for path, title, icon in shown]
    twins = [st.Page(_redirect(pages[0]), title=pages[0].title, url_path="start", default=True,
                     visibility="hidden")]
    for page, (path, _, _) in zip(pages, shown):
        stem = Path(path).stem
        variants = {stem[:1].upper() + stem[1:], stem.upper()} - {stem}
        twins += [st.Page(_redirect(page), title=page.title, url_path=variant, visibility="hidden")
                  for variant in sorted(variants)]
    if not admin:  # an admin page's URLs say why it is not there
        for path, title, _ in PAGES:
            if path in ADMIN_PAGES:
                stem = Path(path).stem
                twins += [st.Page(_refused_here, title=title, url_path=variant, visibility="hidden")
                          for variant in sorted({stem, stem[:1].upper() + stem[1:], stem.upper()})]
    return pages + twins


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
if navigation.url_path == "":  # the root: on to Documents before the sidebar reads "?workspace=" (once)
    navigation.run()

from ui.sidebar import render_sidebar  # noqa: E402

render_sidebar()
from ui.warmup import warm_in_background  # noqa: E402

warm_in_background()  # models and the workspace's views load in a daemon thread; the page does not wait
navigation.run()
