"""Short documents cut at paragraph ends (``core.chunking.chunk_document`` with
``short_document_chunk_tokens``): chunks tile the text, end at paragraph ends, stay within the budget;
off by default; long documents are chunked as before."""
from __future__ import annotations

from pathlib import Path

from core.chunking import chunk_document, chunk_text, join_without_overlap
from core.settings import Settings
from core.tokens import count_tokens

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "samples" / "05-kestrel-point-lighthouse.md"


def test_a_short_document_is_cut_at_paragraph_ends_within_the_budget():
    text = SAMPLE.read_text(encoding="utf-8")
    assert count_tokens(text) < 3000
    chunks = chunk_document("d", text, Settings(short_document_chunk_tokens=300))
    assert len(chunks) >= 4 and all(c.tokens <= 300 for c in chunks)
    assert join_without_overlap(chunks) == text  # the chunks tile the document exactly
    assert all(text[c.start_char:c.start_char + len(c.text)] == c.text for c in chunks)
    for chunk in chunks[:-1]:  # every cut is at a blank line (paragraph end)
        assert "\n\n" in text[chunk.start_char + len(chunk.text) - 3: chunk.start_char + len(chunk.text) + 1] or \
            chunk.text.endswith("\n")
    assert not any(c.text.strip().startswith("#") and "\n" not in c.text.strip() for c in chunks)  # no lone heading
    assert [c.order for c in chunks] == list(range(len(chunks)))


def test_off_by_default_and_long_documents_unchanged():
    text = SAMPLE.read_text(encoding="utf-8")
    default = chunk_document("d", text, Settings())
    assert [c.text for c in default] == [c.text for c in chunk_text("d", text, 1200, 100)]
    long_text = (text + "\n\n") * 4  # over the 3,000-token short-document limit
    settings = Settings(short_document_chunk_tokens=300)
    assert count_tokens(long_text) > settings.short_document_tokens
    assert [c.text for c in chunk_document("d", long_text, settings)] == \
        [c.text for c in chunk_text("d", long_text, 1200, 100)]


def test_a_paragraph_longer_than_the_budget_is_cut_by_sentences():
    paragraph = " ".join(f"Sentence number {i} says something about the harbour." for i in range(80))
    text = f"# Title\n\n{paragraph}\n\nA last short paragraph."
    chunks = chunk_document("d", text, Settings(short_document_chunk_tokens=120, chunk_overlap=20))
    assert all(c.tokens <= 120 for c in chunks) and len(chunks) > 5
    assert chunks[-1].text.strip().endswith("A last short paragraph.")
