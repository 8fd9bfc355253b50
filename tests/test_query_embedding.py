"""The local MiniLM's query path (a few strings, one thread, straight through the model) gives the
same vectors as sentence-transformers' ``encode``, bit for bit, and the warm-up loads the models."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.embeddings import QUERY_BATCH, _normalise, local_embedder

QUERIES = ["What is the native language of the person who broke the salt law in Belgium in 1930?",
           "Belgium", "salt law, native language", "Mohandas Karamchand Gandhi"]


@pytest.mark.parametrize("n", range(1, QUERY_BATCH + 1))
def test_query_path_equals_encode(n: int) -> None:
    embedder = local_embedder()
    texts = QUERIES[:n]
    lean = embedder.embed(texts)
    # ``encode`` on the one thread the query path uses: on some CPUs the matrix kernels split a batch of
    # three or four strings differently on one thread and on two, which moves the last bit (~1e-7) and
    # would test the thread count rather than the path (seen on an AVX-512 machine with AMX; equal on the
    # machines of earlier runs)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        reference = _normalise(embedder._model.encode(texts, batch_size=len(texts), convert_to_numpy=True))
    finally:
        torch.set_num_threads(threads)
    assert lean.shape == (n, embedder.dim)
    assert lean.dtype == np.float32
    assert np.array_equal(lean, reference)


def test_query_path_keeps_text_order() -> None:
    embedder = local_embedder()
    forward = embedder.embed(QUERIES[:3])
    backward = embedder.embed(QUERIES[:3][::-1])
    assert np.allclose(forward, backward[::-1], atol=1e-6)
    assert float(forward[0] @ forward[1]) < 0.9  # three different vectors, not one repeated


def test_warm_models_loads_the_default_embedder() -> None:
    from core.onnx_embeddings import int8_embedder_loaded
    from core.warmup import start_warmup, warm_models

    warm_models()
    assert int8_embedder_loaded()  # the default of new workspaces (int8), not the torch model
    first = start_warmup()
    assert start_warmup() is None  # once per process
    if first is not None:
        first.join(timeout=60)
        assert not first.is_alive()


def test_packed_queries_equal_each_string_alone() -> None:
    """One packed call (no padding, each string attends to itself only) gives every string the vector
    it gets alone, to float rounding, in the order given; strings of very different lengths included."""
    embedder = local_embedder()
    texts = QUERIES + ["Belgium, Mohandas Karamchand Gandhi", "", "Belgium"]
    packed = embedder.embed_queries(texts)
    alone = np.concatenate([embedder.embed([t]) for t in texts])
    assert packed.shape == (len(texts), embedder.dim) and packed.dtype == np.float32
    assert np.abs(packed - alone).max() < 1e-5
    assert np.allclose(np.linalg.norm(packed, axis=1), 1.0, atol=1e-5)
    assert float(packed[1] @ packed[2]) < 0.9  # different strings, different vectors (no pooling across them)
    assert np.abs(packed[1] - packed[-1]).max() < 1e-6  # a repeated string: its vector wherever it sits


def test_packs_split_at_the_token_limit() -> None:
    """Strings are packed in order into sequences of at most PACK_TOKENS wordpieces; a long one
    runs alone; a call over the limit still returns one vector per string, in order."""
    from core.embeddings import PACK_TOKENS, _packs

    assert _packs([[1] * 100, [1] * 100, [1] * 100], 256) == [[0, 1], [2]]
    assert _packs([[1] * 300, [1] * 3], 256) == [[0], [1]]
    assert _packs([], 256) == []
    embedder = local_embedder()
    long_text = " ".join(["harbour"] * 200)  # ~200 wordpieces: three of them need three sequences
    texts = [long_text, "Belgium", long_text + " lighthouse", QUERIES[0]]
    assert len(_packs(embedder._model[0].tokenizer(texts)["input_ids"], PACK_TOKENS)) > 1
    packed = embedder.embed_queries(texts)
    alone = np.concatenate([embedder.embed([t]) for t in texts])
    assert np.abs(packed - alone).max() < 1e-5


def test_query_context_embeds_a_graph_mode_strings_in_one_call(tmp_path) -> None:
    """A graph mode's query strings (question, names, joined names, keywords) cost one packed call."""
    from core.retrieval.registry import query_context
    from core.workspace import Workspace

    class Counting:
        name, dim = "all-MiniLM-L6-v2", 384

        def __init__(self) -> None:
            self.inner, self.calls = local_embedder(), []

        def embed(self, texts):  # pragma: no cover - must not be called for query strings
            raise AssertionError("query strings go through embed_queries")

        def embed_queries(self, texts):
            self.calls.append(list(texts))
            return self.inner.embed_queries(texts)

    ws = Workspace(tmp_path / "ws")
    counting = Counting()
    ws._embedder = counting
    ctx = query_context(ws, "Who founded the Velmora Marine Institute and when did Port Sallow open?")
    ctx.embed("Velmora Marine Institute")
    assert len(counting.calls) == 1 and len(counting.calls[0]) == len(ctx.query_texts()) >= 3
    for text in ctx.query_texts():
        ctx.embed(text)
    assert len(counting.calls) == 1  # every later string comes from the one call
    expected = local_embedder().embed([ctx.query_texts()[0]])[0]
    assert np.abs(ctx.embed(ctx.question) - expected).max() < 1e-5
