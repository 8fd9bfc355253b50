"""Issue 31: a JSONL passage title that only says where the passage sits in a book ("The Salt Road (Ada
Quillfeather, 1871) – Chapter 2: The Salt Merchants (part 1)") is the document's name, never its text; a
title that names the passage's subject (an encyclopedic corpus) stays the text's first line."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.loaders import load_bytes, load_path
from core.parsing.titles import label_titles, work_name

FIXTURE = Path(__file__).parent / "fixtures" / "titled_book.jsonl"
BOOK = "The Salt Road (Ada Quillfeather, 1871)"


def _jsonl(records: list[dict]) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode("utf-8")


def test_a_chapter_title_shared_by_passages_is_a_label():
    titles = [f"{BOOK} – Chapter 1: The Ferry (part 1)", f"{BOOK} – Chapter 1: The Ferry (part 2)",
              "A Christmas Carol - Stave One: Marley's Ghost", "A Christmas Carol - Stave Two: The First Spirit"]
    assert label_titles(titles) == [True, True, True, True]
    assert work_name(titles[0]) == BOOK.lower()


def test_a_subject_title_is_not_a_label():
    titles = ["Peter Bonetti", "Star Wars: Episode IV – A New Hope", "English Education Act 1835",
              "Cross-country skiing at the 2006 Winter Olympics – Women's team sprint", "Namibia", "Namibia"]
    assert label_titles(titles) == [False] * len(titles)


def test_the_loader_keeps_a_book_title_as_the_name_and_out_of_the_text():
    docs, failures = load_path(FIXTURE)
    assert not failures and len(docs) == 5
    for doc in docs:
        assert doc.name.startswith(BOOK + " – Chapter")
        assert BOOK not in doc.text and "Chapter" not in doc.text and "(part" not in doc.text
    assert docs[1].text.startswith("The new bridge at Brannock was designed by Miriam Castell")


def test_the_loader_keeps_a_subject_title_as_the_first_line():
    docs, failures = load_bytes("wiki.jsonl", _jsonl([
        {"doc_id": "a", "title": "Peter Bonetti", "text": "Peter Phillip Bonetti was an English goalkeeper."},
        {"doc_id": "b", "title": "Star Wars: Episode IV – A New Hope", "text": "A 1977 film."}]))
    assert not failures
    assert docs[0].text == "Peter Bonetti\nPeter Phillip Bonetti was an English goalkeeper."
    assert docs[1].text == "Star Wars: Episode IV – A New Hope\nA 1977 film."


def test_a_lone_chapter_title_stays_text():
    """One record is no book: nothing shows that its title is shared structure."""
    docs, _ = load_bytes("one.jsonl", _jsonl([{"title": f"{BOOK} – Chapter 1 (part 1)", "text": "Words here."}]))
    assert docs[0].text.startswith(BOOK)


@pytest.mark.slow
def test_a_book_title_is_no_hub_no_summary_and_no_opening_of_an_answer(tmp_path):
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.indexing.pipeline import process_pending, register_documents
    from core.workspace import Workspace

    docs, failures = load_path(FIXTURE)
    ws = Workspace(tmp_path / "ws")
    try:
        with ws.writer():
            register_documents(ws, docs, failures)
            process_pending(ws)
        graph = ws.knowledge_graph()
        assert not [n for n in graph if "salt road" in n or "chapter" in n or "quillfeather" in n]
        summaries = " ".join(n.text for n in ws.tree_index().values())
        assert "Chapter" not in summaries and "Quillfeather" not in summaries
        question = "How often did the ferry at Brannock cross the estuary?"
        for mode, result in run_modes(LOCAL_ADMIN, ws, question, "all").items():
            if result.answer is not None:
                first = result.answer.text.splitlines()[0]
                assert not first.startswith(BOOK), (mode, first)
                assert "Chapter 1" not in first.split("[")[0], (mode, first)
    finally:
        ws.close()
