"""The Knowledge graph page's junk nodes (issue 33): a viewer sees none; an editor lists the sample's isolated
nodes on request (none pre-ticked, so the delete button deletes nothing) and dismisses them as not junk, which
the workspace remembers."""
from __future__ import annotations

import shutil

import pytest

from core.auth import Principal, Role
from test_app_auth import PAGES, address, data_dir, run_page, signed_in  # noqa: F401 - fixtures

KG = PAGES[1]


@pytest.mark.slow
def test_a_viewer_sees_no_junk_nodes(data_dir, signed_in, sample_workspace_dir):  # noqa: F811
    shutil.copytree(sample_workspace_dir, data_dir / "default")
    signed_in(Principal("v", "viewer@example.com", Role.viewer))
    at = run_page(KG)
    assert not at.exception, [e.value for e in at.exception]
    assert not [e for e in at.expander if "Junk nodes" in str(e.label)]
    assert not [b for b in at.button if str(b.key).startswith("kg_junk")]


@pytest.mark.slow
def test_an_editor_lists_weak_junk_unticked_and_dismisses_it(data_dir, signed_in, sample_workspace_dir):  # noqa: F811
    from core import api
    from core.workspace import Workspace

    shutil.copytree(sample_workspace_dir, data_dir / "default")
    editor = Principal("e", "editor@example.com", Role.editor)
    signed_in(editor)
    at = run_page(KG)
    assert [e for e in at.expander if "Junk nodes" in str(e.label)]
    at.button(key="kg_junk_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("No junk node found" in c.value for c in at.caption)  # the sample has no strong junk
    at.checkbox(key="kg_junk_weak").check().run()
    at.button(key="kg_junk_go").click().run()
    assert any("0 ticked entities" in t.value for t in at.text)  # isolated nodes are never pre-ticked
    dismiss = at.button(key="kg_junk_dismiss")
    count = int(str(dismiss.label).split()[-2])
    assert count >= 1
    dismiss.click().run()
    assert not at.exception, [e.value for e in at.exception]
    ws = Workspace(data_dir / "default")
    try:
        assert api.junk_suggestions(editor, ws, include_weak=True) == []  # every one dismissed, remembered
        assert api.graph_edits(editor, ws) == []  # nothing deleted
    finally:
        ws.close()
