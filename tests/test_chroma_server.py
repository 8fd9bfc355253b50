"""ChromaDB server mode against a real ``chroma run``: the sample corpus is indexed through the server
(CLI ``--chroma-url``), queried through it (``Settings.chroma_url`` and ``RAGSCOPE_CHROMA_URL``), and every
retrieval mode returns the same chunks and scores as the embedded store built from the same corpus."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES, require_or_skip, stop_process

pytestmark = pytest.mark.slow

ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
ENV.pop("RAGSCOPE_CHROMA_URL", None)
QUESTIONS = [
    "Who founded the Tidewater Shipping Cooperative and where is it based?",
    "How is the Velmora Marine Institute connected to the Hollow Bay tidal project?",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def heartbeat(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2) as response:
            return response.status == 200 and "heartbeat" in response.read().decode("utf-8")
    except OSError:
        return False


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    chroma = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    if not Path(chroma).exists():
        require_or_skip("chroma", "the chroma CLI (chromadb) is not installed (pip install -r requirements.txt)")
    data = tmp_path_factory.mktemp("chroma_server")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (data / "server.log").open("w")
    proc = subprocess.Popen([chroma, "run", "--path", str(data / "db"), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, env=ENV)
    try:
        deadline = time.time() + 120
        while not heartbeat(url):
            assert proc.poll() is None, (data / "server.log").read_text(errors="replace")[-3000:]
            assert time.time() < deadline, "chroma run did not answer its heartbeat within 120 s"
            time.sleep(0.25)
        yield {"url": url, "data": data / "db", "proc": proc}
    finally:
        stop_process(proc, timeout_s=30)
        log.close()
    assert not heartbeat(url), "the server is still answering after being stopped"


@pytest.fixture(scope="module")
def server_workspace(chroma_server, tmp_path_factory) -> Path:
    """The sample corpus indexed through the server with the CLI flag."""
    path = tmp_path_factory.mktemp("server_ws") / "ws"
    proc = subprocess.run([sys.executable, "-m", "core", "index", "--quiet", "--workspace", str(path),
                           "--chroma-url", chroma_server["url"], str(SAMPLES)], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return path


def open_server_ws(path: Path, url: str):
    from core.config import load_settings
    from core.workspace import Workspace

    return Workspace(path, settings=load_settings(path).with_overrides({"chroma_url": url}))


def test_the_vectors_live_on_the_server(chroma_server, server_workspace, sample_ws):
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    from core.storage.vectors import COLLECTIONS

    assert not (server_workspace / "chroma").exists(), "server mode must not create an embedded store"
    ws = open_server_ws(server_workspace, chroma_server["url"])
    try:
        namespace = ws.store.get_meta("namespace")
        expected = ws.store.expected_vector_ids()
        host, port = chroma_server["url"].rsplit(":", 1)
        client = chromadb.HttpClient(host=host.split("//")[1], port=int(port),
                                     settings=ChromaSettings(anonymized_telemetry=False))
        names = {c.name for c in client.list_collections()}
        assert {f"{namespace}_{c}" for c in COLLECTIONS} <= names
        for collection in COLLECTIONS:
            got = client.get_collection(f"{namespace}_{collection}").get(include=[])["ids"]
            assert set(got) == expected[collection] and expected[collection]
        # the same corpus gives the same rows as the embedded sample workspace
        assert {k: v for k, v in ws.status().items() if k in ("documents", "processed", "chunks", "entities",
                "relations", "mention_edges", "tree_nodes")} == \
               {k: v for k, v in sample_ws.status().items() if k in ("documents", "processed", "chunks", "entities",
                "relations", "mention_edges", "tree_nodes")}
        assert expected == sample_ws.store.expected_vector_ids()
    finally:
        ws.close()


def _ranked(result) -> list[tuple[str, float]]:
    return [(c.chunk_id, c.score) for c in result.chunks]


@pytest.mark.parametrize("question", QUESTIONS)
def test_every_mode_returns_the_same_results_as_the_embedded_store(chroma_server, server_workspace, sample_ws,
                                                                   question):
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN

    from core.retrieval.registry import modes as registered_modes

    modes = registered_modes()
    ws = open_server_ws(server_workspace, chroma_server["url"])
    try:
        served = run_modes(LOCAL_ADMIN, ws, question, modes, with_answers=False)
        embedded = run_modes(LOCAL_ADMIN, sample_ws, question, modes, with_answers=False)
    finally:
        ws.close()
    report = {}
    for mode in modes:
        got, want = _ranked(served[mode]), _ranked(embedded[mode])
        assert [c for c, _ in got] == [c for c, _ in want], mode
        for (_, a), (_, b) in zip(got, want):
            assert a == pytest.approx(b, abs=1e-3), mode
        assert [e.name for e in served[mode].entities] == [e.name for e in embedded[mode].entities], mode
        assert served[mode].evidence_chunk_ids == embedded[mode].evidence_chunk_ids, mode
        report[mode] = (len(got), max((abs(a - b) for (_, a), (_, b) in zip(got, want)), default=0.0))
    print(f"server vs embedded for {question!r}: " +
          ", ".join(f"{m}: {n} chunks, max |Δscore| {d:.2e}" for m, (n, d) in report.items()))
    assert served["naive"].chunks


def test_the_environment_variable_selects_the_server(chroma_server, server_workspace, sample_ws):
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN

    env = dict(ENV, RAGSCOPE_CHROMA_URL=chroma_server["url"])
    proc = subprocess.run([sys.executable, "-m", "core", "query", "--mode", "naive", "--json", "--workspace",
                           str(server_workspace), QUESTIONS[0]], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = [c["chunk_id"] for c in json.loads(proc.stdout)["chunks"]]
    want = [c.chunk_id for c in run_modes(LOCAL_ADMIN, sample_ws, QUESTIONS[0], ["naive"], with_answers=False)["naive"].chunks]
    assert got == want and got
    assert not (server_workspace / "chroma").exists()


def test_a_bad_or_unreachable_server_url_is_a_clear_error(server_workspace):
    from core.settings import Settings
    from core.workspace import Workspace

    with pytest.raises(ValueError, match=r"ChromaDB server URL: not a URL: give http\(s\)://host:port"):
        Settings(chroma_url="not-a-url")  # the settings validator refuses it before any store is opened
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    ws = Workspace(server_workspace, settings=Settings(chroma_url=url))
    try:
        with pytest.raises(ValueError, match=rf"no ChromaDB server answers at {url} .*chroma run --path DIR"):
            ws.vectors
    finally:
        ws.close()
