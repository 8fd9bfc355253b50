"""The generation's segment table (``core.retrieval.token_counts``) also holds the summary nodes' texts,
so the tree mode's exact context count encodes only its headers, never a summary body again per question."""
from __future__ import annotations

from core.retrieval import token_counts
from core.retrieval.token_counts import segment_counts
from core.tokens import count_tokens


class NoEncoding:
    """Stands for the tokenizer: any call means a text was not found in the table."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode_ordinary(self, text: str) -> list[int]:
        self.encoded.append(text)
        return []


def test_summary_bodies_are_counted_from_the_table(sample_ws, monkeypatch) -> None:
    counter = segment_counts(sample_ws)
    bodies = [node.text for node in sample_ws.tree_index().values() if node.text.strip()]
    assert bodies, "the sample workspace has summary nodes"
    texts = [body + "\n\n" for body in bodies] + [body + "\n" for body in bodies]
    expected = [count_tokens(text) for text in texts]
    spy = NoEncoding()
    monkeypatch.setattr(token_counts, "encoding", lambda: spy)
    assert [counter.count(text) for text in texts] == expected
    assert spy.encoded == []
