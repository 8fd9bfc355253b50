"""Chunking (1200/100 cl100k windows per document) and token counting."""
from __future__ import annotations

import pytest

from core.chunking import chunk_text, join_without_overlap
from core.tokens import count_tokens, encode, truncate


def test_cl100k_offline_matches_known_ids():
    # "hello world" is [15339, 1917] in cl100k_base
    assert encode("hello world") == [15339, 1917]
    assert count_tokens("") == 0


def test_windows_have_the_configured_size_and_overlap():
    text = " ".join(f"word{i}" for i in range(3000))
    total = count_tokens(text)
    chunks = chunk_text("doc", text, chunk_tokens=1200, overlap=100)
    assert [c.start_token for c in chunks] == list(range(0, total, 1100))[: len(chunks)]
    assert all(c.tokens == 1200 for c in chunks[:-1])
    assert chunks[-1].start_token + chunks[-1].tokens == total
    assert [c.order for c in chunks] == list(range(len(chunks)))
    assert join_without_overlap(chunks) == text


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
