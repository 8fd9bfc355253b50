"""Chunking (at most 1200 cl100k tokens, ~100 of overlap, snapped to sentence ends) and token counting."""
from __future__ import annotations

import pytest

from core.chunking import chunk_text, join_without_overlap
from core.tokens import count_tokens, encode, truncate


def test_cl100k_offline_matches_known_ids():
    # "hello world" is [15339, 1917] in cl100k_base
    assert encode("hello world") == [15339, 1917]
    assert count_tokens("") == 0


def test_chunks_fit_the_budget_and_never_split_a_word():
    text = " ".join(f"word{i}" for i in range(3000))  # one endless "sentence": cut at whitespace
    chunks = chunk_text("doc", text, chunk_tokens=1200, overlap=100)
    words = set(text.split())
    assert len(chunks) >= 3
    assert [c.order for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert chunk.tokens == count_tokens(chunk.text) <= 1200
        assert chunk.tokens >= 1000 or chunk is chunks[-1]
        assert set(chunk.text.split()) <= words  # every piece is a whole word
        assert text[chunk.start_char : chunk.start_char + len(chunk.text)] == chunk.text
    for before, after in zip(chunks, chunks[1:]):
        shared = before.start_char + len(before.text) - after.start_char
        assert 0 < count_tokens(text[after.start_char : after.start_char + shared]) <= 100
    assert join_without_overlap(chunks) == text


def test_boundaries_snap_to_sentence_ends():
    sentences = [f"Sentence number {i} talks about the harbour of Port Sallow and its boats." for i in range(200)]
    text = " ".join(sentences)
    chunks = chunk_text("doc", text, chunk_tokens=300, overlap=40)
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.text.startswith("Sentence number")
        assert chunk.text.rstrip().endswith("boats.")
        assert chunk.tokens <= 300
    overlap = chunks[0].start_char + len(chunks[0].text) - chunks[1].start_char
    assert overlap > 0 and count_tokens(chunks[1].text[:overlap]) <= 40  # whole sentences repeated
    assert join_without_overlap(chunks) == text


def test_paragraph_and_markdown_breaks_are_boundaries_but_wrapped_lines_are_not():
    text = "# Title\n\nA first paragraph that goes on.\nIt wraps here and\ncontinues.\n\n- item one\n- item two\n"
    chunks = chunk_text("doc", text, chunk_tokens=8, overlap=2)
    assert all(not c.text.startswith(("and", "continues", "wraps")) for c in chunks)
    assert any(c.text.startswith("- item") for c in chunks)
    assert join_without_overlap(chunks) == text


def test_a_word_longer_than_a_chunk_is_cut_by_tokens():
    blob = "x" * 20000
    chunks = chunk_text("doc", f"start {blob} end", chunk_tokens=100, overlap=10)
    assert all(c.tokens <= 100 for c in chunks)
    assert join_without_overlap(chunks) == f"start {blob} end"


def test_chunk_ids_are_content_hashes_scoped_by_document():
    a = chunk_text("doc-a", "same text here")
    b = chunk_text("doc-b", "same text here")
    assert a[0].chunk_id != b[0].chunk_id
    assert chunk_text("doc-a", "same text here")[0].chunk_id == a[0].chunk_id


def test_empty_text_has_no_chunks_and_bad_overlap_is_refused():
    assert chunk_text("d", "") == []
    with pytest.raises(ValueError):
        chunk_text("d", "x", chunk_tokens=100, overlap=100)


def test_truncate_cuts_to_the_budget():
    text = "alpha beta gamma delta " * 50
    assert count_tokens(truncate(text, 10)) <= 10
    assert truncate("short", 10) == "short"
