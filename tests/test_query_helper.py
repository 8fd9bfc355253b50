"""The question's own embedding work on two cores (core/onnx_embeddings.py, core/retrieval/query.py): the
int8 embedder shares a question's strings between the caller and one helper thread with the same per-string
calls (so the same vectors), and ``QueryContext.embed_ahead`` starts the question's vector while its parse runs,
then ``embed``/``prefetch`` wait for it instead of embedding it again."""
from __future__ import annotations

import threading
from concurrent.futures import Future

import numpy as np

STRINGS = ["Who founded the Tidewater Shipping Cooperative in Port Sallow?", "Tobias Wren",
           "Port Sallow, Velmora Coast", "harbour, shipping, cooperative, founder", "Gujarati"]


def test_a_busy_helper_takes_no_string_and_the_caller_does_not_wait_for_it(int8, monkeypatch):
    """The helper still embeds strings started earlier (``embed_queries_soon``): the caller embeds every
    string of its own call itself instead of queueing half of them behind that work."""
    import core.onnx_embeddings as onnx_embeddings

    monkeypatch.setattr(onnx_embeddings.os, "cpu_count", lambda: 2)
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "1")
    helper = onnx_embeddings.query_helper()
    assert helper is not None
    release = threading.Event()
    busy = helper.submit(release.wait, 30)  # the helper is busy until released
    try:
        done: list[np.ndarray] = []
        caller = threading.Thread(target=lambda: done.append(int8.embed_queries(STRINGS)))
        caller.start()
        caller.join(20)
        assert done, "the caller waited for the busy helper"
    finally:
        release.set()
        busy.result()
    assert np.array_equal(done[0], np.vstack([int8.embed_queries([text]) for text in STRINGS]))


def test_query_strings_are_shared_with_the_helper_and_give_the_same_vectors(int8, monkeypatch):
    import core.onnx_embeddings as onnx_embeddings

    ran_on: list[str] = []
    each = onnx_embeddings.Int8MiniLMEmbedder._each

    def recording(ids, session):
        ran_on.append(threading.current_thread().name)
        return each(ids, session)

    monkeypatch.setattr(onnx_embeddings.Int8MiniLMEmbedder, "_each", staticmethod(recording))
    monkeypatch.setattr(onnx_embeddings.os, "cpu_count", lambda: 2)
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "1")
    shared = int8.embed_queries(STRINGS)
    assert any(name.startswith("ragscope-query-embed") for name in ran_on)  # the helper took a share
    assert threading.current_thread().name in ran_on  # and the caller its own
    alone = np.vstack([int8.embed_queries([text]) for text in STRINGS])  # one string: no helper
    assert np.array_equal(shared, alone)  # the same per-string calls: bit-identical vectors
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "0")
    ran_on.clear()
    assert np.array_equal(int8.embed_queries(STRINGS), shared)
    assert all(not name.startswith("ragscope-query-embed") for name in ran_on)


def test_embed_queries_soon_is_the_same_vector(int8):
    future = int8.embed_queries_soon([STRINGS[0]])
    assert isinstance(future, Future)
    assert np.array_equal(future.result(), int8.embed_queries([STRINGS[0]]))


