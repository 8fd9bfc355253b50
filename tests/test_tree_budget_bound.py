"""Tree's first budget pass counts tokens only when the context's UTF-8 size is over the budget
(``tree_search.tokens_or_bytes``): a cl100k token is at least one byte."""
from __future__ import annotations

from core.retrieval.tree_search import tokens_or_bytes
from core.tokens import count_tokens


def spy():
    calls = []

    def count(text: str) -> int:
        calls.append(text)
        return count_tokens(text)
    return count, calls


def test_within_budget_by_size_nothing_is_counted():
    count, calls = spy()
    text = "[Doc, chunk 1]\nA short chunk of text about a place.\n\n[Doc, chunk 2]\nAnother one."
    assert tokens_or_bytes(text, count, budget=10_000) == len(text.encode("utf-8"))
    assert calls == []


def test_over_budget_by_size_the_exact_count_decides():
    count, calls = spy()
    text = "word " * 400  # 2,000 bytes, 400 tokens
    assert tokens_or_bytes(text, count, budget=1_000) == count_tokens(text) <= 1_000
    assert calls == [text]


def test_the_size_never_undercounts():
    for text in ["plain ascii text", "é ü ß 日本語 テキスト", "\n\n\n", "1234567890" * 30, "Ω≈ç√∫˜µ≤≥÷" * 5]:
        assert count_tokens(text) <= len(text.encode("utf-8"))
        assert tokens_or_bytes(text, count_tokens, budget=0) == count_tokens(text) or text == ""
