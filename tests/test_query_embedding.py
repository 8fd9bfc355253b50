"""The local MiniLM's query path (a few strings, one thread, straight through the model) gives the
same vectors as sentence-transformers' ``encode``, bit for bit, and the warm-up loads the models."""
from __future__ import annotations

import numpy as np
import pytest

from core.embeddings import QUERY_BATCH, _normalise, local_embedder

QUERIES = ["What is the native language of the person who broke the salt law in Belgium in 1930?",
           "Belgium", "salt law, native language", "Mohandas Karamchand Gandhi"]


@pytest.mark.parametrize("n", range(1, QUERY_BATCH + 1))
def test_query_path_equals_encode(n: int) -> None:
    embedder = local_embedder()
    texts = QUERIES[:n]
    lean = embedder.embed(texts)
    reference = _normalise(embedder._model.encode(texts, batch_size=len(texts), convert_to_numpy=True))
    assert lean.shape == (n, embedder.dim)
    assert lean.dtype == np.float32
    assert np.array_equal(lean, reference)


def test_query_path_keeps_text_order() -> None:
    embedder = local_embedder()
    forward = embedder.embed(QUERIES[:3])
    backward = embedder.embed(QUERIES[:3][::-1])
    assert np.allclose(forward, backward[::-1], atol=1e-6)
    assert float(forward[0] @ forward[1]) < 0.9  # three different vectors, not one repeated


def test_warm_models_loads_the_embedder() -> None:
    from core.embeddings import local_embedder_loaded
    from core.warmup import start_warmup, warm_models

    warm_models()
    assert local_embedder_loaded()
    first = start_warmup()
    assert start_warmup() is None  # once per process
    if first is not None:
        first.join(timeout=60)
        assert not first.is_alive()
