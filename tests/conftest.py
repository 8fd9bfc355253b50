"""Shared fixtures: offline environment, a sample workspace indexed once per test session."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data" / "samples"
SHARED_DATA = ROOT.parent / "shared" / "data"


def shared_dataset(name: str) -> Path:
    """Path of a shared dataset folder; skips the test when it is absent."""
    path = SHARED_DATA / name
    if not (path / "corpus.jsonl").exists():
        pytest.skip(f"shared dataset {name} not available at {path}")
    return path


@pytest.fixture(scope="session")
def sample_workspace_dir(tmp_path_factory) -> Path:
    """A workspace with the built-in sample corpus, indexed once (offline)."""
    from core.loaders import load_path
    from core.pipeline import process_pending, register_documents
    from core.workspace import Workspace

    path = tmp_path_factory.mktemp("sample_ws") / "ws"
    ws = Workspace(path)
    sources, failures = load_path(SAMPLES)
    assert not failures, failures
    with ws.writer():
        register_documents(ws, sources, failures)
        report = process_pending(ws)
    assert report.processed == len(sources) and not report.failed
    ws.close()
    return path


@pytest.fixture()
def sample_ws(sample_workspace_dir):
    """A fresh handle on the shared sample workspace (read-only use)."""
    from core.workspace import Workspace

    ws = Workspace(sample_workspace_dir)
    yield ws
    ws.close()


@pytest.fixture()
def sample_ws_copy(sample_workspace_dir, tmp_path):
    """A private copy of the sample workspace that a test may modify."""
    from core.workspace import Workspace

    target = tmp_path / "ws"
    shutil.copytree(sample_workspace_dir, target)
    ws = Workspace(target)
    yield ws
    ws.close()
