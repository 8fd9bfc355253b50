"""No dead ends for signed-in roles: a non-admin is not sent to a Settings page it does not have, and an
admin page's URL is a route of its own for non-admins (the refusal naming the role, not "Page not found")."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("admin, wanted, unwanted", [
    (True, "Choose the OpenAI-compatible provider in Settings", "ask the operator"),
    (False, "ask the operator", "Choose the OpenAI-compatible provider in Settings"),
])
def test_the_offline_extraction_note_fits_the_role(monkeypatch, admin, wanted, unwanted):
    import ui.state
    from ui.llm import SessionLLM

    monkeypatch.setattr(ui.state, "can", lambda role: admin)
    text = SessionLLM().extraction_text()
    assert wanted in text and unwanted not in text


def test_non_admins_get_the_admin_pages_urls_as_a_refusal_route():
    """app.py registers, for a non-admin, hidden pages at the admin pages' URL paths that call the
    role guard (read from the source: the app module runs Streamlit at import)."""
    source = (ROOT / "app.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    refused = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "_refused_here")
    assert "guard(Role.admin)" in ast.unparse(refused)
    pages = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "app_pages")
    assert "_refused_here" in ast.unparse(pages) and "if not admin" in ast.unparse(pages)
