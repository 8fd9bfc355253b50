"""The source viewer's URL parameters as an attacker writes them (issue 38): ``?chunk=``, ``?doc=`` and
``?quote=`` come from the address bar (or a crafted websocket rerun's query string), so each is hostile:

* a 2 MB quote is cut to ``MAX_QUOTE_CHARS`` before it is looked for (uncut, it took ~2.3 s of the
  server's CPU per request on a 468-character chunk) — in the library and on the page, whose box also
  accepts no more;
* a path or another workspace's chunk id opens nothing (the lookups are by name and id inside the
  session's workspace); an SQL-looking id is only an id;
* markup in the quote and in the document text stays text.
"""
from __future__ import annotations


import pytest

from conftest import ROOT, HashEmbedder, pages_data_dir

READER_TEXT = (b"# Notes\n\nThe <script>alert(1)</script> tag & friends stay text here. "
               b"Greta Holm wrote these notes in Malmo last winter.\n")


@pytest.fixture(scope="module")
def notes(tmp_path_factory):
    from core.indexing.pipeline import process_pending, register_documents
    from core.loaders import load_bytes
    from core.workspace import Workspace

    ws = Workspace(tmp_path_factory.mktemp("params") / "ws", embedder=HashEmbedder())
    docs, _ = load_bytes("notes.md", READER_TEXT)
    with ws.writer():
        register_documents(ws, docs, [])
        assert process_pending(ws).processed == 1
    yield ws
    ws.close()


def _reader():
    from core.auth import Principal, Role

    return Principal("reader", "reader@example.org", Role.viewer)


def _chunk(ws):
    (doc,) = ws.records.documents()
    return ws.records.chunks_of(doc.doc_id)[0]


def test_a_huge_quote_is_cut_before_it_is_looked_for(notes, monkeypatch) -> None:
    import core.source_view as viewer
    from core.api import source_view

    seen: list[int] = []
    inner = viewer.source_view
    monkeypatch.setattr(viewer, "source_view", lambda ws, chunk_id, quote="": seen.append(len(quote)) or inner(
        ws, chunk_id, quote))
    found: list[int] = []
    by_doc = viewer.chunk_of_quote
    monkeypatch.setattr(viewer, "chunk_of_quote", lambda ws, doc, quote: found.append(len(quote)) or by_doc(
        ws, doc, quote))
    huge = "a" * 2_000_000
    view = source_view(_reader(), notes, _chunk(notes).chunk_id, huge)
    assert view is not None and seen == [viewer.MAX_QUOTE_CHARS]
    source_view(_reader(), notes, "", "Greta Holm " * 200_000, doc="notes.md")
    assert found == [viewer.MAX_QUOTE_CHARS]


@pytest.mark.parametrize("chunk_id, doc", [("", "../../etc/passwd"), ("", "/etc/passwd"), ("chunk-" + "0" * 20, ""),
                                           ("' OR 1=1 --", ""), ("", "notes.md' OR '1'='1")])
def test_paths_foreign_ids_and_sql_open_nothing(notes, chunk_id, doc) -> None:
    from core.api import source_view

    assert source_view(_reader(), notes, chunk_id, "root", doc=doc) is None


def test_another_workspaces_chunk_is_not_found_here(notes, tmp_path) -> None:
    from core.api import source_view
    from core.indexing.pipeline import process_pending, register_documents
    from core.types import SourceDocument
    from core.workspace import Workspace

    other = Workspace(tmp_path / "other", embedder=HashEmbedder())
    try:
        with other.writer():
            register_documents(other, [SourceDocument(name="secret.txt", text="The vault code is 4417.")], [])
            process_pending(other)
        secret = other.records.chunks_of(other.records.documents()[0].doc_id)[0]
        assert source_view(_reader(), notes, secret.chunk_id) is None
        assert source_view(_reader(), notes, "", "vault code", doc="secret.txt") is None
    finally:
        other.close()


def test_markup_in_the_quote_and_the_text_stays_text(notes) -> None:
    from core.api import source_view

    view = source_view(_reader(), notes, _chunk(notes).chunk_id, "<script>alert(1)</script> tag")
    assert "<script>" not in view.html and "&lt;script&gt;" in view.html
    assert "<img" not in source_view(_reader(), notes, _chunk(notes).chunk_id, '"><img src=x onerror=alert(1)>').html


def test_the_page_takes_a_huge_quote_from_the_url_without_an_error(sample_workspace_dir, tmp_path,
                                                                   monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    from core.source_view import MAX_QUOTE_CHARS

    pages_data_dir(sample_workspace_dir, tmp_path, monkeypatch)
    at = AppTest.from_file(str(ROOT / "pages" / "source.py"), default_timeout=300)
    at.session_state["workspace_name"] = "sample"
    at.query_params["doc"] = "05-kestrel-point-lighthouse.md"
    at.query_params["quote"] = "The first principal keeper was Josiah Harland. " * 5000
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    said = [f"{type(el).__name__}: {getattr(el, 'value', '')}"[:150] for el in at.main]
    assert len(at.text_input) == 1, said
    assert len(at.text_input[0].value) == MAX_QUOTE_CHARS
    assert not at.error, [e.value for e in at.error]
