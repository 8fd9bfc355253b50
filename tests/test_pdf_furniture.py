"""Issue 31: a PDF's running headers, footers and page numbers are page furniture, not text: dropped from
each page before the pages are joined, never glued into a sentence or a name, page offsets still exact."""
from __future__ import annotations

from conftest import text_pdf
from core.parsing.furniture import is_page_number, strip_furniture

HEADER = "THE SALT ROAD: A HISTORY OF THE COAST"
PAGES = [
    ["The ferry at Brannock crossed the estuary twice a day.", "The first keeper of Gull Ness was Josiah"],
    ["Harland, who kept the light for thirty years.", "The bridge at Brannock opened in 1846."],
    ["Hugh Penhallow was the first master of the salt guild.", "The guild hall stood by the customs house."],
    ["A great storm struck the coast in October 1859.", "Samuel Orme rowed out to the brig Constance."],
]


def _page_texts() -> list[str]:
    return [f"{HEADER}\n" + "\n".join(body) + f"\n{n + 12}" for n, body in enumerate(PAGES)]


def _make_pdf() -> bytes:
    """A PDF of ``PAGES`` (a Helvetica text layer): each page a running header, its lines, its page number."""
    return text_pdf([text.split("\n") for text in _page_texts()])


def test_page_numbers_are_recognised():
    assert all(is_page_number(s) for s in ["12", "- 12 -", "Page 12", "12 of 40", "xii", "(7)"])
    assert not any(is_page_number(s) for s in ["1859 was a year", "I", "Mild", "Harland", "12 keepers"])


def test_running_headers_and_page_numbers_are_dropped_and_body_lines_kept():
    kept = strip_furniture(_page_texts())
    for page, body in zip(kept, PAGES):
        assert page == "\n".join(body)


def test_a_line_repeated_in_the_middle_of_pages_is_kept():
    words = ["Alder", "Birch", "Cedar", "Damson"]
    pages = [f"{w} opens.\n{w} goes on.\nSee the map.\n12\n{w} closes.\n{w} ends." for w in words]
    assert strip_furniture(pages) == pages


def test_a_single_page_keeps_a_lone_number_and_short_documents_keep_their_repeats():
    assert strip_furniture(["The count was\n12"]) == ["The count was\n12"]
    two = ["Same line\nText one.", "Same line\nText two."]
    assert strip_furniture(two) == two  # fewer than MIN_REPEATS pages


def test_the_pdf_loader_drops_furniture_and_keeps_page_offsets_exact():
    from core.loaders import load_bytes

    docs, failures = load_bytes("salt.pdf", _make_pdf())
    assert not failures
    doc = docs[0]
    assert HEADER not in doc.text
    assert "Josiah 12" not in " ".join(doc.text.split()) and "12\n" not in doc.text
    assert len(doc.page_starts) == len(PAGES)
    for start, body in zip(doc.page_starts, PAGES):
        assert doc.text[start:].startswith(body[0])


def test_a_long_line_repeats_only_verbatim():
    """Numbers are read as one only in short lines: long body lines that differ by their numbers stay."""
    trees = ["Alder", "Birch", "Cedar", "Damson", "Elm"]
    pages = [f"Sentence 1 of page {n} tells of marker{n} in the harbour today.\n{w} follows here."
             for n, w in enumerate(trees)]
    assert strip_furniture(pages) == pages
