"""The remote embedder against a small fake OpenAI-compatible embeddings server (no model, fast).

The fake server answers ``POST /embeddings`` with deterministic vectors (seeded by each text), counts
requests in flight, and follows a fault plan (429, 500, 404, 401, wrong dimension, refusing everything).
Checks: batching and several requests in flight; retries with backoff on 429/5xx, bounded; errors that
name the URL; precedence flag > environment > settings; indexing through the server with and without the
extraction/embedding overlap gives the same workspace; a server that fails mid-index leaves the
documents pending (none failed) and a second run completes them. The real Infinity server is exercised
in ``test_embedding_server.py``.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import ThreadingHTTPServer

import numpy as np
import pytest

from conftest import SAMPLES
from fake_openai import JsonHandler

DIM = 8


def fake_vector(text: str, dim: int = DIM) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng(seed).normal(size=dim).astype(np.float32).tolist()


class FakeEmbeddingServer:
    """``/embeddings`` and ``/models`` on 127.0.0.1; ``plan`` = faults for the next requests,
    ``always`` = a fault for every request; ``delay_s`` = time each request takes."""

    def __init__(self, model: str = "fake-model", dim: int = DIM, delay_s: float = 0.0) -> None:
        self.model, self.dim, self.delay_s = model, dim, delay_s
        self.plan: list[str] = []
        self.always: str | None = None
        self.requests = 0
        self.batch_sizes: list[int] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(JsonHandler):

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if self.path.rstrip("/") != "/embeddings":
                    self._send(404, {"detail": "Not Found"})
                    return
                with server.lock:
                    server.requests += 1
                    fault = server.plan.pop(0) if server.plan else server.always
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    time.sleep(server.delay_s)
                    self._answer(fault, body)
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _answer(self, fault: str | None, body: dict) -> None:
                if fault == "429":
                    self._send(429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})
                elif fault == "500":
                    self._send(500, {"error": {"message": "internal error"}})
                elif fault == "401":
                    self._send(401, {"error": {"message": "invalid api key"}})
                elif fault == "404model":
                    self._send(404, {"error": {"message": "The model `x` does not exist"}})
                else:
                    texts = body["input"]
                    dim = server.dim + 1 if fault == "wrongdim" else server.dim
                    server.batch_sizes.append(len(texts))
                    data = [{"object": "embedding", "index": i, "embedding": fake_vector(t, dim)}
                            for i, t in enumerate(texts)]
                    self._send(200, {"object": "list", "model": server.model, "data": data,
                                     "usage": {"prompt_tokens": 1, "total_tokens": 1}})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def server():
    fake = FakeEmbeddingServer()
    yield fake
    fake.stop()


def embedder(server: FakeEmbeddingServer, **options):
    from core.remote_embeddings import RemoteEmbedder

    options = {"backoff_base": 0.01, "backoff_max": 0.05} | options
    return RemoteEmbedder(server.url, server.model, **options)


def test_batches_run_concurrently_and_keep_their_order(server):
    server.delay_s = 0.05
    remote = embedder(server, batch_size=4, concurrency=3)
    texts = [f"text number {i}" for i in range(22)]
    vectors = remote.embed(texts)
    want = np.array([fake_vector(t) for t in texts], dtype=np.float32)
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    assert vectors.shape == (22, DIM) and np.allclose(vectors, want, atol=1e-6)
    assert sorted(server.batch_sizes[1:]) == sorted([4] * 5 + [2])  # after the dimension probe
    assert server.max_in_flight == 3, "three requests should be in flight at once"
    cost = remote.stats.snapshot()
    assert cost["requests"] == 7 and cost["texts"] == 23 and cost["retries"] == 0
    assert cost["request_bytes"] > 0 and cost["response_bytes"] > cost["request_bytes"]
    assert cost["wait_s"] > 0 and len(remote.stats.spans) == 7
    assert remote.embed([]).shape == (0, DIM)


def test_transient_faults_are_retried_and_counted(server):
    remote = embedder(server, batch_size=10)
    server.plan = ["429", "500", "pass"]
    vectors = remote.embed(["a", "b"])
    assert vectors.shape == (2, DIM)
    assert remote.stats.retries == 2 and server.requests == 4  # probe + 3 attempts


def test_a_server_that_keeps_failing_is_unavailable_and_named(server):
    from core.remote_embeddings import EmbeddingUnavailableError
    from core.types import ServiceUnavailable

    remote = embedder(server, max_retries=2)
    server.always = "500"
    before = server.requests
    with pytest.raises(EmbeddingUnavailableError, match=rf"embeddings server at {server.url} failed 3 time\(s\)"
                       r".*HTTP 500.*stay pending") as caught:
        remote.embed(["a"])
    assert isinstance(caught.value, ServiceUnavailable)
    assert server.requests - before == 3, "retries are bounded"


def test_configuration_errors_fail_at_once_naming_the_fix(server):
    from core.remote_embeddings import EmbeddingConfigError, EmbeddingUnavailableError, RemoteEmbedder

    for fault, message in [("401", "refused the API key"), ("404model", "has no model 'fake-model'")]:
        server.plan = [fault]
        before = server.requests
        with pytest.raises(EmbeddingConfigError, match=message):
            embedder(server)
        assert server.requests - before == 1
    with pytest.raises(EmbeddingConfigError, match=r"has no /embeddings endpoint \(HTTP 404\).*serves at the root"):
        RemoteEmbedder(server.url + "/nowhere", "fake-model")
    with pytest.raises(EmbeddingConfigError, match=rf"{server.url} returns 8-d vectors .* but 384-d vectors were "
                                                   r"expected.*repair --reembed"):
        embedder(server, expected_dim=384)
    remote = embedder(server)
    server.plan = ["wrongdim"]
    with pytest.raises(EmbeddingConfigError, match="switched from 8-d to 9-d vectors"):
        remote.embed(["x"])
    stopped = FakeEmbeddingServer()
    url = stopped.url
    stopped.stop()
    with pytest.raises(EmbeddingUnavailableError, match=rf"{url} failed 2 time\(s\).*could not reach {url}"):
        RemoteEmbedder(url, "m", max_retries=1, backoff_base=0.01)


def test_flags_win_over_environment_over_settings(tmp_path, monkeypatch):
    from core.cli.base import cli_settings
    from core.cli.main import build_parser
    from core.settings import Settings, save_settings

    path = tmp_path / "ws"
    path.mkdir()
    save_settings(path, Settings(embedder="openai", embedding_base_url="http://settings:1", embedding_model="s"))
    args = lambda *extra: build_parser().parse_args(["status", "--workspace", str(path), *extra])  # noqa: E731
    for name in ("RAGSCOPE_EMBEDDING_BASE_URL", "RAGSCOPE_EMBEDDING_MODEL"):
        monkeypatch.delenv(name, raising=False)
    assert (cli_settings(args()).embedding_base_url, cli_settings(args()).embedding_model) == ("http://settings:1", "s")
    monkeypatch.setenv("RAGSCOPE_EMBEDDING_BASE_URL", "http://env:2")
    assert cli_settings(args()).embedding_base_url == "http://env:2" and cli_settings(args()).embedding_model == "s"
    query = build_parser().parse_args(["query", "--workspace", str(path), "--embedding-base-url", "http://flag:3",
                                       "--embedding-model", "f", "q"])
    chosen = cli_settings(query)
    assert (chosen.embedder, chosen.embedding_base_url, chosen.embedding_model) == ("openai", "http://flag:3", "f")
    for command in ("index", "retry", "repair", "query", "compare", "eval"):
        extra = {"index": ["x"], "query": ["q"], "compare": ["q"], "eval": ["--questions", "q"]}.get(command, [])
        parsed = build_parser().parse_args([command, "--embedding-base-url", "u", "--embedding-model", "m", *extra])
        assert (parsed.embedding_base_url, parsed.embedding_model) == ("u", "m"), command
    save_settings(path, Settings())
    monkeypatch.delenv("RAGSCOPE_EMBEDDING_BASE_URL")
    with pytest.raises(ValueError, match="no model is named: pass --embedding-model"):
        cli_settings(build_parser().parse_args(["query", "--workspace", str(path), "--embedding-base-url", "u", "q"]))


def remote_settings(server: FakeEmbeddingServer, **extra):
    from core.settings import Settings

    return Settings(embedder="openai", embedding_base_url=server.url, embedding_model=server.model,
                    embedding_batch_size=8, embedding_max_retries=1, **extra)


def index_samples(path, settings, **options):
    from core.loaders import load_path
    from core.indexing.pipeline import process_pending, register_documents
    from core.workspace import Workspace

    ws = Workspace(path, settings=settings)
    sources, _ = load_path(SAMPLES)
    with ws.writer():
        register_documents(ws, sources)
        report = process_pending(ws, batch_tokens=2500, **options)
    return ws, report


def sources_of_samples() -> list:
    """The sample articles as loaded documents (eleven)."""
    from core.loaders import load_path

    return load_path(SAMPLES)[0]


def snapshot(ws) -> tuple:
    ids = ws.store.expected_vector_ids()
    vectors = {c: ws.vectors.get_vectors(c, sorted(ids[c])) for c in ids}
    rows = {k: v for k, v in ws.status().items() if k in ("processed", "chunks", "entities", "relations",
                                                              "mention_edges", "tree_nodes")}
    return ids, vectors, rows


def test_overlapped_indexing_gives_the_same_workspace(server, tmp_path):
    server.delay_s = 0.01
    overlapped, report = index_samples(tmp_path / "a", remote_settings(server))  # remote: overlap by default
    sequential, _ = index_samples(tmp_path / "b", remote_settings(server), overlap=False)
    try:
        assert report.processed == len(sources_of_samples()) and not report.failed
        ids_a, vec_a, rows_a = snapshot(overlapped)
        ids_b, vec_b, rows_b = snapshot(sequential)
        assert ids_a == ids_b and rows_a == rows_b and all(ids_a.values())
        for collection, vectors in vec_a.items():
            assert all(np.allclose(vectors[i], vec_b[collection][i], atol=1e-6) for i in vectors), collection
        info = overlapped.status()["embedder"]
        assert info == {"kind": "openai", "model": server.model, "dimension": DIM, "base_url": server.url}
        assert server.max_in_flight > 1
    finally:
        overlapped.close()
        sequential.close()


def test_a_server_failing_mid_index_leaves_documents_pending(server, tmp_path):
    from core.remote_embeddings import EmbeddingUnavailableError

    settings = remote_settings(server)

    def progress(event) -> None:  # the server "dies" once the first batch is committed
        if event.step == "index" and event.done:
            server.always = "500"

    with pytest.raises(EmbeddingUnavailableError, match=server.url):
        index_samples(tmp_path / "ws", settings, progress=progress)
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "ws", settings=settings)
    try:
        status = ws.status()
        assert status["failed"] == 0 and status["pending"] > 0, status
        assert status["processed"] > 0 and status["pending"] + status["processed"] == len(sources_of_samples())
    finally:
        ws.close()
    server.always = None  # the server is back: the same call resumes
    ws, report = index_samples(tmp_path / "ws", settings)
    try:
        assert not report.failed and ws.status()["processed"] == len(sources_of_samples()) and ws.status()["pending"] == 0
        ids = ws.store.expected_vector_ids()
        assert all(ws.vectors.all_ids(c) == ids[c] for c in ids)
    finally:
        ws.close()


def test_another_embedder_is_refused_with_how_to_reembed(server, tmp_path):
    from core.errors import EmbedderMismatchError
    from core.settings import Settings
    from core.workspace import Workspace

    ws, _ = index_samples(tmp_path / "ws", remote_settings(server))
    ws.close()
    with pytest.raises(EmbedderMismatchError, match=r"indexed with the embedder 'openai:fake-model'.*"
                                                    r"--embedding-model fake-model.*repair --reembed"):
        Workspace(tmp_path / "ws", settings=Settings())


def test_reembed_switches_embedders_and_resumes_after_a_failure(server, tmp_path):
    from core.indexing.reembed import reembed
    from core.remote_embeddings import EmbeddingUnavailableError
    from core.workspace import Workspace

    ws, _ = index_samples(tmp_path / "ws", remote_settings(server))
    before_ids, before_vectors, _ = snapshot(ws)
    old_namespace = ws.store.get_meta("namespace")
    ws.close()
    other = remote_settings(server).with_overrides({"embedding_model": "other-model"})
    server.plan = ["pass"] * 6
    server.always = "500"  # the server fails part-way: the workspace stays on its embedder and vectors
    with pytest.raises(EmbeddingUnavailableError):
        reembed(tmp_path / "ws", other)
    ws = Workspace(tmp_path / "ws", settings=remote_settings(server))
    assert ws.store.get_meta("namespace") == old_namespace and ws.store.get_meta("reembed_namespace")
    ws.close()
    server.always = None
    done = reembed(tmp_path / "ws", other)
    assert done["from"] == "openai:fake-model" and done["to"] == "openai:other-model" and done["dimension"] == DIM
    ws = Workspace(tmp_path / "ws", settings=other)
    try:
        ids, vectors, _ = snapshot(ws)
        assert ids == before_ids and ws.store.get_meta("namespace") != old_namespace
        assert not ws.store.get_meta("reembed_namespace")
        # the fake server's vectors depend on the text only: re-embedding must embed the texts indexing embedded
        for collection, got in vectors.items():
            assert all(np.allclose(got[i], before_vectors[collection][i], atol=1e-6) for i in got), collection
        names = {c.name for c in ws.vectors.client.list_collections()}
        assert not any(n.startswith(old_namespace) for n in names), "the old collections are dropped"
    finally:
        ws.close()


def test_the_settings_page_tests_the_embeddings_server(server, tmp_path, monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(tmp_path))
    for name in ("RAGSCOPE_WORKSPACE", "RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "RAGSCOPE_EMBEDDING_BASE_URL",
                 "RAGSCOPE_EMBEDDING_MODEL"):
        monkeypatch.delenv(name, raising=False)
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=300)
    at.run()
    at.switch_page("pages/settings.py")
    at.run()
    assert not at.exception
    at.selectbox(key="set::default::embedder").set_value("openai")
    at.text_input(key="set::default::embedding_base_url").input(server.url)
    at.text_input(key="set::default::embedding_model").input(server.model)
    at.button(key="settings_test").click().run()
    assert not at.exception
    # the page escapes Markdown (backslashes, and a word joiner after "http" against GFM autolinks)
    shown = [s.value.replace("\\", "").replace("\u2060", "") for s in at.success]
    assert any(f"connected to {server.url}" in s and "8-d vectors" in s for s in shown), shown
    server.always = "500"
    at.number_input(key="set::default::embedding_max_retries").set_value(0)
    at.button(key="settings_test").click().run()
    errors = [e.value.replace("\\", "").replace("\u2060", "") for e in at.error]
    assert any("Embeddings:" in e and "HTTP 500" in e and server.url in e for e in errors), errors
