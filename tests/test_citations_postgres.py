"""Citation positions and kept originals on PostgreSQL (issue 34): the same path as on SQLite, on a
real server started by ``scripts/start-postgres.sh`` (``tests/postgres_fixture.py``). A PDF keeps its
pages and its uploaded file (``doc_files.data``, BYTEA) and opens in the source viewer with the cited
sentence boxed; Markdown keeps its sections (headings read back with ``substr`` on the stored text)
and lines (one row; the line starts computed from the stored text, the older one-row-per-line layout
deleted by the upgrade); chunk spans wiped and the schema set back are recovered on open; deleting a document
deletes its positions and its file."""
from __future__ import annotations

import psycopg
import pytest

from conftest import HashEmbedder
from postgres_fixture import pg_store, postgres_server  # noqa: F401 - fixtures
from test_citation_sections import SECTIONS, markdown_doc, text_doc
from test_citations import make_pdf, story_pages

pytestmark = pytest.mark.slow


def _open(path, spec):
    from core.workspace import Workspace

    return Workspace(path, embedder=HashEmbedder(), store=spec)


def _loaded():
    from core.loaders import load_bytes

    docs = []
    for name, data in (("story.pdf", make_pdf(story_pages())), ("harbour.md", markdown_doc()),
                       ("lamps.txt", text_doc())):
        loaded, failures = load_bytes(name, data)
        assert not failures
        docs += loaded
    return docs


def test_positions_originals_and_span_recovery_on_postgres(tmp_path, pg_store) -> None:
    from core.api import position_gaps, source_view
    from core.auth import LOCAL_ADMIN
    from core.citations import line_starts
    from core.indexing.deletion import delete_documents
    from core.indexing.pipeline import process_pending, register_documents
    from core.retrieval.results import fill_chunk_texts
    from core.storage.schema import SCHEMA_VERSION
    from core.types import ChunkHit

    pytest.importorskip("pypdfium2")
    ws = _open(tmp_path / "ws", pg_store)
    assert ws.backend.name == "postgresql"
    ws.save_settings(ws.settings.model_copy(update={"chunk_tokens": 120, "chunk_overlap": 15}))
    sources = {d.name: d for d in _loaded()}
    with ws.writer():
        register_documents(ws, list(sources.values()), [])
        assert process_pending(ws).processed == 3
    docs = {d.name: d for d in ws.records.documents()}
    ids = [d.doc_id for d in docs.values()]
    stored = ws.records.positions(ids)
    pdf, md, txt = (stored[docs[n].doc_id] for n in ("story.pdf", "harbour.md", "lamps.txt"))
    assert list(pdf.pages) == list(sources["story.pdf"].page_starts) and len(pdf.pages) == 4
    assert [title for _, title in md.sections] == list(SECTIONS)
    assert list(md.lines) == line_starts(sources["harbour.md"].text)
    assert list(txt.lines) == line_starts(sources["lamps.txt"].text) and not txt.sections
    assert ws.records.original(docs["story.pdf"].doc_id) == sources["story.pdf"].original
    truth = {c.chunk_id: c.start_char for d in ids for c in ws.records.chunks_of(d)}
    assert all(at >= 0 for at in truth.values())

    hits = fill_chunk_texts(ws, [ChunkHit.make(c, 1.0, "t") for c in truth])
    assert {h.doc_name for h in hits if h.page_start} == {"story.pdf"}
    assert {h.section for h in hits if h.section} <= set(SECTIONS) and any(h.section for h in hits)
    assert all(h.line_start for h in hits if h.doc_name == "lamps.txt")

    sentence = "Sentence 3 of page 3 says that Greta Holm was born in Malmo."
    chunk = next(c for c in ws.records.chunks_of(docs["story.pdf"].doc_id) if sentence in c.text)
    view = source_view(LOCAL_ADMIN, ws, chunk.chunk_id, sentence)
    assert view.page == 3 and view.cited == "story.pdf, p. 3" and view.boxes and view.image_png
    ws.close()

    with psycopg.connect(pg_store) as conn:  # a workspace indexed before spans were stored
        conn.execute("UPDATE chunks SET start_char = -1")
        conn.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
        conn.execute("UPDATE ragscope_schema SET version = 7")  # where PostgreSQL keeps its version
        conn.execute("INSERT INTO doc_positions (doc_id, kind, ord, start_char) SELECT doc_id, 'line', g, g * 7 "
                      "FROM doc_positions, generate_series(2, 40) AS g WHERE kind = 'line'")  # rows of one per line
    ws = _open(tmp_path / "ws", pg_store)
    try:
        assert {c.chunk_id: c.start_char for d in ids for c in ws.records.chunks_of(d)} == truth
        with psycopg.connect(pg_store) as conn:  # the upgrade to 10 keeps one line row per document
            assert conn.execute("SELECT count(*), max(ord) FROM doc_positions WHERE kind = 'line'").fetchone() == (2, 1)
        assert list(ws.records.positions(ids)[docs["lamps.txt"].doc_id].lines) == line_starts(sources["lamps.txt"].text)
        assert position_gaps(LOCAL_ADMIN, ws) == ""
        with psycopg.connect(pg_store) as conn:
            assert conn.execute("SELECT max(version) FROM ragscope_schema").fetchone()[0] == SCHEMA_VERSION
        with ws.writer():
            delete_documents(ws, [docs["story.pdf"].doc_id, docs["harbour.md"].doc_id])
        assert ws.records.positions(ids).keys() == {docs["lamps.txt"].doc_id}
        assert ws.records.original(docs["story.pdf"].doc_id) is None
        with psycopg.connect(pg_store) as conn:
            assert conn.execute("SELECT count(*) FROM doc_files").fetchone()[0] == 0
    finally:
        ws.close()
