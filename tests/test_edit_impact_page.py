"""The Knowledge graph page's "What the edits changed" (issue 33): hidden from a viewer; an editor with
edits re-runs the sample questions before → after in one click and reads the per-mode table."""
from __future__ import annotations

import shutil

import pytest

from core.auth import Principal, Role
from test_app_auth import PAGES, address, data_dir, run_page, signed_in  # noqa: F401 - fixtures

KG = PAGES[1]


def _prepare(data_dir, sample_workspace_dir, who: Principal) -> None:  # noqa: F811
    from core import api
    from core.workspace import Workspace

    shutil.copytree(sample_workspace_dir, data_dir / "default")
    ws = Workspace(data_dir / "default")
    try:
        api.edit_graph(Principal("e", "editor@example.com", Role.editor), ws, "merge",
                       {"names": ["Port Sallow Quay"], "into": "Port Sallow"})
    finally:
        ws.close()


@pytest.mark.slow
def test_a_viewer_sees_no_before_after(data_dir, signed_in, sample_workspace_dir):  # noqa: F811
    viewer = Principal("v", "viewer@example.com", Role.viewer)
    _prepare(data_dir, sample_workspace_dir, viewer)
    signed_in(viewer)
    at = run_page(KG)
    assert not at.exception, [e.value for e in at.exception]
    assert not [e for e in at.expander if "What the edits changed" in str(e.label)]
    assert not [b for b in at.button if b.key == "kg_impact_go"]


@pytest.mark.slow
def test_an_editor_re_runs_the_questions_before_and_after(data_dir, signed_in, sample_workspace_dir):  # noqa: F811
    editor = Principal("e", "editor@example.com", Role.editor)
    _prepare(data_dir, sample_workspace_dir, editor)
    signed_in(editor)
    at = run_page(KG)
    at.number_input(key="kg_impact_limit").set_value(3).run()
    at.button(key="kg_impact_go").click().run(timeout=600)
    assert not at.exception, [e.value for e in at.exception]
    frames = [d.value for d in at.dataframe]
    table = next(f for f in frames if "mode" in f.columns and "R@5" in f.columns)
    assert {"local", "hybrid", "bm25"} <= set(table["mode"]) and all("→" in v for v in table["R@5"])
    assert any("before = edits 1 undone" in c.value for c in at.caption)


def test_the_changed_questions_table_reads_answer_found_as_yes_no_or_a_dash():
    """A question without a gold answer (the sample's "main themes" questions) showed "None → None" in the
    "answer found" column (seen in a browser); it reads "—", and found / not found read yes / no."""
    from types import SimpleNamespace

    from ui.edit_impact_view import changed_frame

    changed = [{"qid": q, "mode": "mix", "R@2": (0.5, 0.5), "gold_ranks_before": {"a": 1}, "gold_ranks_after": {"a": 2},
                "answer_in_answer": found} for q, found in (("q1", (None, None)), ("q2", (True, False)))]
    frame = changed_frame(SimpleNamespace(after=SimpleNamespace(ks=[2]), changed=changed), {"q1": "Themes?"})
    assert list(frame["answer found"]) == ["— → —", "yes → no"]
    assert list(frame["question"]) == ["Themes?", "q2"] and list(frame["gold rank moved"]) == ["a: 1 → 2"] * 2
