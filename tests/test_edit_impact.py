"""What the edits changed (core.editing.impact, core.api.evaluate_edits, ``eval --since-edit N``; issue 33):
the "before" evaluation equals the one of a workspace that never had the edits, the "after" the one of the
edited workspace; the workspace itself is not written; the changed questions are the ones whose gold ranks
moved; a viewer is refused; an edit number with nothing after it is refused."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.auth import Principal, Role
from core.errors import PermissionDeniedError

EDITOR = Principal("ed", "editor@example.org", Role.editor)
VIEWER = Principal("vi", "viewer@example.org", Role.viewer)
QUESTIONS = Path(__file__).resolve().parent.parent / "data" / "sample_questions.jsonl"
MODES = ["local", "global"]


def _ranks(report) -> dict:
    return {(r["qid"], r["mode"]): r["found_ranks"] for r in report.rows}


@pytest.fixture()
def questions():
    from core.evaluation.questions import load_questions

    return load_questions(QUESTIONS)[:13]  # sample:9, 11 and 12 move with the merge and the deletion


@pytest.mark.slow
def test_before_equals_never_edited_and_after_equals_edited(sample_workspace_dir, tmp_path, questions):
    from core.api import edit_graph, evaluate_edits, graph_edits
    from core.evaluation.runner import evaluate
    from core.workspace import Workspace

    shutil.copytree(sample_workspace_dir, tmp_path / "ws")
    ws = Workspace(tmp_path / "ws")
    pristine = Workspace(sample_workspace_dir)
    try:
        never = evaluate(pristine, questions, MODES, (2, 5, 10))
        edit_graph(EDITOR, ws, "retype", {"name": "Dunmore", "type": "GPE"})  # edit 1: before the window
        edit_graph(EDITOR, ws, "merge", {"names": ["Port Sallow Quay"], "into": "Port Sallow"})
        edit_graph(EDITOR, ws, "delete_entity", {"name": "Greywick"})
        keep_retype = evaluate_edits(EDITOR, ws, questions, MODES, since=2)
        assert keep_retype.undone == [2, 3]
        impact = evaluate_edits(EDITOR, ws, questions, MODES, since=1)
        edited = evaluate(ws, questions, MODES, (2, 5, 10))
    finally:
        pristine.close()
    try:
        assert _ranks(impact.before) == _ranks(never)
        assert _ranks(impact.after) == _ranks(edited)
        assert _ranks(impact.before) != _ranks(impact.after)  # these edits move some gold document
        moved = {(c["qid"], c["mode"]) for c in impact.changed}
        assert moved == {key for key, ranks in _ranks(edited).items() if _ranks(never)[key] != ranks} | {
            (r["qid"], r["mode"]) for r in edited.rows
            if r["answer_in_answer"] != next(n for n in never.rows if (n["qid"], n["mode"]) == (r["qid"], r["mode"]))
            ["answer_in_answer"]}
        assert [e.id for e in graph_edits(EDITOR, ws, include_undone=False)] == [1, 2, 3]  # not written
        table = {row["mode"]: row for row in impact.table()}
        assert set(table) >= set(MODES) and table["local"]["R@5"] == (
            never.modes["local"]["recall@k"]["5"], edited.modes["local"]["recall@k"]["5"])
    finally:
        ws.close()


def test_refused_for_a_viewer_and_without_edits_after_n(sample_ws_copy, questions):
    from core.api import evaluate_edits
    from core.editing.replay import EditError

    with pytest.raises(PermissionDeniedError):
        evaluate_edits(VIEWER, sample_ws_copy, questions, MODES, since=1)
    with pytest.raises(EditError, match="no active edit numbered 1"):
        evaluate_edits(EDITOR, sample_ws_copy, questions, MODES, since=1)


@pytest.mark.slow
def test_cli_eval_since_edit(sample_ws_copy, capsys):
    from core.cli.main import main
    from core.editing.log import make_edit

    make_edit(sample_ws_copy, "merge", {"names": ["Port Sallow Quay"], "into": "Port Sallow"})
    path = str(sample_ws_copy.path)
    sample_ws_copy.close()
    assert main(["eval", "--workspace", path, "--questions", str(QUESTIONS), "--modes", "naive,local",
                 "--limit", "4", "--since-edit", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["since_edit"] == 1 and out["undone_in_copy"] == [1]
    assert [row["mode"] for row in out["table"]] == ["naive", "local", "bm25"]
    assert main(["eval", "--workspace", path, "--questions", str(QUESTIONS), "--modes", "local",
                 "--limit", "4", "--since-edit", "1"]) == 0
    text = capsys.readouterr().out
    assert "before = edits 1 undone in a copy" in text and "→" in text
