"""``eval --since-edit`` on PostgreSQL (issue 33): the "before" index of a PostgreSQL workspace is a SQLite copy
of its records (``core.storage.record_copy``) and its folder's vectors with the edits undone. With a real
PostgreSQL server (tests/postgres_fixture.py): the copy's graph equals the graph of a twin workspace indexed
from the same documents and never edited; the before evaluation equals the twin's, the after one the edited
workspace's; the PostgreSQL workspace keeps its edits; and ``python -m core eval --since-edit`` runs on it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import HashEmbedder
from postgres_fixture import pg_store, postgres_server  # noqa: F401 - fixtures

from core.auth import Principal, Role

pytestmark = pytest.mark.slow
EDITOR = Principal("ed", "editor@example.org", Role.editor)
MODES = ["naive", "local", "global"]
DOCS = [
    ("harbour", "The Velmora Harbour Trust was founded by Mara Lindqvist in Port Sallow in 1887. The Harbour Trust "
                "built the Kestrel Point Lighthouse. Mara Lindqvist later chaired the Port Sallow council."),
    ("railway", "The Velmora Coastal Railway runs from Millbrook to Port Sallow. Tomas Berg engineered the "
                "Velmora Coastal Railway, and the Harbour Trust paid for its last mile."),
    ("flood", "The Great Velmora Flood of 1911 destroyed the Millbrook bridge. Tomas Berg rebuilt the bridge "
              "for the Velmora Harbour Trust in 1913."),
]
QUESTIONS = [("q1", "Who founded the Velmora Harbour Trust?", "Mara Lindqvist", ["harbour"]),
             ("q2", "Who rebuilt the bridge that the Great Velmora Flood destroyed?", "Tomas Berg", ["flood"]),
             ("q3", "Who engineered the railway whose last mile the Harbour Trust paid for?", "Tomas Berg",
              ["railway"])]


def _indexed(path: Path, store: str):
    from core.indexing.pipeline import process_pending, register_documents
    from core.types import SourceDocument
    from core.workspace import Workspace

    ws = Workspace(path, embedder=HashEmbedder(), store=store)
    with ws.writer():
        register_documents(ws, [SourceDocument(f"{d}.txt", text, doc_id=d) for d, text in DOCS], [])
        report = process_pending(ws)
    assert report.processed == len(DOCS) and not report.failed
    return ws


def _questions():
    from core.evaluation.questions import Question

    return [Question(qid, text, answer, gold_doc_ids=gold) for qid, text, answer, gold in QUESTIONS]


def _graph(ws) -> tuple[dict, dict]:
    graph = ws.knowledge_graph()
    return ({k: dict(d) for k, d in graph.nodes(data=True)},
            {tuple(sorted((a, b))): dict(d) for a, b, d in graph.edges(data=True)})


def _ranks(report) -> dict:
    return {(r["qid"], r["mode"]): (r["found_ranks"], r["answer_in_answer"]) for r in report.rows}


def _question_file(tmp_path: Path) -> Path:
    qfile = tmp_path / "questions.jsonl"
    qfile.write_text("".join(json.dumps({"qid": q, "question": t, "answer": a, "gold_doc_ids": g}) + "\n"
                             for q, t, a, g in QUESTIONS), encoding="utf-8")
    return qfile


def test_since_edit_on_postgresql_equals_a_never_edited_twin(pg_store, tmp_path):  # noqa: F811
    from core import api
    from core.editing.impact import workspace_before
    from core.evaluation.runner import evaluate

    ws = _indexed(tmp_path / "pg", pg_store)
    twin = _indexed(tmp_path / "twin", "sqlite")
    try:
        assert ws.backend.name == "postgresql" and _graph(ws) == _graph(twin)
        victim = "velmora harbour trust" if "velmora harbour trust" in ws.knowledge_graph() else \
            sorted(ws.knowledge_graph().nodes)[0]
        api.edit_graph(EDITOR, ws, "delete_entity", {"name": victim})
        api.edit_graph(EDITOR, ws, "retype", {"name": "tomas berg", "type": "ORG"})
        assert victim not in ws.knowledge_graph()
        with workspace_before(ws, 1) as (copy, undone):
            assert copy.backend.name == "sqlite" and undone == [1, 2]
            assert _graph(copy) == _graph(twin)  # the PostgreSQL records, copied, with the edits undone
            docs = [(d.doc_id, d.content_hash, d.status, d.tokens) for d in copy.records.documents()]
            assert docs == [(d.doc_id, d.content_hash, d.status, d.tokens) for d in twin.records.documents()]
            assert copy.records.all_chunk_ids() == twin.records.all_chunk_ids()
        questions = _questions()
        impact = api.evaluate_edits(EDITOR, ws, questions, MODES, since=1)
        never = evaluate(twin, questions, MODES, (2, 5, 10))
        edited = evaluate(ws, questions, MODES, (2, 5, 10))
        assert _ranks(impact.before) == _ranks(never) and _ranks(impact.after) == _ranks(edited)
        assert [e.id for e in api.graph_edits(EDITOR, ws, include_undone=False)] == [1, 2]  # not written
        assert victim not in ws.knowledge_graph()
    finally:
        ws.close()
        twin.close()


def test_cli_eval_since_edit_on_postgresql(pg_store, tmp_path, monkeypatch, capsys):  # noqa: F811
    import core.cli.base as cli_base
    from core import api
    from core.cli.main import main
    from core.workspace import Workspace

    ws = _indexed(tmp_path / "pg", pg_store)
    try:
        api.edit_graph(EDITOR, ws, "retype", {"name": "tomas berg", "type": "ORG"})
    finally:
        ws.close()
    qfile = _question_file(tmp_path)
    monkeypatch.setenv("RAGSCOPE_STORE", pg_store)  # restored afterwards (the CLI sets it for its run)
    monkeypatch.setattr(cli_base, "Workspace", lambda path, **kw: Workspace(path, embedder=HashEmbedder(), **kw))
    assert main(["eval", "--workspace", str(tmp_path / "pg"), "--store", pg_store, "--questions", str(qfile),
                 "--modes", "naive,local", "--k", "2,5", "--since-edit", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["since_edit"] == 1 and out["undone_in_copy"] == [1]
    assert [row["mode"] for row in out["table"]][:2] == ["naive", "local"]
