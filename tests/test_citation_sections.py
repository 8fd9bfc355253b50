"""Sections and lines for formats without pages (issue 34): Markdown, HTML and DOCX record where each
heading starts in the extracted text, text files where each line starts; both are stored through the
record store's ``positions`` port (rows of ``doc_positions``, no schema change), and citations then
read ``[doc, § Heading]`` or ``[doc, l. N]`` in chunks, answers, graph hits and ``query --json``."""
from __future__ import annotations

import io
import json
import re

import pytest

SECTIONS = ("Harbour history", "Shipping lines", "Weather records")


def markdown_doc() -> bytes:
    """Three sections of known sentences (each naming its section's number), a fenced block with a
    false heading, and a preamble before the first heading."""
    parts = ["Preamble line names no section at all.\n"]
    for n, title in enumerate(SECTIONS, 1):
        parts.append(f"\n## {title}\n\n")
        parts += [f"Fact {k} of section {n} says that port{n}x{k} handled cargo in the harbour.\n"
                  for k in range(1, 13)]
        if n == 2:
            parts.append("\n```\n# not a heading inside code\n```\n")
    return "".join(parts).encode()


def text_doc() -> bytes:
    return "".join(f"Line {n} records that lamp{n} was lit at the quay.\n" for n in range(1, 61)).encode()


def docx_doc() -> bytes:
    import docx

    word = docx.Document()
    word.add_paragraph("Opening words before any heading.")
    for n, title in enumerate(SECTIONS, 1):
        word.add_heading(title, level=1 + (n == 3))
        for k in range(1, 4):
            word.add_paragraph(f"Fact {k} of section {n} says that dock{n}x{k} was repaired.")
    out = io.BytesIO()
    word.save(out)
    return out.getvalue()


def html_doc() -> bytes:
    body = "".join(f"<h2>{title}</h2>" + "".join(f"<p>Fact {k} of section {n} says that pier{n}x{k} was busy.</p>"
                                                  for k in range(1, 4)) for n, title in enumerate(SECTIONS, 1))
    return f"<html><head><title>Piers</title></head><body><p>Intro</p>{body}</body></html>".encode()


def _headings(doc) -> list[str]:
    return [doc.text[s:].split("\n", 1)[0].lstrip("# ") for s in doc.section_starts]


def test_loaders_record_where_each_heading_and_line_starts() -> None:
    from core.loaders import load_bytes

    (md,), _ = load_bytes("harbour.md", markdown_doc())
    assert _headings(md) == list(SECTIONS) and md.by_line  # the fenced "# not a heading" is not one
    (txt,), _ = load_bytes("lamps.txt", text_doc())
    assert txt.by_line and not txt.section_starts
    (word,), _ = load_bytes("docks.docx", docx_doc())
    assert _headings(word) == list(SECTIONS) and not word.by_line
    (page,), _ = load_bytes("piers.html", html_doc())
    assert _headings(page) == list(SECTIONS)


def test_where_of_prefers_pages_then_sections_then_lines() -> None:
    from core.citations import DocPositions, citation_body, heading_title, line_starts, where_of

    text = "a\nbb\nccc\n"
    assert line_starts(text) == [0, 2, 5]
    lines = DocPositions(lines=line_starts(text))
    assert where_of(lines, 2, 5).line_start == 2 and where_of(lines, 2, 5).line_end == 3
    both = DocPositions(sections=[(2, "Bee")], lines=line_starts(text))
    assert where_of(both, 0, 1).line_start == 1 and where_of(both, 3, 1).section == "Bee"
    assert where_of(DocPositions(pages=[0, 4], sections=[(0, "X")]), 5, 1).page_start == 2
    assert citation_body("d.md", None, None, 3, "Bee") == "d.md, \u00a7 Bee"
    assert citation_body("d.txt", None, None, 3, None, 4, 9) == "d.txt, ll. 4\u20139"
    assert citation_body("d.txt", None, None, 3) == "d.txt, chunk 4"
    assert heading_title("## A [big] title ##\nmore") == "A big title" and len(heading_title("x" * 500)) == 60


