"""Evaluate's summary: two tables that fit, each saying what it counts over, no ``None`` cell (BM25's
answer columns read "—" with a note), and the pooled evidence-loss view labelled as pooled."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import pages_data_dir
from streamlit.testing.v1 import AppTest

from core.evaluation.runner import EvalReport
from ui.eval_tables import answers_frame, counted_over, evidence_frame, summary_notes

ROOT = Path(__file__).resolve().parent.parent


def _mode(recall: float | None, answer: float | None) -> dict:
    return {"recall@k": {"5": recall}, "all@k": {"5": recall}, "answer_in_context": answer,
            "answer_in_answer": answer, "answer_in_first_line": answer, "right_bold": answer,
            "wrong_bold": None if answer is None else 0.1, "context_tokens": 1234.4,
            "latency_ms": {"p50": 12.345, "p95": 3463.61}}


def report() -> EvalReport:
    rows = [{"qid": "q1", "mode": m, "gold": ["a", "b", "c"], "answer_in_context": 1.0 if m != "bm25" else 1.0}
            for m in ("naive", "bm25")]
    rows += [{"qid": "q2", "mode": m, "gold": ["d"], "answer_in_context": None} for m in ("naive", "bm25")]
    rows += [{"qid": "q3", "mode": m, "gold": [], "answer_in_context": 0.0} for m in ("naive", "bm25")]
    return EvalReport(questions=3, ks=[5], modes={"naive": _mode(0.97, 0.5), "bm25": _mode(0.9, None)}, rows=rows)


def test_summary_tables_have_no_none_and_bm25_answers_read_a_dash():
    evidence, answers = evidence_frame(report()), answers_frame(report())
    for frame in (evidence, answers):
        assert not frame.isna().any().any()
        assert "None" not in frame.astype(str).to_string() and "nan" not in frame.astype(str).to_string()
    bm25 = answers[answers["mode"] == "bm25"].iloc[0]
    assert bm25["in answer %"] == "—" and bm25["bold ≠ gold %"] == "—"
    assert bm25["p95 ms"] == "3,463.6" and answers.iloc[0]["in first line %"] == "50.0"
    assert list(evidence.columns) == ["mode", "R@5 %", "all@5 %"] and evidence.iloc[0]["R@5 %"] == "97.0"
    assert len(answers.columns) <= 9 and len(evidence.columns) <= 7  # each fits beside the sidebar
    assert any("bm25" in note and "—" in note for note in summary_notes(report()))


def test_counted_over_names_questions_and_pooled_gold_documents():
    assert counted_over(report()) == {"questions": 3, "with_gold": 2, "with_answer": 2, "gold_documents": 4}


@pytest.fixture()
def data_dir(tmp_path, monkeypatch, sample_workspace_dir) -> Path:
    return pages_data_dir(sample_workspace_dir, tmp_path, monkeypatch)


@pytest.mark.slow
def test_evaluate_page_says_what_each_figure_counts_over(data_dir):
    at = AppTest.from_file(str(ROOT / "pages" / "evaluate.py"), default_timeout=300)
    at.session_state["workspace_name"] = "sample"
    at.run()
    at.multiselect(key="eval_modes").set_value(["naive"])
    at.number_input(key="eval_limit").set_value(3)
    at.button(key="eval_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    assert any("over the 3 of 3 questions that have gold documents" in t for t in texts), texts
    assert any("questions that have a gold answer" in t for t in texts)
    assert any(t.startswith("Pooled view: every gold document of the set counts once") for t in texts)
    assert any("bm25 is a lexical reference ranking" in t for t in texts)
    tables = [d.value for d in at.dataframe if "mode" in d.value.columns]
    assert len(tables) >= 2
    for table in tables[:2]:
        assert "None" not in table.astype(str).to_string()
