"""An evaluation's question count is capped by the workspace's saved ``max_eval_questions``.

Before, Evaluate ran any number of uploaded questions: a viewer's 50 MB question file held one of the two
heavy work slots for hours, and two such runs blocked every evaluation and edit comparison. The library
refuses an oversized set before it takes a slot (a session's own settings cannot lift the limit), and the page
says so before the run and keeps the button off."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core import api
from core.auth import Principal, Role
from core.errors import TooManyQuestionsError
from core.evaluation.questions import Question
from core.settings import Settings, save_settings
from core.workspace import Workspace

from tests.sample_data_dir import sample_data_dir

ROOT = Path(__file__).resolve().parent.parent
VIEWER = Principal("v-sub", "viewer@example.com", Role.viewer)
EDITOR = Principal("e-sub", "editor@example.com", Role.editor)


def _questions(n: int) -> list[Question]:
    return [Question(qid=f"q{i}", question=f"Who was keeper number {i}?", answer=None) for i in range(n)]


@pytest.fixture
def capped(tmp_path: Path) -> Workspace:
    save_settings(tmp_path, Settings().with_overrides({"max_eval_questions": 3}))
    return Workspace(tmp_path, check_embedder=False)


def test_every_heavy_question_run_refuses_a_set_over_the_limit(capped: Workspace, monkeypatch):
    taken = []
    monkeypatch.setattr("core.api.evaluation.slots", lambda: taken.append(1))  # a slot taken = a failure below
    lifted = Settings().with_overrides({"max_eval_questions": 1_000_000})  # the session's settings do not lift it
    runs = {
        "evaluate": lambda qs: api.evaluate(VIEWER, capped, qs, ["naive"], settings=lifted),
        "router_rows": lambda qs: api.router_rows(VIEWER, capped, qs, "x", settings=lifted),
        "run_judge": lambda qs: api.run_judge(VIEWER, capped, qs, ["naive", "local"], chat=None),
        "evaluate_edits": lambda qs: api.evaluate_edits(EDITOR, capped, qs, ["naive"], since=1, settings=lifted),
    }
    for name, run in runs.items():
        with pytest.raises(TooManyQuestionsError, match="4 questions, over this workspace's limit of 3") as err:
            run(_questions(4))
        assert "max_eval_questions" in str(err.value), name
    assert not taken


def test_a_set_at_the_limit_is_run(capped: Workspace, monkeypatch):
    ran = []
    monkeypatch.setattr("core.evaluation.runner.evaluate", lambda ws, qs, *a, **k: ran.append(len(qs)) or "report")
    assert api.evaluate(VIEWER, capped, _questions(3), ["naive"]) == "report"
    assert ran == [3]


def test_the_page_says_so_before_the_run_and_keeps_the_button_off(tmp_path, monkeypatch, sample_workspace_dir):
    folder = sample_data_dir(tmp_path, monkeypatch, sample_workspace_dir)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page("pages/evaluate.py")
    at.run()
    assert at.button(key="eval_run").disabled is False  # the sample questions, under the default limit
    assert not [e for e in at.error if "limit" in e.value]
    settings = Settings().with_overrides({"max_eval_questions": 2})
    save_settings(folder / "default", settings)
    at.session_state["settings::default"] = settings  # as after Settings' Save
    at.run()
    errors = [e.value for e in at.error if "over this workspace's limit of 2" in e.value]
    assert len(errors) == 1 and "Questions to run" in errors[0], [e.value for e in at.error]
    assert at.button(key="eval_run").disabled is True
    at.number_input(key="eval_limit").set_value(2).run()
    assert not [e for e in at.error if "limit of 2" in e.value]
    assert at.button(key="eval_run").disabled is False