def test_embed_ahead_is_waited_for_not_embedded_again(tmp_path, int8):
    from core.retrieval.registry import query_context
    from core.workspace import Workspace

    class Counting:
        name, dim = int8.name, 384

        def __init__(self) -> None:
            self.soon: list[list[str]] = []
            self.now: list[list[str]] = []

        def embed(self, texts):  # pragma: no cover - query strings go through embed_queries
            raise AssertionError("query strings go through embed_queries")

        def embed_queries(self, texts):
            self.now.append(list(texts))
            return int8.embed_queries(texts)

        def embed_queries_soon(self, texts):
            self.soon.append(list(texts))
            return int8.embed_queries_soon(texts)

    ws = Workspace(tmp_path / "ws")
    counting = Counting()
    ws._embedder = counting
    question = "Who founded the Velmora Marine Institute and when did Port Sallow open?"
    ctx = query_context(ws, question)
    ctx.embed_ahead(question)
    ctx.embed_ahead(question)  # started once
    assert counting.soon == [[question]] and question in ctx.state.pending
    ctx.prefetch(["Velmora Marine Institute"])  # the rest of the question's strings, the question waited for
    assert counting.now and all(question not in call for call in counting.now)
    assert "Velmora Marine Institute" in ctx.state.embeddings  # the rest started, or done without a helper
    assert set(ctx.state.pending) | set(ctx.state.embeddings) == set(ctx.query_texts())
    ctx.prefetch(ctx.query_texts())
    assert not ctx.state.pending and question in ctx.state.embeddings
    assert np.array_equal(ctx.embed(question), int8.embed_queries([question])[0])
    assert set(ctx.state.embeddings) == set(ctx.query_texts())
    counting.soon.clear()
    from core.retrieval.registry import retrieve

    retrieve(query_context(ws, "Where is Port Sallow?"), "tree")  # a mode that parses first starts the vector
    assert counting.soon == [["Where is Port Sallow?"]]
    retrieve(query_context(ws, "Where is Port Sallow?"), "naive")  # naive embeds first: nothing to overlap
    assert counting.soon == [["Where is Port Sallow?"]]


def test_the_helper_is_used_only_with_a_core_to_spare(monkeypatch):
    import core.onnx_embeddings as onnx_embeddings

    monkeypatch.setattr(onnx_embeddings.os, "cpu_count", lambda: 2)
    monkeypatch.delenv("RAGSCOPE_QUERY_HELPER", raising=False)  # auto
    monkeypatch.setattr(onnx_embeddings, "_load_average", lambda: 1.2)
    assert onnx_embeddings.query_helper() is not None
    monkeypatch.setattr(onnx_embeddings, "_load_average", lambda: 6.0)
    assert onnx_embeddings.query_helper() is None  # loaded: the caller embeds alone
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "1")
    assert onnx_embeddings.query_helper() is not None
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "0")
    monkeypatch.setattr(onnx_embeddings, "_load_average", lambda: 0.0)
    assert onnx_embeddings.query_helper() is None
    monkeypatch.setattr(onnx_embeddings.os, "cpu_count", lambda: 1)
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "1")
    assert onnx_embeddings.query_helper() is None


def test_a_forked_child_starts_its_own_helper(monkeypatch):
    import os

    import core.onnx_embeddings as onnx_embeddings

    monkeypatch.setattr(onnx_embeddings.os, "cpu_count", lambda: 2)
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "1")
    parent = onnx_embeddings.query_helper()
    assert parent is not None
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the inherited pool has no thread, a new one must run the work
        try:
            helper = onnx_embeddings.query_helper()
            ok = helper is not None and helper is not parent and helper.submit(lambda: 7).result(timeout=10) == 7
        except BaseException:
            ok = False
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.close(write)
    answer = os.read(read, 1)
    os.waitpid(pid, 0)
    assert answer == b"1"


def test_a_string_started_on_the_helper_is_tokenised_there_not_by_the_caller(int8, monkeypatch):
    """``embed_queries_soon`` hands the strings over: the wordpieces are made on the helper thread, so the
    caller (about to parse the question) spends nothing on them, and the vector is the same."""
    import core.onnx_embeddings as onnx_embeddings

    tokenised_on: list[str] = []
    real = int8._tokenizer

    class Recording:
        def encode_batch(self, texts):
            tokenised_on.append(threading.current_thread().name)
            return real.encode_batch(texts)

    monkeypatch.setattr(onnx_embeddings.os, "cpu_count", lambda: 2)
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "1")
    monkeypatch.setattr(int8, "_tokenizer", Recording())
    vector = int8.embed_queries_soon([STRINGS[0]]).result()
    assert tokenised_on and all(name.startswith("ragscope-query-embed") for name in tokenised_on)
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "0")
    assert np.array_equal(vector, int8.embed_queries_soon([STRINGS[0]]).result())  # computed here: same vector
    assert tokenised_on[-1] == threading.current_thread().name
