"""Corrupt or foreign workspaces give a clear message and a way out, never a traceback: a truncated
SQLite file, a deleted ChromaDB folder (repair re-embeds), a workspace made with another embedder,
settings written by a newer version (or unusable settings)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT

ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
QUESTION = "Who founded the Tidewater Shipping Cooperative in Port Sallow?"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=900)


def assert_clean_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit code 2, one readable 'error: …' message on stderr, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, proc.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def registered_workspace(path: Path, n: int = 40) -> Path:
    """A workspace whose database holds ``n`` registered documents (no models needed)."""
    from core.indexing.pipeline import register_documents
    from core.types import SourceDocument
    from core.workspace import Workspace

    ws = Workspace(path)
    docs = [SourceDocument(name=f"doc-{i}.txt", text=f"Document {i} about Port Sallow. " * 200) for i in range(n)]
    with ws.writer():
        register_documents(ws, docs)
    ws.close()
    return path


# --------------------------------------------------------------------------- truncated / foreign database
@pytest.mark.parametrize("keep", [0.5, 0.02])
def test_a_truncated_database_raises_corrupt_workspace_error(tmp_path, keep):
    from core.errors import CorruptWorkspaceError
    from core.workspace import DB_FILE, Workspace

    path = registered_workspace(tmp_path / "ws")
    db = path / DB_FILE
    assert not db.with_name(DB_FILE + "-wal").exists() or db.with_name(DB_FILE + "-wal").stat().st_size == 0
    data = db.read_bytes()
    assert len(data) > 100_000
    db.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(CorruptWorkspaceError, match="damaged or not a RAGScope database") as info:
        Workspace(path)
    assert "re-index" in str(info.value) and str(db) in str(info.value)


@pytest.mark.slow
def test_the_cli_reports_a_damaged_database_without_a_traceback(tmp_path):
    from core.workspace import DB_FILE

    path = registered_workspace(tmp_path / "ws")
    db = path / DB_FILE
    db.write_bytes(db.read_bytes()[: db.stat().st_size // 3])
    for args in (["status", "--json"], ["docs"], ["index", str(ROOT / "data" / "samples" / "02-port-sallow.md")]):
        assert_clean_error(cli(*args, "--workspace", str(path)), "damaged or not a RAGScope database",
                           "Move the workspace folder aside and re-index")
    # a file that is not SQLite at all gets the same message
    other = tmp_path / "not-sqlite"
    other.mkdir()
    (other / DB_FILE).write_bytes(b"these bytes are not a database " * 100)
    assert_clean_error(cli("status", "--workspace", str(other)), "not a RAGScope database")
    # the way out: a new workspace works
    fresh = cli("status", "--workspace", str(tmp_path / "fresh"), "--json")
    assert fresh.returncode == 0 and json.loads(fresh.stdout)["documents"] == 0


# --------------------------------------------------------------------------- deleted Chroma folder
@pytest.mark.slow
def test_a_deleted_chroma_folder_is_rebuilt_by_repair(sample_workspace_dir, sample_ws, tmp_path):
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.workspace import Workspace

    path = tmp_path / "ws"
    shutil.copytree(sample_workspace_dir, path)
    shutil.rmtree(path / "chroma")
    expected = sample_ws.store.expected_vector_ids()
    proc = cli("repair", "--workspace", str(path), "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    repaired = json.loads(proc.stdout)["repaired"]
    assert repaired == {c: {"removed": 0, "added": len(ids)} for c, ids in expected.items() if ids}
    # queries work again and find what the untouched workspace finds
    ws = Workspace(path)
    try:
        from core.indexing.reconcile import reconcile

        assert reconcile(ws) == {}  # nothing left to repair
        got = run_modes(LOCAL_ADMIN, ws, QUESTION, ["naive"], with_answers=False)["naive"]
        want = run_modes(LOCAL_ADMIN, sample_ws, QUESTION, ["naive"], with_answers=False)["naive"]
        assert got.chunks and [c.chunk_id for c in got.chunks][:3] == [c.chunk_id for c in want.chunks][:3]
        assert set(c.chunk_id for c in got.chunks) == set(c.chunk_id for c in want.chunks)
        want_scores = {c.chunk_id: c.score for c in want.chunks}
        for chunk in got.chunks:
            assert chunk.score == pytest.approx(want_scores[chunk.chunk_id], abs=0.01)
    finally:
        ws.close()


@pytest.mark.slow
def test_a_no_op_index_run_restores_a_deleted_chroma_folder(sample_workspace_dir, sample_ws, tmp_path):
    from core.workspace import Workspace

    path = tmp_path / "ws"
    shutil.copytree(sample_workspace_dir, path)
    shutil.rmtree(path / "chroma")
    samples = Path(__file__).resolve().parent.parent / "data" / "samples"
    proc = cli("index", "--workspace", str(path), "--json", str(samples))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["processed"] == 0  # nothing new: only the vectors were rebuilt
    ws = Workspace(path)
    try:
        for collection, ids in sample_ws.store.expected_vector_ids().items():
            assert ws.vectors.all_ids(collection) == ids, collection
    finally:
        ws.close()


# --------------------------------------------------------------------------- another embedder
class TinyEmbedder:
    """A deterministic 8-d stand-in for another embedding model."""

    def __init__(self, name: str = "tiny-test-embedder", dim: int = 8) -> None:
        self.name, self.dim = name, dim

    def embed(self, texts):
        rows = []
        for text in texts:
            rng = np.random.default_rng(sum(text.encode("utf-8")) % 2**32)
            rows.append(rng.standard_normal(self.dim))
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)


@pytest.fixture()
def foreign_workspace(tmp_path) -> Path:
    """A workspace indexed with another (8-d) embedder."""
    from core.indexing.pipeline import process_pending, register_documents
    from core.types import SourceDocument
    from core.workspace import Workspace

    path = tmp_path / "ws"
    ws = Workspace(path, embedder=TinyEmbedder())
    with ws.writer():
        register_documents(ws, [SourceDocument("notes.txt", "Tobias Wren inspected the breakwater at Port Sallow.")])
        report = process_pending(ws)
    assert report.processed == 1
    assert ws.store.get_meta("embedder_name") == "tiny-test-embedder" and ws.store.get_meta("embedder_dim") == "8"
    ws.close()
    return path


def test_a_workspace_made_with_another_embedder_is_refused(foreign_workspace):
    from core.errors import EmbedderMismatchError
    from core.workspace import Workspace

    with pytest.raises(EmbedderMismatchError) as info:
        Workspace(foreign_workspace)  # default settings select MiniLM
    message = str(info.value)
    assert "tiny-test-embedder" in message and "all-MiniLM-L6-v2" in message
    assert "repair --reembed" in message
    assert "reset-vectors" not in message  # only commands that exist are suggested
    # same name but another dimension: refused before anything is written
    ws = Workspace(foreign_workspace, embedder=TinyEmbedder(dim=16))
    try:
        with pytest.raises(EmbedderMismatchError, match="holds 8-d vectors"):
            ws.record_embedder()
    finally:
        ws.close()
    # the way out: the original embedder still opens it
    ws = Workspace(foreign_workspace, embedder=TinyEmbedder())
    try:
        assert ws.status()["processed"] == 1
    finally:
        ws.close()


@pytest.mark.slow
def test_the_cli_reports_an_embedder_mismatch_without_a_traceback(foreign_workspace):
    line = assert_clean_error(cli("index", "--workspace", str(foreign_workspace),
                                  str(ROOT / "data" / "samples" / "02-port-sallow.md")),
                              "tiny-test-embedder", "all-MiniLM-L6-v2", "repair --reembed")
    assert "reset-vectors" not in line


# --------------------------------------------------------------------------- settings
NEWER = {"version": 99, "naive_top_k": 5, "a_setting_from_the_future": True}


@pytest.mark.parametrize("content, needle", [
    (json.dumps(NEWER), "written by a newer RAGScope (version 99, this one understands 1); upgrade RAGScope or "
                        "delete the file"),
    ("{not json", "is unreadable"),
    ("[1, 2, 3]", "does not hold a JSON object"),
    (json.dumps({"version": 1, "chunk_tokens": "lots", "path_alpha": 7}), "has invalid values (chunk_tokens: "),
])
def test_unusable_settings_raise_settings_error(tmp_path, content, needle):
    from core.errors import SettingsError
    from core.settings import SETTINGS_FILE
    from core.workspace import Workspace

    path = tmp_path / "ws"
    Workspace(path).close()
    (path / SETTINGS_FILE).write_text(content, encoding="utf-8")
    with pytest.raises(SettingsError) as info:
        Workspace(path)
    assert needle in str(info.value) and str(path / SETTINGS_FILE) in str(info.value)
    assert "delete" in str(info.value)
    # the way out: without the file, the defaults apply
    (path / SETTINGS_FILE).unlink()
    ws = Workspace(path)
    assert ws.settings.naive_top_k == 10
    ws.close()


def test_the_cli_reports_newer_settings_without_a_traceback(tmp_path):
    from core.settings import SETTINGS_FILE
    from core.workspace import Workspace

    path = tmp_path / "ws"
    Workspace(path).close()
    (path / SETTINGS_FILE).write_text(json.dumps(NEWER), encoding="utf-8")
    for args in (["status"], ["docs", "--json"]):
        assert_clean_error(cli(*args, "--workspace", str(path)), "newer RAGScope", "upgrade RAGScope or delete")
