"""Positions from parsing to storage (issue 34): a PDF made here, with known sentences on known pages,
is loaded and indexed; every chunk's stored span is its place in the document text, its page range
is the pages its sentences are on, and ``query --json`` chunks carry ``page_start``/``page_end``."""
from __future__ import annotations

import json

import pytest

from conftest import text_pdf
from core.citations import format_citation, page_of, page_range, pages_label

N_PAGES = 6
LINES_PER_PAGE = 30


def sentence(page: int, line: int) -> str:
    return f"Sentence {line} of page {page} tells of marker{page}x{line} in the harbour."


def make_pdf(pages: list[list[str]] | None = None) -> bytes:
    """A PDF of ``N_PAGES`` pages, each with ``LINES_PER_PAGE`` known sentences (Helvetica text layer),
    or of the given pages' lines."""
    if pages is None:
        pages = [[sentence(p, n) for n in range(1, LINES_PER_PAGE + 1)] for p in range(1, N_PAGES + 1)]
    return text_pdf(pages, font_size=9, leading=12)


def true_page(text: str, offset: int) -> int:
    """The page of the sentence around ``offset``, read from the sentence's own words."""
    start = text.rfind("Sentence ", 0, offset + len("Sentence "))
    start = start if start >= 0 else text.find("Sentence ")
    words = text[start:].split()
    return int(words[4])


def test_page_range_arithmetic() -> None:
    starts = [0, 10, 25]
    assert page_of(starts, 0) == 1 and page_of(starts, 9) == 1 and page_of(starts, 10) == 2
    assert page_of(starts, 99) == 3 and page_of(starts, -1) is None and page_of([], 5) is None
    assert page_range(starts, 5, 10) == (1, 2)  # characters 5..14
    assert page_range(starts, 5, 5) == (1, 1)  # characters 5..9
    assert page_range([], 5, 5) == (None, None)
    assert pages_label(3, 3) == "p. 3" and pages_label(3, 4) == "pp. 3\u20134" and pages_label(None, None) == ""
    assert format_citation("report.pdf", 12, 12, 4) == "[report.pdf, p. 12]"
    assert format_citation("notes.txt", None, None, 4) == "[notes.txt, chunk 5]"


def test_loader_records_where_each_page_starts() -> None:
    from core.loaders import load_bytes

    docs, failures = load_bytes("known.pdf", make_pdf())
    assert not failures
    doc = docs[0]
    assert len(doc.page_starts) == N_PAGES and doc.page_starts[0] == 0
    for page_no, start in enumerate(doc.page_starts, start=1):
        assert doc.text[start:].startswith(sentence(page_no, 1)), page_no


@pytest.fixture()
def pdf_ws(tmp_path):
    from conftest import HashEmbedder

    from core.indexing.pipeline import process_pending, register_documents
    from core.loaders import load_bytes
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    settings = ws.settings.model_copy(update={"chunk_tokens": 200, "chunk_overlap": 20})
    ws.save_settings(settings)
    docs, failures = load_bytes("known.pdf", make_pdf())
    with ws.writer():
        register_documents(ws, docs, failures)
        report = process_pending(ws)
    assert report.processed == 1 and not report.failed
    yield ws
    ws.close()


def test_every_chunk_span_and_page_range_is_the_truth(pdf_ws) -> None:
    from core.retrieval.results import fill_chunk_texts
    from core.types import ChunkHit

    (doc,) = pdf_ws.records.documents()
    text = pdf_ws.records.document_text(doc.doc_id)
    starts = pdf_ws.records.page_starts([doc.doc_id])[doc.doc_id]
    assert len(starts) == N_PAGES
    chunks = pdf_ws.records.chunks_of(doc.doc_id)
    assert len(chunks) > N_PAGES  # several chunks a page, so some cross a page break
    crossing = 0
    hits = fill_chunk_texts(pdf_ws, [ChunkHit.make(c.chunk_id, 1.0, "test") for c in chunks])
    for chunk, hit in zip(chunks, hits):
        assert chunk.start_char >= 0 and text[chunk.start_char: chunk.start_char + len(chunk.text)] == chunk.text
        first = true_page(text, chunk.start_char)
        last = true_page(text, chunk.start_char + len(chunk.text.rstrip()) - 1)
        assert (hit.page_start, hit.page_end) == (first, last), chunk.order
        crossing += first != last
    assert crossing >= 1