@pytest.fixture(scope="module")
def mixed_ws(tmp_path_factory):
    from conftest import HashEmbedder

    from core.indexing.pipeline import process_pending, register_documents
    from core.loaders import load_bytes
    from core.workspace import Workspace

    ws = Workspace(tmp_path_factory.mktemp("sections") / "ws", embedder=HashEmbedder())
    ws.save_settings(ws.settings.model_copy(update={"chunk_tokens": 120, "chunk_overlap": 15}))
    docs = []
    for name, data in (("harbour.md", markdown_doc()), ("lamps.txt", text_doc()), ("docks.docx", docx_doc()),
                       ("piers.html", html_doc())):
        loaded, failures = load_bytes(name, data)
        assert not failures
        docs += loaded
    with ws.writer():
        register_documents(ws, docs, [])
        assert process_pending(ws).processed == 4
    yield ws
    ws.close()


def _true_section(text: str, offset: int) -> str | None:
    m = re.search(r"section (\d)", text[offset:offset + 200])
    return SECTIONS[int(m.group(1)) - 1] if m else None


def test_every_chunk_cites_its_section_or_lines(mixed_ws) -> None:
    from core.retrieval.results import fill_chunk_texts
    from core.types import ChunkHit

    seen = {"section": 0, "line": 0, "chunk": 0}
    for doc in mixed_ws.records.documents():
        text = mixed_ws.records.document_text(doc.doc_id)
        chunks = mixed_ws.records.chunks_of(doc.doc_id)
        hits = fill_chunk_texts(mixed_ws, [ChunkHit.make(c.chunk_id, 1.0, "test") for c in chunks])
        for chunk, hit in zip(chunks, hits):
            assert hit.page_start is None
            if doc.name == "lamps.txt":
                first = text.count("\n", 0, chunk.start_char) + 1
                last = text.count("\n", 0, chunk.start_char + len(chunk.text.rstrip()) - 1) + 1
                assert (hit.line_start, hit.line_end) == (first, last) and hit.section is None
                seen["line"] += 1
            elif hit.section is not None:
                heading_at = text.rfind(hit.section, 0, chunk.start_char + len(hit.section))
                assert heading_at >= 0 and _true_section(text, chunk.start_char) in (hit.section, None)
                seen["section"] += 1
            elif doc.name == "harbour.md":  # the preamble: before the first heading, cited by line
                assert hit.line_start == 1
                seen["line"] += 1
            else:  # DOCX/HTML text before the first heading: the chunk number
                assert hit.line_start is None and "section" not in hit.to_dict()
                seen["chunk"] += 1
    assert seen["section"] >= 6 and seen["line"] >= 3


def test_query_json_chunks_carry_sections_and_lines(mixed_ws) -> None:
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.cli.query import result_json

    results = run_modes(LOCAL_ADMIN, mixed_ws, "Which port handled cargo, and when was lamp40 lit?",
                        ["naive", "hybrid"], concurrent=False)
    keys = set()
    for result in results.values():
        for chunk in json.loads(json.dumps(result_json(result))).get("chunks", []):
            keys |= {k for k in ("section", "line_start", "line_end", "page_start") if k in chunk}
            if "section" in chunk:
                assert chunk["section"] in SECTIONS
    assert {"section", "line_start", "line_end"} <= keys and "page_start" not in keys


def test_every_answer_citation_names_the_section_or_lines_of_its_sentence(mixed_ws) -> None:
    """Every offline answer of every mode: a ``§`` citation names the section the quoted sentence is
    in (read from the sentence's own words), an ``l.`` citation the line that holds it."""
    from core.api import mode_names, run_modes
    from core.auth import LOCAL_ADMIN
    from core.citations import cited_places

    lamps = mixed_ws.records.document_text(next(d.doc_id for d in mixed_ws.records.documents() if d.name == "lamps.txt"))
    checked = {"section": 0, "line": 0}
    for question in ("What does fact 3 of section 2 say about port2x3?", "When was lamp40 lit at the quay?"):
        results = run_modes(LOCAL_ADMIN, mixed_ws, question, mode_names(LOCAL_ADMIN), concurrent=False)
        for mode, result in results.items():
            text = result.answer.text if result.answer else ""
            pos = 0
            for written, kind, first, last in cited_places(text):
                at = text.index(written, pos)
                segment = text[max(pos, text.rfind("\n", 0, at) + 1):at].replace("**", "")
                pos = at + len(written)
                numbers = re.findall(r"of section (\d)", segment)
                lamp = re.findall(r"lamp(\d+) was lit", segment)
                if kind == "section" and numbers:
                    assert f"\u00a7 {SECTIONS[int(numbers[-1]) - 1]}]" in written, (mode, segment, written)
                    checked["section"] += 1
                elif kind == "line" and lamp:
                    line_of = lamps.count("\n", 0, lamps.index(f"lamp{lamp[-1]} was lit")) + 1
                    assert first <= line_of <= last, (mode, segment, written)
                    checked["line"] += 1
    assert checked["section"] >= 4 and checked["line"] >= 4, checked


