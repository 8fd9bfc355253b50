"""Analyst annotations (core.annotations): storage, export/import in the FORMAT.md shape, the CLI,
clean removal with a deleted document, and migration of an older workspace."""
from __future__ import annotations

import json
import sqlite3

import pytest

from core.annotations import (annotation_for, annotations, delete_questions, export_records, import_file,
                              import_records, question_id, save_marks, write_export)
from core.evaluation.questions import load_questions, parse_questions

QUESTION = "Who founded the Velmora Marine Institute?"


def _chunks_of(ws, name: str) -> list[str]:
    doc_id = next(d for d, n in ws.doc_names().items() if n == name)
    return [c.chunk_id for c in ws.store.chunks_of(doc_id)]


def test_marks_are_stored_updated_and_removed(sample_ws_copy):
    ws = sample_ws_copy
    institute = _chunks_of(ws, "04-velmora-marine-institute.md")
    railway = _chunks_of(ws, "06-velmora-coastal-railway.md")
    stored = save_marks(ws, f"  {QUESTION} ", {institute[0]: True, railway[0]: False}, mode="naive",
                        answer="Dr. Helena Marsh")
    assert stored.qid == question_id(QUESTION) == question_id(QUESTION.replace(" ", "  "))
    assert stored.question == QUESTION and stored.answer == "Dr. Helena Marsh"
    assert [m.chunk_id for m in stored.relevant] == [institute[0]]
    assert [m.chunk_id for m in stored.not_relevant] == [railway[0]]
    assert stored.gold_doc_ids == [ws.store.chunks_by_id([institute[0]])[institute[0]].doc_id]
    # the same question from another page adds to the record; a mark can be flipped or removed
    again = save_marks(ws, QUESTION, {railway[0]: True}, mode="local")
    assert {m.chunk_id for m in again.relevant} == {institute[0], railway[0]} and not again.not_relevant
    assert again.answer == "Dr. Helena Marsh"  # answer=None keeps it
    save_marks(ws, QUESTION, {railway[0]: None, institute[0]: None}, answer="")
    assert annotation_for(ws, QUESTION) is None  # no mark and no answer left: the question goes too
    assert annotations(ws) == []


def test_bad_input_changes_nothing(sample_ws_copy):
    ws = sample_ws_copy
    chunk = _chunks_of(ws, "02-port-sallow.md")[0]
    save_marks(ws, QUESTION, {chunk: True})
    with pytest.raises(ValueError, match="not in this workspace"):
        save_marks(ws, QUESTION, {chunk: False, "no-such-chunk": True})
    assert annotation_for(ws, QUESTION).relevant[0].chunk_id == chunk  # unchanged
    with pytest.raises(ValueError, match="needs a question"):
        save_marks(ws, "   ", {chunk: True})
    with pytest.raises(ValueError, match="line 2: not valid JSON"):
        import_records(ws, [json.dumps({"question": "Q?", "evidence": [{"chunk_id": chunk}]}), "{broken"])
    assert [q.question for q in annotations(ws)] == [QUESTION]  # the valid first line was not written either


def test_export_is_a_question_file_that_eval_reads(sample_ws_copy, tmp_path):
    ws = sample_ws_copy
    institute = _chunks_of(ws, "04-velmora-marine-institute.md")
    sallow = _chunks_of(ws, "02-port-sallow.md")
    save_marks(ws, QUESTION, {institute[0]: True, sallow[0]: False}, mode="naive", answer="Helena Marsh")
    save_marks(ws, "Where is Port Sallow?", {sallow[0]: False}, mode="tree")
    [first, second] = export_records(ws)
    for field in ("qid", "question", "answer", "answer_aliases", "question_type", "hops", "gold_doc_ids",
                  "evidence", "meta"):
        assert field in first
    institute_doc = ws.store.chunks_by_id(institute[:1])[institute[0]].doc_id
    assert first["gold_doc_ids"] == [institute_doc] and first["answer"] == "Helena Marsh"
    assert first["evidence"] == [{"doc_id": institute_doc, "chunk_id": institute[0],
                                  "text": ws.store.chunks_by_id(institute[:1])[institute[0]].text}]
    assert first["meta"]["not_relevant"][0]["chunk_id"] == sallow[0] and first["meta"]["modes"] == ["naive"]
    assert second["gold_doc_ids"] == [] and second["answer"] is None  # only a not-relevant mark
    path = tmp_path / "marks.jsonl"
    assert write_export(ws, path) == 2
    questions = load_questions(path)
    assert [q.qid for q in questions] == [first["qid"], second["qid"]]
    assert questions[0].gold_doc_ids == [institute_doc] and questions[0].gold_chunk_ids == [institute[0]]
    assert questions[0].answer == "Helena Marsh" and questions[1].gold_chunk_ids == []


