"""Question files are offered where their corpus is (``ui.question_files``): "What the edits changed" and
Evaluate offered the shared data sets' question files in the sample workspace (questions about documents it
does not hold). The rule is the example questions' (``ui.examples.holds_gold_documents``); a file naming no
gold document is placed by its data set's corpus; the files left out are named and an upload stays possible.
Each test fails on the code before."""
from __future__ import annotations

import json

import pytest

from core.auth import Principal, Role
from test_app_auth import PAGES, address, data_dir, run_page, signed_in  # noqa: F401 - fixtures
from test_edit_impact_page import _prepare

SAMPLE_LABEL = "Sample corpus questions (data/sample_questions.jsonl)"


def _write(path, rows) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def test_a_file_is_offered_where_its_gold_documents_are_and_a_file_without_gold_by_its_corpus(tmp_path):
    from ui.question_files import fits

    named = tmp_path / "named" / "questions.jsonl"
    named.parent.mkdir()
    _write(named, [{"qid": f"q{i}", "question": "Who?", "gold_doc_ids": [f"d{i}"]} for i in range(4)])
    assert fits(named, {"d0": "a.md", "d1": "b.md", "x": "c.md"})  # 2 of 4 questions find a gold document
    assert not fits(named, {"d0": "a.md", "x": "c.md"})  # 1 of 4: another corpus
    global_set = tmp_path / "podcasts" / "questions.jsonl"
    global_set.parent.mkdir()
    _write(global_set, [{"qid": "g1", "question": "What recurring topics come up?", "gold_doc_ids": []}])
    assert not fits(global_set, {"p1": "episode 1"})  # no gold and no corpus beside it: nothing to place it by
    _write(global_set.parent / "corpus.jsonl", [{"doc_id": "p1", "title": "Episode 1", "text": "..."}])
    global_set.touch()  # a new version of the file (its cache is per modification time)
    assert fits(global_set, {"p1": "episode 1"}) and not fits(global_set, {"s1": "01-velmora-coast.md"})


@pytest.mark.slow
def test_the_sample_workspace_is_offered_the_sample_questions_only_and_told_why(data_dir, signed_in,  # noqa: F811
                                                                                sample_workspace_dir):
    editor = Principal("e", "editor@example.com", Role.editor)
    _prepare(data_dir, sample_workspace_dir, editor)
    signed_in(editor)
    at = run_page(PAGES[1])
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="kg_impact_file").options == [SAMPLE_LABEL, "Upload a question file"]
    from ui.question_files import built_in_question_files

    shared = [label for label in built_in_question_files() if label.endswith("(shared data)")]
    notes = [c.value for c in at.caption if c.value.startswith("Not offered here:")]
    if shared:  # the shared data sets sit beside the project here: each is named as left out, with the reason
        assert len(notes) == 1 and all(label in notes[0] for label in shared[:6]), notes
        assert "does not hold. Upload a question file to run one anyway." in notes[0]
    at.selectbox(key="kg_impact_file").set_value("Upload a question file").run()
    assert [u.proto.label for u in at.get("file_uploader")] == ["Question file (.jsonl)"]
    assert at.button(key="kg_impact_go").disabled  # nothing to run until a file is uploaded
    evaluate = run_page("pages/evaluate.py")
    assert evaluate.selectbox(key="eval_file").options == [SAMPLE_LABEL]