def test_deleting_a_document_drops_its_positions(pdf_ws) -> None:
    from core.indexing.deletion import delete_documents

    (doc,) = pdf_ws.records.documents()
    with pdf_ws.writer():
        delete_documents(pdf_ws, [doc.doc_id])
    assert pdf_ws.records.page_starts([doc.doc_id]) == {}


def test_text_documents_have_no_pages(sample_ws) -> None:
    from core.retrieval.results import fill_chunk_texts
    from core.types import ChunkHit

    doc = sample_ws.records.documents()[0]
    chunk = sample_ws.records.chunks_of(doc.doc_id)[0]
    (hit,) = fill_chunk_texts(sample_ws, [ChunkHit.make(chunk.chunk_id, 1.0, "test")])
    assert hit.page_start is None and "page_start" not in hit.to_dict()


def test_query_json_chunks_carry_pages(pdf_ws) -> None:
    """What ``python -m core query --json`` prints for each mode (``result_json``): chunks with pages."""
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.cli.query import result_json

    results = run_modes(LOCAL_ADMIN, pdf_ws, "what is marker3x7?", ["naive", "local", "tree"], concurrent=False)
    seen = 0
    for result in results.values():
        data = json.loads(json.dumps(result_json(result)))
        for chunk in data.get("chunks", []):
            assert 1 <= chunk["page_start"] <= chunk["page_end"] <= N_PAGES
            seen += 1
    assert seen



def _cited_segments(answer: str):
    """(text before a citation, first page, last page) for every page citation of an answer."""
    import re

    from core.citations import cited_places

    out, pos = [], 0
    for written, kind, first, last in cited_places(answer):
        at = answer.index(written, pos)
        line_start = answer.rfind("\n", 0, at) + 1
        segment = answer[max(pos, line_start):at]
        pos = at + len(written)
        if kind == "page":
            pages = re.findall(r"sentence \d+ of page (\d+)", segment.replace("**", ""), re.IGNORECASE)
            out.append((segment, pages, first, last))
    return out


def test_every_mode_cites_the_page_that_holds_the_quoted_sentence(pdf_ws) -> None:
    """Every page citation of every mode's offline answer names the page the quoted sentence is on
    (read from the sentence's own words), and no answer falls back to chunk numbers for a PDF."""
    from core.api import mode_names
    from core.auth import LOCAL_ADMIN

    checks = _check_answer_pages(pdf_ws, ("What does sentence 7 of page 3 tell of marker3x7?", "Where is marker5x30?"))
    assert checks >= len(mode_names(LOCAL_ADMIN))


def test_graph_modes_cite_the_page_that_holds_the_quoted_sentence(story_ws) -> None:
    """The same on a PDF with named people and companies, so the graph modes (local, global, path…)
    answer too."""
    assert _check_answer_pages(story_ws, ("Who founded the company that acquired Stellan Industries?",
                                          "Where was Greta Holm born?")) >= 8


def _check_answer_pages(ws, questions) -> int:
    from core.api import mode_names, run_modes
    from core.auth import LOCAL_ADMIN

    modes = mode_names(LOCAL_ADMIN)
    checked = 0
    for question in questions:
        results = run_modes(LOCAL_ADMIN, ws, question, modes, concurrent=False)
        for mode, result in results.items():
            text = result.answer.text if result.answer else ""
            assert ", chunk " not in text, (mode, text)
            for segment, pages, first, last in _cited_segments(text):
                if not pages:  # a path hop or label line without a quoted sentence
                    continue
                assert first <= int(pages[-1]) <= last, (mode, segment, first, last)
                checked += 1
    return checked


def test_llm_prompt_and_context_use_page_citations(pdf_ws) -> None:
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.llm.generated_answers import SYSTEM_PROMPT

    result = run_modes(LOCAL_ADMIN, pdf_ws, "Where is marker2x4?", ["naive"], concurrent=False)["naive"]
    assert "[document, p. 12]" in SYSTEM_PROMPT
    assert "(known.pdf, p. " in result.context_text and ", chunk " not in result.context_text


