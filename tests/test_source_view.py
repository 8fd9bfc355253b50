"""The source viewer (issue 34): a cited chunk of a PDF opens at its real page, rendered by PDFium, with
boxes over the cited sentence's characters; other formats show their text with the span marked and
escaped; the kept original file is size-capped and deleted with its document."""
from __future__ import annotations

import pytest

from test_citations import make_pdf, story_pages

pytest.importorskip("pypdfium2")


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    from conftest import HashEmbedder

    from core.indexing.pipeline import process_pending, register_documents
    from core.loaders import load_bytes
    from core.workspace import Workspace

    ws = Workspace(tmp_path_factory.mktemp("viewer") / "ws", embedder=HashEmbedder())
    ws.save_settings(ws.settings.model_copy(update={"chunk_tokens": 200, "chunk_overlap": 20}))
    pdf, _ = load_bytes("story.pdf", make_pdf(story_pages()))
    md, _ = load_bytes("notes.md", b"# Notes\n\nThe <script>alert(1)</script> tag & friends stay text here. "
                                   b"Greta Holm wrote these notes in Malmo last winter.\n")
    with ws.writer():
        register_documents(ws, pdf + md, [])
        assert process_pending(ws).processed == 2
    yield ws
    ws.close()


def _doc(ws, name):
    return next(d for d in ws.records.documents() if d.name == name)


def _pdfium_boxes(data: bytes, page_no: int, sentence: str):
    """PDFium's own character boxes of ``sentence`` on the page, in the viewer's pixel frame."""
    import pypdfium2 as pdfium

    from core.source_view import SCALE

    pdf = pdfium.PdfDocument(data)
    page = pdf[page_no - 1]
    height = page.get_size()[1]
    textpage = page.get_textpage()
    at = textpage.get_text_range().find(sentence)
    assert at >= 0
    boxes = []
    for i in range(at, at + len(sentence)):
        left, bottom, right, top = textpage.get_charbox(i)
        if right > left:
            boxes.append((left * SCALE, (height - top) * SCALE, right * SCALE, (height - bottom) * SCALE))
    pdf.close()
    return boxes


def test_a_pdf_citation_opens_at_its_page_with_the_sentence_boxed(story) -> None:
    from core.api import source_view
    from core.auth import Principal, Role

    doc = _doc(story, "story.pdf")
    sentence = story_pages()[2][0]  # the first sentence of page 3
    chunk = next(c for c in story.records.chunks_of(doc.doc_id) if sentence in " ".join(c.text.split()))
    viewer = Principal("reader", "reader@example.org", Role.viewer)
    view = source_view(viewer, story, chunk.chunk_id, sentence)
    assert view.page == 3 and view.cited == "story.pdf, p. 3"
    assert view.image_png.startswith(b"\x89PNG") and view.boxes and not view.note
    expected = _pdfium_boxes(story.records.original(doc.doc_id), 3, sentence)
    assert len(expected) > 20
    for left, top, right, bottom in expected:  # every character of the sentence lies inside a highlight box
        cx, cy = (left + right) / 2, (top + bottom) / 2
        assert any(a <= cx <= c and b <= cy <= d for a, b, c, d in view.boxes), (cx, cy)
    other = _pdfium_boxes(story.records.original(doc.doc_id), 3, story_pages()[2][5])  # a sentence not cited
    assert not any(a <= (l + r) / 2 <= c and b <= (t + btm) / 2 <= d
                   for l, t, r, btm in other for a, b, c, d in view.boxes)


def test_a_text_citation_shows_the_text_with_the_span_marked_and_escaped(story) -> None:
    from core.api import source_view
    from core.auth import Principal, Role

    doc = _doc(story, "notes.md")
    (chunk,) = story.records.chunks_of(doc.doc_id)
    reader = Principal("reader", "reader@example.org", Role.viewer)
    view = source_view(reader, story, chunk.chunk_id, "Greta Holm wrote these notes")
    assert view.page is None and not view.image_png and view.cited == "notes.md, \u00a7 Notes"
    assert "<mark>Greta Holm wrote these notes</mark> in Malmo" in view.html
    assert "&lt;script&gt;" in view.html and "<script>" not in view.html


def test_the_original_is_capped_and_deleted_with_its_document(tmp_path) -> None:
    from conftest import HashEmbedder

    from core.indexing.deletion import delete_documents
    from core.indexing.pipeline import register_documents
    from core.loaders import load_bytes
    from core.storage import schema
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    try:
        docs, _ = load_bytes("known.pdf", make_pdf())
        with ws.writer():
            register_documents(ws, docs, [])
        (doc,) = ws.records.documents()
        assert ws.records.original(doc.doc_id) == docs[0].original
        with ws.writer(), ws.records.unit_of_work():
            assert not ws.records.set_original(doc.doc_id, "big.pdf", b"x" * (schema.ORIGINAL_MAX_BYTES + 1))
        assert ws.records.original(doc.doc_id) is None
        with ws.writer():
            with ws.records.unit_of_work():
                assert ws.records.set_original(doc.doc_id, "known.pdf", docs[0].original)
            assert ws.records.original(doc.doc_id) is not None
            delete_documents(ws, [doc.doc_id])
        assert ws.records.original(doc.doc_id) is None
    finally:
        ws.close()


def test_a_viewer_of_another_workspace_cannot_open_its_sources(story) -> None:
    from core.api import source_view
    from core.auth import Principal, Role
    from core.errors import PermissionDeniedError

    chunk = story.records.chunks_of(_doc(story, "story.pdf").doc_id)[0]
    outsider = Principal("other", "other@example.org", Role.admin, workspaces=frozenset({"elsewhere"}))
    with pytest.raises(PermissionDeniedError):
        source_view(outsider, story, chunk.chunk_id)
