"""The read-only commands (status, docs, export, graph-quality, annotations list) open a workspace
without loading a model: no torch, spaCy, sentence-transformers or ChromaDB is imported (checked in a
fresh interpreter, since the test process itself has them loaded), and they never need the embedder
configured: a workspace indexed through an embeddings server that is no longer running, opened with
that server named in its settings or with no embedder configured at all, still answers."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from test_remote_embedder import FakeEmbeddingServer, index_samples, remote_settings

HEAVY = ("torch", "spacy", "sentence_transformers", "chromadb", "transformers", "thinc")

# Runs one CLI command in this interpreter, then reports which heavy modules it imported.
PROBE = """
import contextlib, io, json, sys
from core.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
heavy = [m for m in {heavy!r} if m in sys.modules]
print(json.dumps({{"code": code, "stdout": out.getvalue(), "heavy": heavy}}))
""".format(heavy=HEAVY)


def run_cli(*argv: str, env_extra: dict | None = None) -> dict:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGSCOPE_EMBEDDING")}
    env |= {"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"} | (env_extra or {})
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]) | {"stderr": done.stderr}


@pytest.fixture(scope="module")
def remote_workspace(tmp_path_factory) -> tuple[Path, str]:
    """The sample corpus indexed through a fake embeddings server, which is then stopped; returns the
    folder and the (now dead) server's URL."""
    server = FakeEmbeddingServer()
    path = tmp_path_factory.mktemp("readonly") / "ws"
    try:
        ws, report = index_samples(path, remote_settings(server))
        assert report.processed and not report.failed
        ws.close()
    finally:
        server.stop()
    return path, server.url


def save_embedder_settings(path: Path, url: str | None) -> None:
    from core.settings import Settings, save_settings

    settings = Settings(embedder="openai", embedding_base_url=url, embedding_model="fake-model") if url else Settings()
    save_settings(path, settings)


@pytest.mark.parametrize("configured", [True, False], ids=["server-named-but-down", "no-embedder-configured"])
def test_status_loads_no_model_and_needs_no_embedder(remote_workspace, configured):
    path, url = remote_workspace
    save_embedder_settings(path, url if configured else None)
    result = run_cli("status", "--json", "--workspace", str(path))
    assert result["code"] == 0 and result["heavy"] == [], result
    status = json.loads(result["stdout"])
    assert status["documents"] == 11 and status["processed"] == 11 and status["chunks"] > 0
    assert status["entities"] > 0 and status["relations"] > 0 and status["tree_nodes"] > 0
    assert status["embedder"]["kind"] == "openai" and status["embedder"]["model"] == "fake-model"
    assert status["embedder"]["dimension"] == 8


def test_every_read_only_command_loads_no_model(remote_workspace, tmp_path):
    path, _url = remote_workspace
    save_embedder_settings(path, None)  # the workspace's own embedder is not configured at all
    docs = run_cli("docs", "--json", "--workspace", str(path))
    assert docs["heavy"] == [] and len(json.loads(docs["stdout"])) == 11
    out = tmp_path / "graph.json"
    exported = run_cli("export", "--workspace", str(path), "--format", "json", str(out))
    assert exported["heavy"] == [] and out.exists()
    graph = json.loads(out.read_text(encoding="utf-8"))["knowledge_graph"]
    assert graph["nodes"] and graph["edges"]
    quality = run_cli("graph-quality", "--json", "--workspace", str(path))
    assert quality["heavy"] == [] and json.loads(quality["stdout"])
    listed = run_cli("annotations", "list", "--json", "--workspace", str(path))
    assert listed["heavy"] == [] and json.loads(listed["stdout"]) == []


def test_a_command_that_embeds_still_checks_the_embedder(remote_workspace):
    """Only the read-only commands skip the check: a query on that workspace without its embedder is
    refused with the mismatch message (nothing is mixed)."""
    import os

    path, _url = remote_workspace
    save_embedder_settings(path, None)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGSCOPE_EMBEDDING")} | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "core", "query", "--workspace", str(path), "--offline",
                           "Where is Port Sallow?"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 2 and "indexed with the embedder 'openai:fake-model'" in done.stderr