def test_citation_check_flags_sources_not_in_the_context() -> None:
    from core.citations import cited_places, unsupported_citations
    from core.llm.generated_answers import citation_note
    from core.types import Answer, ChunkHit, RetrievalResult

    sources = [("a.pdf", 3, 4, 2), ("n.txt", None, None, 0)]
    text = ("x [a.pdf, p. 3] y [a.pdf, pp. 3\u20134] [a.pdf, p. 5] [n.txt, chunk 1] [n.txt, chunk 2] "
            "[b.pdf, p. 1] [1]")
    assert len(cited_places(text)) == 6
    assert unsupported_citations(text, sources) == ["[a.pdf, p. 5]", "[n.txt, chunk 2]", "[b.pdf, p. 1]"]
    hit = ChunkHit.make("c1", 1.0, "test")
    hit.doc_name, hit.order, hit.page_start, hit.page_end = "a.pdf", 2, 3, 4
    result = RetrievalResult(mode="naive", query="q", chunks=[hit])
    assert citation_note(result, "ok [a.pdf, p. 4]") == ""
    assert "[a.pdf, p. 9]" in citation_note(result, "bad [a.pdf, p. 9]")
    assert Answer("t", "llm").note == ""


def test_a_quoted_sentence_is_located_in_its_chunk() -> None:
    from core.citations import locate, quote_pages

    text = "First line.\n\nSecond  sentence\nruns over a break. Third one."
    start, end = locate(text, "Second sentence runs over a break.")
    assert text[start:end] == "Second  sentence\nruns over a break."
    assert locate(text, "Not there at all") == (-1, -1)
    # chunk at offset 100 of a document whose page 2 starts at 113 (the blank line after "First line.")
    assert quote_pages([0, 113], 100, text, "First line.") == (1, 1)
    assert quote_pages([0, 113], 100, text, "Third one.") == (2, 2)
    assert quote_pages([0, 113], 100, text, "Missing words here") == (1, 2)  # the chunk's own pages
    assert quote_pages([], 100, text, "Third one.") == (None, None)


PEOPLE = ["Ilse Marren", "Tomas Berglund", "Greta Holm", "Anders Lind"]
ORGS = ["Brightwater Robotics", "Stellan Industries", "Nordhavn Shipping", "Kestrel Analytics"]
CITIES = ["Oslo", "Bergen", "Malmo", "Aarhus"]


def story_pages() -> list[list[str]]:
    """Four pages, each naming its own person, company and city in three sentences (one linking to the
    next page's company), then filler, so the graph's entities rest on known pages."""
    pages = []
    for i in range(4):
        p = i + 1
        lines = [f"Sentence 1 of page {p} says that {PEOPLE[i]} founded {ORGS[i]} in {CITIES[i]}.",
                 f"Sentence 2 of page {p} says that {ORGS[i]} acquired {ORGS[(i + 1) % 4]} in {2001 + i}.",
                 f"Sentence 3 of page {p} says that {PEOPLE[i]} was born in {CITIES[i]}."]
        lines += [sentence(p, n) for n in range(4, 24)]
        pages.append(lines)
    return pages


def pages_with(name: str) -> set[int]:
    return {i + 1 for i, lines in enumerate(story_pages()) if any(name.lower() in line.lower() for line in lines)}


@pytest.fixture(scope="module")
def story_ws(tmp_path_factory):
    from conftest import HashEmbedder

    from core.indexing.pipeline import process_pending, register_documents
    from core.loaders import load_bytes
    from core.workspace import Workspace

    ws = Workspace(tmp_path_factory.mktemp("story") / "ws", embedder=HashEmbedder())
    ws.save_settings(ws.settings.model_copy(update={"chunk_tokens": 200, "chunk_overlap": 20}))
    docs, failures = load_bytes("story.pdf", make_pdf(story_pages()))
    with ws.writer():
        register_documents(ws, docs, failures)
        assert process_pending(ws).processed == 1
    yield ws
    ws.close()


