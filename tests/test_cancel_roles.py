"""Cancel goes through the front door with its role: ``core.api.cancel_indexing`` stops the run on the
caller's workspace (editor or above) and refuses a viewer in the library, not only on the page; the page
never calls a job's methods itself."""
from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

from core import api
from core.auth import LOCAL_ADMIN, Principal, Role
from core.errors import PermissionDeniedError
from core.indexing.running import registered, runs_on
from core.types import SourceDocument

ROOT = Path(__file__).resolve().parent.parent
VIEWER = Principal("viewer", "viewer@example.org", Role.viewer)
EDITOR = Principal("editor", "editor@example.org", Role.editor)


def test_a_viewer_cannot_cancel_and_an_editor_reaches_only_its_workspaces_run(tmp_path):
    from core.workspace import Workspace

    ws, other = Workspace(tmp_path / "a"), Workspace(tmp_path / "b")
    try:
        mine, theirs = threading.Event(), threading.Event()
        with registered(str(ws.path), mine), registered(str(other.path), theirs):
            with pytest.raises(PermissionDeniedError):
                api.cancel_indexing(VIEWER, ws)
            assert not mine.is_set()
            assert api.cancel_indexing(EDITOR, ws) == 1
            assert mine.is_set() and not theirs.is_set()
        assert runs_on(str(ws.path)) == 0 and api.cancel_indexing(EDITOR, ws) == 0  # nothing left running
    finally:
        ws.close()
        other.close()


def test_cancel_indexing_stops_a_run_started_without_its_own_event(tmp_path):
    """``index_sources`` with no cancel event (as the CLI calls it) still registers one, so a Cancel
    from another session reaches it: here the Cancel comes at the run's first progress event; the run
    stops with ``Cancelled`` before any batch is committed and every document stays pending."""
    from core.types import Cancelled
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "ws")
    docs = [SourceDocument(f"d{i}.txt", " ".join([f"Document {i} tells of Port Sallow and its harbour."] * 30))
            for i in range(3)]
    reached: list[int] = []

    def progress(event) -> None:
        if not reached:
            reached.append(api.cancel_indexing(EDITOR, ws))

    try:
        with pytest.raises(Cancelled):
            api.index_sources(LOCAL_ADMIN, ws, docs, [], progress)
        assert reached == [1]
        assert runs_on(str(ws.path)) == 0
        statuses = {row.status for row in api.documents(LOCAL_ADMIN, ws)}
        assert statuses == {"pending"}, statuses
    finally:
        ws.close()


def test_pages_never_call_a_jobs_cancel_themselves():
    for path in sorted((ROOT / "pages").glob("*.py")) + [ROOT / "app.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr in ("cancel", "set") and "cancel" in ast.unparse(n.func.value).lower() + n.func.attr]
        assert not calls, f"{path.name}: {[ast.unparse(c) for c in calls]} — cancel through core.api.cancel_indexing"