def test_graph_hits_cite_sections_and_lines(mixed_ws) -> None:
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN

    result = run_modes(LOCAL_ADMIN, mixed_ws, "Which port handled cargo in the harbour?", ["local"],
                       concurrent=False)["local"]
    cited = [c for hit in result.entities for c in hit.cited or []]
    assert any("\u00a7 " in c or "l. " in c for c in cited), cited


def test_citation_check_knows_sections_and_lines() -> None:
    from core.citations import Source, cited_places, unsupported_citations

    sources = [Source("guide.md", None, None, 0, "Setup"), Source("notes.txt", None, None, 1, None, 10, 20)]
    text = "[guide.md, \u00a7 Setup] [guide.md, \u00a7 Usage] [notes.txt, l. 12] [notes.txt, ll. 18\u201325]"
    assert [k for _, k, _, _ in cited_places(text)] == ["section", "section", "line", "line"]
    assert unsupported_citations(text, sources) == ["[guide.md, \u00a7 Usage]", "[notes.txt, ll. 18\u201325]"]


def test_an_old_workspace_gets_lines_and_sections_on_re_adding_the_files(tmp_path) -> None:
    """Positions wiped (a workspace indexed before they were kept): the gaps message names the text
    and Markdown files; adding the same files again records them without re-embedding anything."""
    from conftest import HashEmbedder

    from core.api import position_gaps
    from core.auth import LOCAL_ADMIN
    from core.indexing.pipeline import nothing_to_index, process_pending, register_documents
    from core.loaders import load_bytes
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    docs = load_bytes("harbour.md", markdown_doc())[0] + load_bytes("lamps.txt", text_doc())[0]
    with ws.writer():
        register_documents(ws, docs, [])
        process_pending(ws)
    vectors = ws.vectors.count("chunks")
    ids = [d.doc_id for d in ws.records.documents()]
    full = ws.records.positions(ids)
    with ws.writer(), ws.records.unit_of_work():
        for doc_id in ids:
            for kind in ("section", "line"):
                ws.records.set_positions(doc_id, kind, [])
    assert ws.records.positions(ids) == {}  # sections and lines need no schema version of their own
    gaps = position_gaps(LOCAL_ADMIN, ws)
    assert "harbour.md" in gaps and "lamps.txt" in gaps
    assert not nothing_to_index(ws, docs)  # a no-op re-index still records the positions
    with ws.writer():
        report = register_documents(ws, docs, [])
    assert report.new_documents == 0 and ws.records.positions(ids) == full
    assert position_gaps(LOCAL_ADMIN, ws) == "" and nothing_to_index(ws, docs)
    assert ws.vectors.count("chunks") == vectors > 0
    ws.close()


def test_every_citation_link_opens_the_viewer_at_its_sentence(mixed_ws) -> None:
    """The links under an answer (``ui.citation_links``): each opens, through ``api.source_view``, the
    chunk that holds the quoted sentence, with that sentence marked in the viewer's text."""
    import html

    from core.api import mode_names, run_modes, source_view
    from core.auth import LOCAL_ADMIN
    from core.citations import quote_candidates
    from ui.citation_links import citation_targets

    opened = 0
    results = run_modes(LOCAL_ADMIN, mixed_ws, "What does fact 3 of section 2 say about port2x3?",
                        mode_names(LOCAL_ADMIN), concurrent=False)
    for mode, result in results.items():
        for written, params in citation_targets(result):
            view = source_view(LOCAL_ADMIN, mixed_ws, params.get("chunk", ""), params["quote"], doc=params.get("doc", ""))
            assert view is not None, (mode, written, params)
            marked = " ".join(html.unescape(view.html.split("<mark>", 1)[1].split("</mark>", 1)[0]).split())
            wanted = [params["quote"]] if "chunk" in params else quote_candidates(params["quote"])
            assert any(marked.startswith(" ".join(q.split())[:60]) for q in wanted), (mode, written, marked[:80])
            assert written == f"[{view.cited}]", (mode, written, view.cited)
            opened += 1
    assert opened >= 8