def _cited_pages(label: str) -> set[int]:
    import re

    assert label.startswith("story.pdf, p"), label
    out: set[int] = set()
    for part in re.findall(r"\d+(?:\u2013\d+)?", label.split(",", 1)[1]):
        first, _, last = part.partition("\u2013")
        out.update(range(int(first), int(last or first) + 1))
    return out


def test_graph_hits_cite_the_pages_of_their_source_chunks(story_ws) -> None:
    """Entities, relations, path hops and summary nodes carry ``cited`` pages; a named entity's cited
    pages include a page that names it, and a path hop's pages one that names both its ends."""
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN

    question = "Who founded the company that acquired Stellan Industries?"
    results = run_modes(LOCAL_ADMIN, story_ws, question, ["local", "global", "path", "tree"], concurrent=False)
    seen = {"entity": 0, "relation": 0, "hop": 0, "summary": 0}
    for result in results.values():
        for entity in result.entities:
            truth = pages_with(entity.name)
            if entity.cited and truth:
                assert _cited_pages(entity.cited[0]) & truth, (entity.name, entity.cited)
                seen["entity"] += 1
        for relation in result.relations:
            truth = pages_with(relation.source) & pages_with(relation.target)
            if relation.cited and truth:
                assert _cited_pages(relation.cited[0]) & truth, (relation.source, relation.target, relation.cited)
                seen["relation"] += 1
        for path in result.paths:
            assert path.hop_cited is not None and len(path.hop_cited) == len(path.relations)
            for edge, where in zip(path.relations, path.hop_cited):
                truth = pages_with(edge.source) & pages_with(edge.target)
                if where and truth:
                    assert _cited_pages(where) & truth, (edge.source, edge.target, where)
                    seen["hop"] += 1
        for summary in result.summaries:
            assert summary.cited and all(1 <= p <= 4 for p in _cited_pages(summary.cited[0]))
            seen["summary"] += 1
        data = json.loads(json.dumps(result.to_dict()))
        assert all("cited" in e for e in data.get("entities", []) if e.get("source_chunk_ids"))
    assert all(seen.values()), seen


def test_exports_and_inspect_tables_carry_citations(story_ws) -> None:
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.export import graph_bytes, with_citations
    from ui.results_view import chunks_frame, entities_frame, paths_frame, relations_frame

    graph = with_citations(story_ws, story_ws.knowledge_graph())
    cited = [d["cited"] for _, d in graph.nodes(data=True) if d.get("source_chunk_ids")]
    assert cited and all(c[0].startswith("story.pdf, p") for c in cited)
    assert b"story.pdf, p" in graph_bytes(graph, "graphml")
    result = run_modes(LOCAL_ADMIN, story_ws, "Who founded Brightwater Robotics?", ["path"], concurrent=False)["path"]
    for frame in (entities_frame(result), relations_frame(result), chunks_frame(result)):
        assert frame.empty or frame["cited"].str.startswith("story.pdf, p").any()
    if result.paths:
        assert paths_frame(result)["cited"].str.contains("story.pdf, p").all()


def test_sources_label_groups_pages_and_chunks() -> None:
    from core.citations import sources_label

    places = [("a.pdf", 3, 3, 0), ("a.pdf", 5, 6, 1), ("n.txt", None, None, 1), ("a.pdf", 4, 4, 2),
              ("n.txt", None, None, 3), ("x.md", None, None, 0)]
    assert sources_label(places) == ["a.pdf, pp. 3\u20136", "n.txt, chunks 2, 4", "x.md, chunk 1"]
    assert sources_label([("a.pdf", 2, 2, 0)]) == ["a.pdf, p. 2"]
    assert sources_label([("a.pdf", 2, 2, 0), ("a.pdf", 7, 7, 5)]) == ["a.pdf, pp. 2, 7"]


