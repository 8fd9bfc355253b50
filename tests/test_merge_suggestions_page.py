"""The Knowledge graph page's merge suggestions (issue 33): a viewer sees none; an editor finds them,
dismisses one (remembered in the workspace) and merges another (one node fewer, a logged merge edit)."""
from __future__ import annotations

import shutil

import pytest

from core.auth import Principal, Role
from test_app_auth import PAGES, address, data_dir, run_page, signed_in  # noqa: F401 - fixtures

KG = PAGES[1]


@pytest.mark.slow
def test_a_viewer_sees_no_merge_suggestions(data_dir, signed_in, sample_workspace_dir):  # noqa: F811
    shutil.copytree(sample_workspace_dir, data_dir / "default")
    signed_in(Principal("v", "viewer@example.com", Role.viewer))
    at = run_page(KG)
    assert not at.exception, [e.value for e in at.exception]
    assert not [e for e in at.expander if "Merge suggestions" in str(e.label)]
    assert not [b for b in at.button if str(b.key).startswith("kg_suggest")]


@pytest.mark.slow
def test_an_editor_dismisses_one_suggestion_and_merges_another(data_dir, signed_in, sample_workspace_dir):  # noqa: F811
    from core import api
    from core.workspace import Workspace

    shutil.copytree(sample_workspace_dir, data_dir / "default")
    editor = Principal("e", "editor@example.com", Role.editor)
    signed_in(editor)
    ws = Workspace(data_dir / "default")
    try:
        before = ws.knowledge_graph().number_of_nodes()
        found = api.merge_suggestions(editor, ws, top=100)
    finally:
        ws.close()
    assert len(found) >= 2
    at = run_page(KG)
    at.button(key="kg_suggest_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    lines = [t.value for t in at.text if "score" in t.value and "→" in t.value]
    assert lines and found[0].merge_name in lines[0] and found[0].into_name in lines[0]
    at.button(key="kg_suggest_dismiss_0").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.button(key="kg_suggest_merge_0").click().run()
    assert not at.exception, [e.value for e in at.exception]
    ws = Workspace(data_dir / "default")
    try:
        edits = api.graph_edits(editor, ws)
        assert [e.op for e in edits] == ["merge"]
        assert ws.knowledge_graph().number_of_nodes() == before - 1
        left = {frozenset((s.merge, s.into)) for s in api.merge_suggestions(editor, ws, top=100)}
        assert frozenset((found[0].merge, found[0].into)) not in left  # dismissed, remembered
    finally:
        ws.close()