def test_import_round_trip_and_skipped_chunks(sample_ws_copy, sample_workspace_dir, tmp_path):
    import shutil

    from core.workspace import Workspace

    ws = sample_ws_copy
    institute = _chunks_of(ws, "04-velmora-marine-institute.md")
    save_marks(ws, QUESTION, {institute[0]: True, institute[-1]: False}, answer="Helena Marsh")
    path = tmp_path / "marks.jsonl"
    write_export(ws, path)
    extra = {"question": "Unknown?", "evidence": [{"doc_id": "x", "chunk_id": "gone-chunk"}]}
    path.write_text(path.read_text() + json.dumps(extra) + "\n")
    shutil.copytree(sample_workspace_dir, tmp_path / "fresh")
    fresh = Workspace(tmp_path / "fresh")
    try:
        report = import_file(fresh, path)
        assert (report.questions, report.marks) == (1, 2)
        assert len(report.skipped) == 2 and "gone-chunk" in report.skipped[0] and "not imported" in report.skipped[1]
        [back] = annotations(fresh)
        [orig] = annotations(ws)
        assert (back.qid, back.question, back.answer) == (orig.qid, orig.question, orig.answer)
        assert {(m.chunk_id, m.relevant) for m in back.marks} == {(m.chunk_id, m.relevant) for m in orig.marks}
        assert import_file(fresh, path).questions == 1 and len(annotations(fresh)) == 1  # idempotent
    finally:
        fresh.close()
    with pytest.raises(ValueError, match="no such file"):
        import_file(ws, tmp_path / "missing.jsonl")


def test_deleting_a_document_drops_its_marks_cleanly(sample_ws_copy):
    from core.indexing.deletion import delete_documents

    ws = sample_ws_copy
    institute = _chunks_of(ws, "04-velmora-marine-institute.md")
    sallow = _chunks_of(ws, "02-port-sallow.md")
    save_marks(ws, QUESTION, {institute[0]: True, sallow[0]: True})
    save_marks(ws, "Only the institute?", {institute[0]: True})
    save_marks(ws, "Institute, with an answer?", {institute[0]: False}, answer="yes")
    doc_id = next(d for d, n in ws.doc_names().items() if n == "04-velmora-marine-institute.md")
    with ws.writer():
        delete_documents(ws, [doc_id])
    by_question = {q.question: q for q in annotations(ws)}
    assert [m.chunk_id for m in by_question[QUESTION].marks] == [sallow[0]]
    assert "Only the institute?" not in by_question  # nothing left: removed
    assert by_question["Institute, with an answer?"].marks == []  # its expected answer keeps it
    with sqlite3.connect(ws.store.path) as conn:
        assert conn.execute("SELECT count(*) FROM annotations WHERE doc_id=?", (doc_id,)).fetchone()[0] == 0
    assert delete_questions(ws, [question_id(QUESTION)]) == 1


def test_an_older_workspace_gets_the_annotation_tables(sample_workspace_dir, tmp_path):
    import shutil

    from core.storage.schema import SCHEMA_VERSION
    from core.workspace import DB_FILE, Workspace

    shutil.copytree(sample_workspace_dir, tmp_path / "old")
    with sqlite3.connect(tmp_path / "old" / DB_FILE) as conn:
        conn.execute("DROP TABLE annotations")
        conn.execute("DROP TABLE annotation_questions")
        conn.execute("UPDATE meta SET value='2' WHERE key='schema_version'")
    ws = Workspace(tmp_path / "old")
    try:
        assert ws.store.get_meta("schema_version") == str(SCHEMA_VERSION)
        tables = {r[0] for r in ws.store.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"annotations", "annotation_questions"} <= tables
        assert annotations(ws) == []
    finally:
        ws.close()


def test_cli_export_import_and_list(sample_ws_copy, tmp_path, capsys):
    from core.cli.main import main

    ws = sample_ws_copy
    chunk = _chunks_of(ws, "05-kestrel-point-lighthouse.md")[0]
    save_marks(ws, "Who kept the lighthouse?", {chunk: True}, answer="Daniel Harland")
    out = tmp_path / "out" / "marks.jsonl"
    assert main(["annotations", "export", "--workspace", str(ws.path), str(out)]) == 0
    assert "wrote 1 annotated question(s)" in capsys.readouterr().err
    [record] = parse_questions(out.read_text().splitlines())
    assert record.gold_chunk_ids == [chunk] and record.answer == "Daniel Harland"
    delete_questions(ws, [question_id("Who kept the lighthouse?")])
    assert main(["annotations", "import", "--workspace", str(ws.path), "--json", str(out)]) == 0
    assert json.loads(capsys.readouterr().out) == {"questions": 1, "marks": 1, "skipped": []}
    assert main(["annotations", "list", "--workspace", str(ws.path), "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["relevant"] == [chunk] and listed["answer"] == "Daniel Harland"
    assert main(["annotations", "import", "--workspace", str(ws.path), str(tmp_path / "nope.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
