"""Issue 38: a question's embedding is not starved by an indexing run's embedding of the same model.

The load benchmark's four readers while a fifth session indexed had a p95 of 99 s (their median 14.6 s)
and one question's embedding waited 84.7 s: the local model was held for the whole of one large
``embed`` call. Now a large call goes in slices of a few batches and a question waiting for the model
goes before the next slice (``core.fairness.QueriesFirst``), with the vectors unchanged (each batch
holds the texts one whole call would give it).

Deterministic: the fake model's first bulk batch waits until the question is queued, so the order of
the calls is decided by the gate alone.
"""
from __future__ import annotations

import threading

import numpy as np
import torch

from core import embeddings
from core.embeddings import BULK_SLICE_BATCHES, MiniLMEmbedder
from core.fairness import QueriesFirst


class _Model:
    """Records each call; the first bulk call waits until a question waits for the model."""

    def __init__(self, turns: QueriesFirst) -> None:
        self.turns, self.calls, self.batches = turns, [], []

    def encode(self, texts, batch_size, convert_to_numpy):
        if not self.calls:
            for _ in range(500):  # the question arrives while the first slice holds the model
                if self.turns.waiting():
                    break
                threading.Event().wait(0.01)
        self.calls.append("bulk")
        self.batches.append(list(texts))
        return np.ones((len(texts), 4), dtype=np.float32)


def _embedder(batch_size: int = 2) -> tuple[MiniLMEmbedder, _Model]:
    embedder = object.__new__(MiniLMEmbedder)  # no model loaded: the gate and the slicing are under test
    embedder._torch, embedder._bf16, embedder._batch_size, embedder._model_ready = torch, False, batch_size, True
    embedder._turns = QueriesFirst()
    model = _Model(embedder._turns)
    embedder._model = model
    embedder.dim = 4
    embedder._encode_queries = lambda texts: (model.calls.append("question"), np.ones((len(texts), 4)))[1]
    return embedder, model


def test_a_question_goes_before_the_next_slice_of_a_bulk_embedding():
    embedder, model = _embedder()
    texts = [f"text {i} " * (i % 7 + 1) for i in range(2 * BULK_SLICE_BATCHES * 4)]  # 4 slices
    bulk = threading.Thread(target=embedder.embed, args=(texts,))
    bulk.start()
    while not model.calls and bulk.is_alive() and not embedder._turns.model.locked():
        threading.Event().wait(0.01)
    embedder.embed(["Which city is the capital?"])
    bulk.join(30)
    assert model.calls.index("question") == BULK_SLICE_BATCHES  # right after the first slice, not at the end
    assert model.calls.count("bulk") == len(texts) // 2


def test_the_bulk_batches_are_the_ones_one_encode_call_makes():
    embedder, model = _embedder(batch_size=3)
    texts = [f"w{i} " * (i * 7 % 11 + 1) for i in range(20)]
    embedder.embed(texts)
    order = np.argsort([-len(t) for t in texts])  # SentenceTransformer.encode's own order
    assert model.batches == [[texts[i] for i in order[s : s + 3]] for s in range(0, 20, 3)]


def test_a_bulk_slice_waits_while_a_question_is_queued():
    """The gate itself, with no race: while a question is queued for the model (here: counted as
    waiting, the model free), bulk work does not start its next slice; once the question is served, it
    does. A plain lock in place of the gate lets the slice start at once."""
    turns = QueriesFirst()
    entered = threading.Event()

    def next_slice() -> None:
        with turns.bulk_slice():
            entered.set()

    with turns._cond:
        turns._waiting += 1  # a question queued (test-only: the state between its count and its lock)
    bulk = threading.Thread(target=next_slice)
    bulk.start()
    assert not entered.wait(0.5)
    with turns._cond:
        turns._waiting -= 1
        turns._cond.notify_all()
    assert entered.wait(10)
    bulk.join(10)


def test_queries_first_bounds_a_bulk_slices_patience():
    turns = QueriesFirst()
    with turns.question():
        pass
    assert turns.waiting() == 0
    with turns.bulk_slice(patience_s=0.1):
        assert turns.model.locked()


def test_the_embedder_module_keeps_the_slice_small():
    assert 1 <= embeddings.BULK_SLICE_BATCHES <= 8
