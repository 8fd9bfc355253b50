"""Evaluation metrics and question parsing, with numbers checked by hand."""
from __future__ import annotations

import json

import pytest

from core.evaluation.metrics import (all_at_k, answer_in_context, bootstrap_ci, normalize_answer,
                                     ranked_documents, recall_at_k)
from core.evaluation.questions import parse_questions, resolve_gold


def test_ranked_documents_dedupes_in_rank_order():
    chunk_doc = {"c1": "A", "c2": "B", "c3": "A", "c4": "C"}
    assert ranked_documents(["c3", "c1", "c2", "cX", "c4"], chunk_doc) == ["A", "B", "C"]


def test_recall_and_all_at_k():
    ranked = ["A", "B", "C", "D"]
    assert recall_at_k(ranked, ["B", "D"], 2) == 0.5
    assert recall_at_k(ranked, ["B", "D"], 4) == 1.0
    assert all_at_k(ranked, ["B", "D"], 2) == 0.0 and all_at_k(ranked, ["B", "D"], 4) == 1.0
    assert recall_at_k(ranked, [], 5) is None


def test_answer_in_context_uses_normalised_answers_and_aliases():
    assert normalize_answer("The  Lantern-Tide Festival!") == "lanterntide festival"
    assert answer_in_context("... organised the Lantern Tide Festival since 1958", "lantern tide festival") == 1.0
    assert answer_in_context("born in Warsaw", "Paris", ["Warsaw"]) == 1.0
    assert answer_in_context("born in Warsawa", "Warsaw") == 0.0
    assert answer_in_context("anything", None) is None


def test_bootstrap_interval_brackets_the_mean_and_is_deterministic():
    values = [0.0, 1.0] * 20
    low, high = bootstrap_ci(values, seed=1)
    assert low < 0.5 < high
    assert bootstrap_ci(values, seed=1) == (low, high)


def test_question_parsing_reports_the_bad_line_and_resolves_names():
    with pytest.raises(ValueError, match="line 2"):
        parse_questions(['{"question": "ok?"}', "{broken"])
    qs = parse_questions(['{"qid": "s1", "question": "Who?", "answer": "X", "gold_doc_names": ["a.md"]}'])
    resolve_gold(qs, {"doc-1": "a.md", "doc-2": "b.md"})
    assert qs[0].gold_doc_ids == ["doc-1"]


# --- sentence-form gold answers ---------------------------------------------------------------------
def test_sentence_form_gold_is_matched_by_its_content_words_and_left_out_of_the_bold_columns():
    from core.evaluation.metrics import answer_in_context, key_term_recall, right_bold, sentence_gold, wrong_bold

    gold = "He was afraid that the ghosts would take away all of his wealth."
    assert sentence_gold(gold) and not sentence_gold("Josiah Harland") and not sentence_gold(gold, ["wealth"])
    context = "Scrooge was afraid, at night, that the ghosts had come to take away his wealth."
    assert key_term_recall(context, gold) >= 0.8
    assert answer_in_context(context, gold) == 1.0  # a verbatim match would have said 0.0
    assert answer_in_context("The ghosts visited him at night.", gold) == 0.0
    assert wrong_bold("**Marley** came first.", gold) is None and right_bold("**wealth** was gone.", gold) is None
    assert wrong_bold("**Marley** came first.", "Scrooge") == 1.0  # short gold: still judged


def test_the_evaluation_report_says_how_sentence_form_gold_was_judged(sample_ws, tmp_path):
    from core.evaluation.questions import load_questions
    from core.evaluation.runner import evaluate

    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"qid": "s1", "question": "Why did the railway matter to the cooperative?",
                                "answer": "The opening of the railway allowed the cooperative to send fresh fish "
                                          "to inland markets.",
                                "gold_doc_names": ["06-velmora-coastal-railway.md"]}) + "\n", encoding="utf-8")
    report = evaluate(sample_ws, load_questions(path), ["naive"], ks=(2,))
    assert any("1 of 1 gold answers are sentences" in w for w in report.warnings), report.warnings
    row = report.rows[0]
    assert row["wrong_bold"] is None and row["right_bold"] is None
    assert row["answer_in_context"] == 1.0  # the railway paragraph holds the sentence's content words
