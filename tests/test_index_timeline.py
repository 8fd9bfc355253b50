"""The indexing benchmark's bookkeeping (``benchmarks/wordpieces.py``, ``benchmarks/index_timeline.py``):
wordpieces booked by kind, the ones a later batch made obsolete ("superseded"), and span arithmetic."""
from __future__ import annotations

import sys
from types import SimpleNamespace

import numpy as np

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))


class _Tokenizer:
    def encode_batch(self, texts):
        return [SimpleNamespace(ids=[0] * (len(t.split()) + 2)) for t in texts]  # words + [CLS]/[SEP]


class _Inner:
    name, dim = "fake", 4

    def __init__(self) -> None:
        self._tokenizer = _Tokenizer()

    def embed(self, texts):
        return np.ones((len(texts), self.dim), dtype=np.float32)


def _entity(key: str):
    return SimpleNamespace(key=key)


def test_a_key_embedded_again_in_a_later_batch_books_its_earlier_wordpieces_as_superseded():
    import wordpieces

    from core.indexing.batch import embed_texts  # the batch's graph-text call: booked by kind

    counter = wordpieces.CountingEmbedder(_Inner())
    counter.note_graph_texts([_entity("a"), _entity("b")], [SimpleNamespace(source="a", target="b")], [])
    embed_texts(counter, ["Alpha\nfirst profile", "Beta\nprofile", "rel, a\tAlpha\nBeta"], None)
    counter.note_graph_texts([_entity("a")], [], [])  # batch 2: a's profile grew
    embed_texts(counter, ["Alpha\nfirst profile and more"], None)
    report = counter.report(corpus_tokens=10)
    assert report["batches"] == 2
    assert report["by_kind"]["entities"] == {"texts": 3, "wordpieces": 5 + 4 + 7, "per_corpus_token": 1.6}
    assert report["by_kind"]["relations"]["wordpieces"] == 6
    # the first embedding of "a" (5 wordpieces) was made obsolete by batch 2; "b" and the relation were not
    assert report["superseded"] == {"entities": {"texts": 1, "wordpieces": 5, "per_corpus_token": 0.5}}
    assert report["superseded_per_corpus_token"] == 0.5
    assert [c["kind"] for c in counter.calls] == ["graph", "graph"]


def test_span_arithmetic():
    import index_timeline as tl

    assert tl.union([(3, 4), (0, 1), (0.5, 2)]) == [(0, 2), (3, 4)]
    assert tl.length([(0, 1), (0.5, 2), (3, 4)]) == 3
    assert tl.intersection([(0, 2), (3, 4)], [(1, 3.5)]) == 1.5
