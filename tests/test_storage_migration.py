"""Workspaces written by an earlier release open with today's storage code, on both backends.

The fixtures in ``tests/fixtures/written_by_main/`` were written by main 8d24a6f — the last code whose SQL was
text (SQLite's, rewritten for PostgreSQL by regular expressions) before the statements moved to SQLAlchemy
Core: a SQLite workspace file, and a ``pg_dump`` of the same workspace on PostgreSQL (two documents, one
annotation, one LLM cache row; ``make_fixtures.py`` says how they were made). Each is opened as it is, read
back record by record, and indexed further: one more document, whose entities join the old ones.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import HashEmbedder
from postgres_fixture import pg_store, postgres_server  # noqa: F401 - fixtures

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "written_by_main"
NEW_DOCUMENT = ("crane.txt", "Tomas Berg bought a harbour crane from Kvaerner Lifting in Stavanger.")


def open_ws(folder: Path, store: str):
    from core.workspace import Workspace

    return Workspace(folder, embedder=HashEmbedder(), store=store)


def read_and_extend(ws) -> None:
    from core.annotations import annotations
    from core.indexing.pipeline import process_pending, register_documents
    from core.indexing.reconcile import reconcile
    from core.storage.records import CachedReply
    from core.storage.schema import SCHEMA_VERSION
    from core.types import SourceDocument

    records = ws.records
    assert records.get_meta("schema_version") == str(SCHEMA_VERSION)
    docs = records.documents()
    assert [(d.name, d.status, d.seq) for d in docs] == [("harbour.txt", "processed", 1), ("pumps.txt", "processed", 2)]
    harbour = records.chunks_of(docs[0].doc_id)
    assert len(harbour) == 1 and harbour[0].text.startswith("Mara Lindqvist founded Brightwater Robotics")
    assert records.chunks_by_id([harbour[0].chunk_id])[harbour[0].chunk_id] == harbour[0]
    graph = ws.views.graph
    assert graph.name("brightwater robotics") == "Brightwater Robotics"
    assert graph.entity("tomas berg").source_chunk_ids == tuple(records.all_chunk_ids())  # named in both documents
    assert graph.has_relation("brightwater robotics", "mara lindqvist")
    assert [f.doc_id for f in records.entity_fragments(["tomas berg"])["tomas berg"]] == [d.doc_id for d in docs]
    assert ws.mention_index()["bergen"] == {harbour[0].chunk_id: 1}
    assert [(n.scope, n.level, n.leaf_chunk_ids) for n in records.tree_nodes()] == [
        ("corpus", 1, records.all_chunk_ids())]
    assert records.chunk_sentences([harbour[0].chunk_id])[harbour[0].chunk_id][0][0].startswith("Mara Lindqvist")
    [question] = annotations(ws)
    assert (question.question, question.answer, [m.chunk_id for m in question.relevant]) == (
        "Who founded Brightwater Robotics?", "Mara", [harbour[0].chunk_id])
    assert ws.open_llm_cache().get("v2:written-by-main") == CachedReply("a cached reply", 11, 3)
    assert ws.llm_usage()["answer"]["calls"] == 1
    entities_before = set(graph.keys())

    reconcile(ws)  # the fixtures hold no vectors: they are derived data, embedded again from the records
    with ws.writer():
        register_documents(ws, [SourceDocument(*NEW_DOCUMENT)], [])
        report = process_pending(ws)
    assert report.processed == 1 and not report.failed
    docs = ws.records.documents()
    assert [(d.name, d.status, d.seq) for d in docs][-1] == ("crane.txt", "processed", 3)
    graph = ws.views.graph
    assert entities_before < set(graph.keys())
    assert len(graph.entity("tomas berg").source_chunk_ids) == 3  # the new document joins the old entity
    assert ws.status()["documents"] == 3 and reconcile(ws) == {}
    assert [n.leaf_chunk_ids for n in ws.records.tree_nodes(scope="corpus")] == [ws.records.all_chunk_ids()]


def test_a_sqlite_workspace_written_by_main_opens_and_grows(tmp_path):
    from core.storage.sqlite_backend import DB_FILE

    folder = tmp_path / "ws"
    folder.mkdir()
    shutil.copyfile(FIXTURES / "sqlite.sqlite3", folder / DB_FILE)
    ws = open_ws(folder, "sqlite")
    try:
        read_and_extend(ws)
    finally:
        ws.close()


def test_a_postgresql_workspace_written_by_main_opens_and_grows(tmp_path, pg_store):
    import psycopg

    with psycopg.connect(pg_store, autocommit=True) as conn:
        conn.execute((FIXTURES / "postgres.sql").read_text(encoding="utf-8"))  # tables, rows, version, as dumped
        # (the dump empties this session's search_path: names are qualified from here on)
        assert conn.execute("SELECT version FROM public.ragscope_schema").fetchall() == [(4,)]
    ws = open_ws(tmp_path / "ws", pg_store)
    try:
        read_and_extend(ws)
        with ws.records.unit_of_work():
            ws.records.log("after_migration", {"ok": True})  # the identity column goes on after the dumped ids
        assert ws.records.log_details("after_migration") == ['{"ok": true}']
    finally:
        ws.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_fixtures_were_written_by_the_old_sql(backend):
    """The fixtures are what the old code wrote (its DDL text), not what today's code writes."""
    if backend == "sqlite":
        import sqlite3

        conn = sqlite3.connect(f"file:{FIXTURES / 'sqlite.sqlite3'}?mode=ro&immutable=1", uri=True)  # no -wal, -shm
        ddl = conn.execute("SELECT sql FROM sqlite_master WHERE name='chunks'").fetchone()[0]
        conn.close()
        assert "chunk_id TEXT PRIMARY KEY" in ddl and "-- vectors of the chunk" in ddl
    else:
        dump = (FIXTURES / "postgres.sql").read_text(encoding="utf-8")
        assert "id bigint NOT NULL" in dump and "GENERATED BY DEFAULT AS IDENTITY" in dump
        assert 'COLLATE pg_catalog."C"' in dump and "INSERT INTO public.documents" in dump