def test_lines_are_computed_from_the_stored_text_not_stored_one_row_each(tmp_path) -> None:
    """A text file cited by line stores one ``line`` row, whatever its length; its line starts are
    computed from the stored text on read. Rows of the older layout (one per line, here at wrong
    offsets) are ignored by the read, and the schema 10 upgrade deletes them."""
    import sqlite3

    from conftest import HashEmbedder

    from core.citations import line_starts
    from core.indexing.pipeline import register_documents
    from core.loaders import load_bytes
    from core.storage.position_rows import LINE_STARTS
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    lamps = load_bytes("lamps.txt", text_doc())[0]
    with ws.writer():
        register_documents(ws, lamps, [])
    doc_id = ws.records.documents()[0].doc_id
    truth = line_starts(lamps[0].text)
    assert len(truth) == 60 and list(ws.records.positions([doc_id])[doc_id].lines) == truth
    with ws.writer(), ws.records.unit_of_work():
        ws.records.set_positions(doc_id, "line", truth)  # a caller handing every start: one row kept
    ws.close()
    db = sqlite3.connect(tmp_path / "ws" / "ragscope.sqlite3")
    assert db.execute("SELECT count(*), max(ord) FROM doc_positions WHERE kind = 'line'").fetchone() == (1, 1)
    with db:  # the layout before version 10: a row per line (wrong offsets, so reading them would show)
        db.executemany("INSERT INTO doc_positions VALUES (?, 'line', ?, ?)", [(doc_id, n, n * 3) for n in range(2, 61)])
    LINE_STARTS.clear()  # nothing remembered: the text is read again
    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    assert list(ws.records.positions([doc_id])[doc_id].lines) == truth  # old rows ignored (schema current)
    ws.close()
    with db:
        db.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    try:
        assert db.execute("SELECT count(*) FROM doc_positions WHERE kind = 'line'").fetchone() == (1,)
        assert list(ws.records.positions([doc_id])[doc_id].lines) == truth
    finally:
        ws.close()
        db.close()


def test_html_and_docx_without_headings_are_not_taken_for_files_indexed_before_positions(tmp_path) -> None:
    """An HTML or DOCX file without a heading has no section to store: it gets one ``kept`` row, so the
    gaps message does not ask to re-add it, and a no-op re-index stays a no-op. Without that row (a
    file indexed before positions were kept) it is named, and adding it again records the row."""
    import docx
    from conftest import HashEmbedder

    from core.api import position_gaps
    from core.auth import LOCAL_ADMIN
    from core.indexing.pipeline import nothing_to_index, process_pending, register_documents
    from core.loaders import load_bytes
    from core.workspace import Workspace

    word = docx.Document()
    word.add_paragraph("A memo without any heading says that the ferry leaves at noon.")
    out = io.BytesIO()
    word.save(out)
    page = b"<html><body><p>A page without any heading says that the tide turns at six.</p></body></html>"
    docs = load_bytes("memo.docx", out.getvalue())[0] + load_bytes("tide.html", page)[0]
    assert all(not d.section_starts and not d.page_starts and not d.by_line for d in docs)
    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    try:
        with ws.writer():
            register_documents(ws, docs, [])
            process_pending(ws)
        ids = [d.doc_id for d in ws.records.documents()]
        stored = ws.records.positions(ids)
        assert len(stored) == 2 and all(p.kept and not p.sections for p in stored.values())
        assert position_gaps(LOCAL_ADMIN, ws) == "" and nothing_to_index(ws, docs)
        with ws.writer(), ws.records.unit_of_work():
            for doc_id in ids:
                ws.records.set_positions(doc_id, "kept", [])  # as indexed before positions were kept
        gaps = position_gaps(LOCAL_ADMIN, ws)
        assert "memo.docx" in gaps and "tide.html" in gaps and not nothing_to_index(ws, docs)
        with ws.writer():
            assert register_documents(ws, docs, []).new_documents == 0
        assert position_gaps(LOCAL_ADMIN, ws) == "" and nothing_to_index(ws, docs)
    finally:
        ws.close()
