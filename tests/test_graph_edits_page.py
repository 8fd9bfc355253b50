"""The Knowledge graph page's edit controls (issue 33): a viewer sees none of them; an editor merges two
entities from the Details panel (one node fewer), reads the edit history as plain text (HTML in an edit
is not rendered) and undoes the merge (both nodes back)."""
from __future__ import annotations

import shutil

import pytest

from core.auth import Principal, Role
from test_app_auth import PAGES, address, data_dir, run_page, signed_in  # noqa: F401 - fixtures

KG = PAGES[1]


def _edit_keys(at) -> set[str]:
    return ({w.key for w in at.button} | {w.key for w in at.radio} | {w.key for w in at.checkbox}) & {
        "kg_edit_kind", "kg_merge_ok", "kg_merge_go"} | {w.key for w in at.button if str(w.key).startswith("kg_undo_")}


@pytest.mark.slow
def test_a_viewer_sees_no_edit_controls(data_dir, signed_in, sample_workspace_dir):  # noqa: F811
    shutil.copytree(sample_workspace_dir, data_dir / "default")
    signed_in(Principal("v", "viewer@example.com", Role.viewer))
    at = run_page(KG)
    assert not at.exception, [e.value for e in at.exception]
    assert _edit_keys(at) == set() and not [e for e in at.expander if "Edit" in str(e.label)]


@pytest.mark.slow
def test_an_editor_merges_from_the_details_panel_and_undoes_it(data_dir, signed_in, sample_workspace_dir):  # noqa: F811
    from core import api
    from core.workspace import Workspace

    shutil.copytree(sample_workspace_dir, data_dir / "default")
    editor = Principal("e", "editor@example.com", Role.editor)
    signed_in(editor)
    ws = Workspace(data_dir / "default")
    try:
        api.edit_graph(editor, ws, "describe", {"name": "Dunmore", "description": "<b>town</b> **x**"})
        before = ws.knowledge_graph().number_of_nodes()
    finally:
        ws.close()
    at = run_page(KG)
    assert not at.exception, [e.value for e in at.exception]
    history = [t.value for t in at.text if t.value.startswith("#1 describe")]
    assert history and "<b>town</b> **x**" in history[0]  # plain text, not rendered
    at.radio(key="kg_edit_kind").set_value("merge").run()
    other = at.selectbox(key="kg_edit_merge_other").value
    at.checkbox(key="kg_merge_ok").check().run()
    at.button(key="kg_merge_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    ws = Workspace(data_dir / "default")
    try:
        assert ws.knowledge_graph().number_of_nodes() == before - 1 and other not in ws.knowledge_graph()
        assert [e.op for e in api.graph_edits(editor, ws)] == ["describe", "merge"]
    finally:
        ws.close()
    at.button(key="kg_undo_2").click().run()
    assert not at.exception, [e.value for e in at.exception]
    ws = Workspace(data_dir / "default")
    try:
        assert ws.knowledge_graph().number_of_nodes() == before and other in ws.knowledge_graph()
    finally:
        ws.close()


@pytest.mark.slow
def test_a_confirmation_does_not_carry_over_to_another_entity(data_dir, signed_in, sample_workspace_dir):  # noqa: F811
    """Ticking "I confirm this change" for deleting one entity, then picking another in the Details panel,
    left the tick and the Apply button ready for the other (found walking the page): the tick belongs to
    the statement it confirmed."""
    shutil.copytree(sample_workspace_dir, data_dir / "default")
    signed_in(Principal("e", "editor@example.com", Role.editor))
    at = run_page(KG)
    at.radio(key="kg_edit_kind").set_value("delete").run()
    at.checkbox(key="kg_delete_ok").check().run()
    assert [b.key for b in at.button if b.key == "kg_delete_go"]
    first = at.selectbox(key="kg_entity").value
    other = next(o for o in at.selectbox(key="kg_entity").options if o != first)
    at.selectbox(key="kg_entity").set_value(other).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.checkbox(key="kg_delete_ok").value is False
    assert not [b.key for b in at.button if b.key == "kg_delete_go"]
    assert not at.warning, [w.value for w in at.warning]


def test_the_edit_history_says_each_edit_in_words_without_python_lists():
    """The history line read "merge by local: into=river anwen, names=['anwen']" and "keywords=['flood']"
    (Python's list notation, seen in a browser). Each edit is a phrase; lists are their items."""
    from ui.graph_edits_view import edit_summary

    assert edit_summary("merge", {"names": ["anwen", "Anwen R."], "into": "river anwen"}) == \
        "anwen, Anwen R. merged into river anwen"
    related = edit_summary("relate", {"source": "ashcombe", "target": "great velmora flood", "keywords": ["flood", "tide"],
                                      "description": "Ashcombe was flooded."})
    assert related == "ashcombe — great velmora flood related (keywords: flood, tide): Ashcombe was flooded."
    assert edit_summary("delete_relation", {"source": "a", "target": "b"}) == "the relation a — b deleted"
    assert edit_summary("rename", {"name": "harland", "to": "Harland family"}) == "harland renamed to Harland family"
    assert edit_summary("future_op", {"names": ["x", "y"]}) == "names: x, y"  # no sentence: its arguments
    from types import SimpleNamespace

    from ui.edit_question_view import edit_label  # Compare's / Inspect's "Before edit" picker says the same

    assert edit_label(SimpleNamespace(id=4, op="merge", args={"names": ["anwen"], "into": "river anwen"})) == \
        "#4 merge: anwen merged into river anwen"
    for op in ("merge", "relate", "future_op"):
        assert "[" not in edit_summary(op, {"names": ["x"], "into": "y", "source": "s", "target": "t",
                                            "keywords": ["k"]})


@pytest.mark.slow
def test_rename_offers_apply_only_for_a_new_name(data_dir, signed_in, sample_workspace_dir):  # noqa: F811
    """The New name field starts with the current name: Apply on it logged an edit that changed nothing, and
    on an emptied field failed with "rename needs to". Both now show a hint and no confirmation."""
    shutil.copytree(sample_workspace_dir, data_dir / "default")
    signed_in(Principal("e", "editor@example.com", Role.editor))
    at = run_page(KG)
    at.radio(key="kg_edit_kind").set_value("rename").run()
    current = at.text_input(key="kg_edit_rename").value
    for typed, hint in ((current, "Type the new name: this is the current one."), ("  ", "Type the new name.")):
        at.text_input(key="kg_edit_rename").set_value(typed).run()
        assert not at.exception, [e.value for e in at.exception]
        assert hint in [c.value for c in at.caption]
        assert not [w for w in at.checkbox if w.key == "kg_rename_ok"]
    at.text_input(key="kg_edit_rename").set_value(current + " Harbour").run()
    assert [w for w in at.checkbox if w.key == "kg_rename_ok"]
