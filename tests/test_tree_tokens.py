"""The tree mode's context count (``core.retrieval.tree_tokens``): a segment the generation's table does
not know (a summary with its shown sentences replaced by a pointer) is counted by its sentences, cut
before each space after a sentence's end; the count equals cl100k's on any text."""
from __future__ import annotations

import random

from core.retrieval import tree_tokens
from core.retrieval.context_dedup import pieces
from core.retrieval.token_counts import SegmentCounts
from core.tokens import count_tokens, encoding

SUMMARY = ("Kestrel Point Lighthouse stood on the northern cape from 1871. Its last resident keeper was Ada "
           "Whitcombe; she left in 1962! Was the lamp automated then? The railway opened in 1898.  Two spaces "
           "here.\tA tab. Ünïcödé 日本語 text: “quoted.” Numbers 12345.678 end; 's contraction. Ends without stop")
WORDS = ["alpha", "Ωmega", "日本", "1234", "x", ".", "!", "?", ";", ",", "(", ")", "'s", "—", "“", "\t", " ", "  ",
         "\n", "\n\n", "café", "a.b", "U.S.", "e.g."]


def counter(sentences_from: str = SUMMARY) -> tree_tokens.TreeContextCounter:
    table = {}
    for piece in pieces(sentences_from):
        table[piece] = count_tokens(piece)
        table[" " + piece] = count_tokens(" " + piece)
    return tree_tokens.TreeContextCounter(SegmentCounts({}), table)


def compacted(text: str, keep: list[bool], pointer: str) -> str:
    kept = [p for p, k in zip(pieces(text), keep) if k]
    return f"{' '.join(kept)} (see {pointer})" if kept else f"(see {pointer})"


def test_compacted_summaries_count_as_cl100k_does():
    rng = random.Random(3)
    count = counter().count
    n = len(pieces(SUMMARY))
    for _ in range(300):
        body = compacted(SUMMARY, [rng.random() < 0.6 for _ in range(n)], rng.choice(["[Doc, chunk 2]", "[3]", "x"]))
        text = "[summary of the corpus, level 2, 7 chunks]\n" + body + rng.choice(["", "\n", "\n\n[Doc, chunk 1]\nA b."])
        assert count(text) == count_tokens(text), text


def test_any_text_counts_as_cl100k_does():
    rng = random.Random(11)
    sentences = " ".join("".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) + rng.choice(".!?;")
                         for _ in range(40))
    count = counter(sentences).count
    parts = pieces(sentences)
    for _ in range(500):
        text = "".join(rng.choice([rng.choice(WORDS), " " + rng.choice(parts), rng.choice(parts)])
                       for _ in range(rng.randint(0, 25)))
        assert count(text) == count_tokens(text), repr(text)


def test_known_sentences_are_not_encoded_again(monkeypatch):
    count = counter().count
    body = compacted(SUMMARY, [True] * len(pieces(SUMMARY)), "[Doc, chunk 2]")
    encoded: list[str] = []
    real = encoding()

    class Spy:
        def encode_ordinary(self, text: str) -> list[int]:
            encoded.append(text)
            return real.encode_ordinary(text)
    monkeypatch.setattr(tree_tokens, "encoding", lambda: Spy())
    assert count(body + "\n\n") == count_tokens(body + "\n\n")
    last = pieces(SUMMARY)[-1]  # no sentence end before the pointer: encoded with it
    assert encoded == [f" {last} (see [Doc, chunk 2])\n\n"]  # every other sentence came from the table


def test_the_tree_mode_counts_its_context_exactly(sample_ws, monkeypatch):
    from core.retrieval.registry import query_context, retrieve

    questions = ["Who was the last resident keeper of Kestrel Point Lighthouse?",
                 "In what year did the Velmora Coastal Railway open to passenger traffic?",
                 "What connects the lighthouse and the railway?"]
    used: list[str] = []
    real = tree_tokens.TreeContextCounter.count

    def spy(self, text: str) -> int:
        used.append(text)
        return real(self, text)
    monkeypatch.setattr(tree_tokens.TreeContextCounter, "count", spy)
    results = [retrieve(query_context(sample_ws, q), "tree") for q in questions]
    assert used  # the tree mode counts with the sentence-aware counter
    for result in results:
        assert result.context_tokens == count_tokens(result.context_text)