def test_an_old_workspace_recovers_spans_on_open_and_pages_on_re_adding_the_file(tmp_path) -> None:
    """A workspace indexed before positions were kept (no chunk spans, no page rows, schema 4): on open
    every chunk's span is found again in its document's text, the PDF is named as lacking pages, and
    adding the same file again gives its pages without re-indexing or re-embedding anything."""
    import sqlite3

    from conftest import HashEmbedder

    from core.api import position_gaps
    from core.auth import LOCAL_ADMIN
    from core.indexing.common import IndexReport
    from core.indexing.pipeline import process_pending, register_documents
    from core.loaders import load_bytes
    from core.retrieval.results import fill_chunk_texts
    from core.types import ChunkHit

    path = tmp_path / "ws"
    from core.workspace import Workspace

    ws = Workspace(path, embedder=HashEmbedder())
    ws.save_settings(ws.settings.model_copy(update={"chunk_tokens": 200, "chunk_overlap": 20}))
    docs, failures = load_bytes("known.pdf", make_pdf())
    with ws.writer():
        register_documents(ws, docs, failures)
        process_pending(ws)
    (doc,) = ws.records.documents()
    truth = {c.chunk_id: c.start_char for c in ws.records.chunks_of(doc.doc_id)}
    assert position_gaps(LOCAL_ADMIN, ws) == ""
    ws.close()
    db = sqlite3.connect(path / "ragscope.sqlite3")
    db.execute("UPDATE chunks SET start_char = -1")
    db.execute("DELETE FROM doc_positions")
    db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    db.commit()
    db.close()

    ws = Workspace(path, embedder=HashEmbedder())
    try:
        assert {c.chunk_id: c.start_char for c in ws.records.chunks_of(doc.doc_id)} == truth
        gaps = position_gaps(LOCAL_ADMIN, ws)
        assert "known.pdf" in gaps and "before page, section and line positions were kept" in gaps
        hits = fill_chunk_texts(ws, [ChunkHit.make(c, 1.0, "t") for c in truth])
        assert all(h.page_start is None for h in hits)  # no pages yet: citations name chunks
        vectors = ws.vectors.count("chunks")
        report = IndexReport()
        docs, failures = load_bytes("known.pdf", make_pdf())
        with ws.writer():
            register_documents(ws, docs, failures, report=report)
        assert report.unchanged == 1 and report.new_documents == 0
        assert not ws.records.documents("pending")  # nothing to re-index
        assert ws.vectors.count("chunks") == vectors
        assert position_gaps(LOCAL_ADMIN, ws) == ""
        hits = fill_chunk_texts(ws, [ChunkHit.make(c, 1.0, "t") for c in truth])
        assert all(h.page_start is not None for h in hits)
    finally:
        ws.close()


def test_typographic_quotes_match_plain_ones() -> None:
    from core.citations import locate

    text = "He was going to say 'to a shade,' but stopped."
    assert locate(text, "He was going to say \u2018to a shade,\u2019 but stopped.") == (0, len(text))


def test_a_quoted_sentence_whose_markup_was_dropped_is_cited_at_its_own_page() -> None:
    """A stored sentence drops markup its text keeps (``{<object definition>}`` → ``{}``): ``locate`` does
    not find it, and the citation named the whole chunk's pages (pp. 1–3 here). Its first words place
    it on page 2, where it is."""
    from core.citations import DocPositions, locate, quote_where

    pages = ["Page one text about tags. " * 8, "The grammar is below: name {<object definition>} DEFINITIONS TAGS ::= BEGIN\n",
             "Page three text about values. " * 8]
    text = "\n\n".join(pages)
    starts = [0, len(pages[0]) + 2, len(pages[0]) + len(pages[1]) + 4]
    quote = "The grammar is below: name {} DEFINITIONS TAGS ::= BEGIN"
    assert locate(text, quote) == (-1, -1)
    where = quote_where(DocPositions(pages=starts), 0, text, quote)
    assert (where.page_start, where.page_end) == (2, 2)
    assert quote_where(DocPositions(pages=starts), 0, text, "Nothing of this is on any page").page_end == 3  # the chunk


def test_an_answer_line_labelled_with_a_name_and_a_dash_yields_its_sentence() -> None:
    from core.citations import quote_candidates

    found = quote_candidates("Ebenezer Scrooge \u2014 It opened; and a little girl came darting in.")
    assert found[-1] == "It opened; and a little girl came darting in."
