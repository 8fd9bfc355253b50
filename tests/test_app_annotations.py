"""Annotation round trip through the app (AppTest): mark retrieved chunks on Inspect and Compare, see
them listed on Evaluate, export them, and evaluate on the exported file: recall matches the marks.
Also the Evaluate page's evidence-loss section and its Judge section without an LLM."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from conftest import ROOT

INSPECT = str(ROOT / "pages" / "inspect.py")
COMPARE = str(ROOT / "pages" / "compare.py")
EVALUATE = str(ROOT / "pages" / "evaluate.py")
QUESTION = "Who founded the Velmora Marine Institute and how is it linked to Port Sallow?"
TIMEOUT = 600


@pytest.fixture()
def data_dir(sample_workspace_dir, tmp_path):
    """A data folder holding a private copy of the sample workspace ("sample")."""
    shutil.copytree(sample_workspace_dir, tmp_path / "sample")
    old = os.environ.get("RAGSCOPE_DATA_DIR")
    os.environ["RAGSCOPE_DATA_DIR"] = str(tmp_path)
    yield tmp_path
    if old is None:
        os.environ.pop("RAGSCOPE_DATA_DIR", None)
    else:
        os.environ["RAGSCOPE_DATA_DIR"] = old


def page(path: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(path, default_timeout=TIMEOUT)
    at.session_state["workspace_name"] = "sample"
    return at


def _mark_radios(at, prefix: str) -> list:
    return [r for r in at.radio if str(r.key or "").startswith(f"{prefix}_mark_")]


def frame(at, *columns: str):
    """The first table showing all these columns (AppTest does not expose a dataframe's key)."""
    return next(d.value for d in at.dataframe if set(columns) <= set(d.value.columns))


def _workspace(data_dir):
    from core.workspace import Workspace

    return Workspace(data_dir / "sample")


def test_mark_in_inspect_and_compare_export_and_evaluate(data_dir, tmp_path):
    from core.annotations import annotations, write_export
    from core.cli.main import main
    from core.evaluation.metrics import ranked_documents

    # Inspect: naive on the question, first chunk relevant, second not relevant, an expected answer
    at = page(INSPECT).run()
    at.selectbox(key="inspect_mode").set_value("naive")
    at.text_area(key="inspect_question").input(QUESTION)
    at.button(key="inspect_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    result = at.session_state["inspect_last"]["result"]
    radios = _mark_radios(at, "inspect")
    assert len(radios) == min(10, len(result.chunks)) and all(r.value == "—" for r in radios)
    first, second = result.chunks[0].chunk_id, result.chunks[1].chunk_id
    assert radios[0].key.endswith(first) and radios[1].key.endswith(second)
    radios[0].set_value("relevant")
    radios[1].set_value("not relevant")
    at.text_input(key=next(t.key for t in at.text_input if t.key.startswith("inspect_answer_"))).input("Helena Marsh")
    at.button(key="inspect_annotate_save").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("1 relevant and 1 not relevant" in s.value for s in at.success)

    # Compare: naive + local, mark a chunk only local retrieved as relevant; the Inspect marks are shown
    at = page(COMPARE).run()
    at.text_area(key="compare_question").input(QUESTION)
    at.multiselect(key="compare_modes").set_value(["naive", "local"])
    at.button(key="compare_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    results = at.session_state["compare_last"]["results"]
    naive_ids = {c.chunk_id for c in results["naive"].chunks}
    local_only = [c.chunk_id for c in results["local"].chunks if c.chunk_id not in naive_ids]
    at.number_input(key="compare_annotate_count").set_value(
        len({c.chunk_id for r in results.values() for c in r.chunks})).run()
    radios = {r.key.rsplit("_", 1)[1]: r for r in _mark_radios(at, "compare")}
    assert radios[first].value == "relevant" and radios[second].value == "not relevant"  # stored marks shown
    extra = local_only[0] if local_only else next(c for c in radios if c not in (first, second))
    radios[extra].set_value("relevant")
    at.button(key="compare_annotate_save").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]

    ws = _workspace(data_dir)
    try:
        [stored] = annotations(ws)
        assert stored.question == QUESTION and stored.answer == "Helena Marsh"
        assert {m.chunk_id for m in stored.relevant} == {first, extra}
        assert [m.chunk_id for m in stored.not_relevant] == [second]
        modes_of = {m.chunk_id: m.mode.split(",") for m in stored.marks}  # the modes that retrieved each chunk
        assert "naive" in modes_of[first] and ("local" in modes_of[extra] if local_only else modes_of[extra])
        chunk_doc = {c: ch.doc_id for c, ch in ws.store.chunks_by_id(ws.store.all_chunk_ids()).items()}
        gold = stored.gold_doc_ids

        # Evaluate lists the annotation and offers it as a question source
        at = page(EVALUATE).run()
        assert not at.exception
        table = frame(at, "question", "relevant", "not relevant")
        assert list(table["question"]) == [QUESTION] and list(table["relevant"]) == [2]
        at.radio(key="eval_source").set_value("Annotations of this workspace").run()
        at.multiselect(key="eval_modes").set_value(["naive"])
        at.text_input(key="eval_ks").input("1,2,5")
        at.button(key="eval_run").click().run()
        assert not at.exception, [e.value for e in at.exception]
        page_report = at.session_state["evaluate_last"]["report"]

        # export (CLI), then eval on the exported file (CLI): recall follows the marks
        out = tmp_path / "marks.jsonl"
        assert write_export(ws, out) == 1
        assert main(["annotations", "export", "--workspace", str(ws.path), str(tmp_path / "cli.jsonl")]) == 0
        assert (tmp_path / "cli.jsonl").read_text() == out.read_text()
        rows_path = tmp_path / "rows.json"
        assert main(["eval", "--workspace", str(ws.path), "--questions", str(out), "--modes", "naive",
                     "--k", "1,2,5", "--per-question", str(rows_path), "--json"]) == 0
        rows = {r["mode"]: r for r in json.loads(rows_path.read_text())}
        docs = ranked_documents(result.evidence_chunk_ids, chunk_doc)  # naive's ranking of the same question
        for k in (1, 2, 5):
            expected = len(set(gold) & set(docs[:k])) / len(gold)
            assert rows["naive"][f"recall@{k}"] == pytest.approx(expected)
            assert page_report.modes["naive"]["recall@k"][str(k)] == pytest.approx(expected)
        assert docs[0] in gold and rows["naive"]["recall@1"] > 0  # naive's first chunk was marked relevant
        assert set(rows["naive"]["evidence_loss_chunks"]) == {first, extra}
        assert rows["naive"]["evidence_loss_chunks"][first] == "found"
    finally:
        ws.close()


def test_evaluate_shows_the_loss_section_and_the_judge_needs_an_llm(data_dir):
    at = page(EVALUATE).run()
    at.multiselect(key="eval_modes").set_value(["naive", "path"])
    at.text_input(key="eval_ks").input("2,5")
    at.button(key="eval_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    subheaders = [s.value for s in at.subheader]
    assert "Where the evidence was lost" in subheaders and "Judge: LLM win rates between modes" in subheaders
    lines = next(t.value for t in at.text if "gold documents" in t.value).splitlines()
    assert [line.split()[0] for line in lines] == ["naive", "path", "bm25"]
    charts = [c for c in at.get("plotly_chart")]
    assert len(charts) >= 4  # recall, stage shares, funnel, the question's funnel
    # the question's stage table: one row per mode, one column per gold document (transposed so it fits)
    stage_tables = [d.value for d in at.dataframe if list(d.value.columns)[:1] == ["mode"]
                    and list(d.value["mode"]) == ["naive", "path", "bm25"]]
    assert stage_tables and len(stage_tables[0].columns) >= 2, [list(d.value.columns) for d in at.dataframe]
    assert any("needs an LLM" in i.value for i in at.info)
    assert not [b for b in at.button if b.key == "judge_run"]


def test_judge_report_view_renders_heatmaps_and_side_by_side_answers(data_dir):
    from core.judge.report import JudgeReport, Judgment, QuestionResult

    judgments = [Judgment("naive|path", "naive", "path", {"comprehensiveness": "naive", "overall": "invalid"},
                          {"comprehensiveness": "covers the founder"}, raw="{\"comprehensiveness\": 1}",
                          note="no verdict for overall"),
                 Judgment("naive|path", "path", "naive", {"comprehensiveness": "tie", "overall": "path"})]
    report = JudgeReport(["naive", "path"], ["comprehensiveness", "overall"], "custom", "tiny",
                         [QuestionResult("q1", QUESTION, {"naive": "Answer <b>N</b>", "path": "Answer P"},
                                         {"naive": 10, "path": 20}, judgments)],
                         usage={"calls": 3, "cached": 1, "prompt_tokens": 100, "completion_tokens": 20, "seconds": 1.0})
    at = page(EVALUATE)
    at.session_state["judge_last"] = {"workspace": "sample", "report": report}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    charts = [c for c in at.get("plotly_chart") if "win rate of" in c.proto.spec]
    assert len(charts) == 2
    spec = json.loads(charts[0].proto.spec)
    assert spec["data"][0]["text"] == [["–", "75%"], ["25%", "–"]]  # naive 1 win + 1 tie of 2 valid
    texts = [t.value for t in at.text]
    assert "Answer <b>N</b>" in texts and "Answer P" in texts  # answers side by side, as plain text
    verdicts = frame(at, "Answer 1 → Answer 2")
    assert list(verdicts["Answer 1 → Answer 2"]) == ["naive → path"] * 2 + ["path → naive"] * 2
    assert "invalid" in list(verdicts["winner"])
    counts = frame(at, "A wins")
    overall = counts[counts["criterion"] == "overall"].iloc[0]
    assert (overall["A wins"], overall["B wins"], overall["ties"], overall["invalid"]) == (0, 1, 0, 1)
    assert any("Invalid verdicts (the reply named no winner): 1" in c.value for c in at.caption)
