"""CI cannot stay green on a missing server: ``require_or_skip`` fails a test whose server
``RAGSCOPE_REQUIRE`` names (or ``all``), and ``scripts/test.sh`` stops red when any install step fails and
sets ``RAGSCOPE_REQUIRE=all`` when ``CI`` is set.

The ``test.sh`` tests run the real script in a scratch copy of the repository layout: the requirement
files are empty, every other install script that ``test.sh`` runs (browser, LLM, OIDC, LightRAG, …) is a stub that succeed or fail on demand, and the
embeddings install is the real ``scripts/install-embeddings.sh`` pointed at a venv path that cannot be
created (its parent is a regular file), which is how a broken install looks on a runner."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, require_or_skip, required_servers

INNER_TEST = '''
import os
from pathlib import Path

def test_records_environment():
    Path(os.environ["MARKER"]).write_text(os.environ.get("RAGSCOPE_REQUIRE", "<unset>"))
'''


@pytest.mark.parametrize("value,name", [("llm", "llm"), ("all", "browser"), ("browser, LLM", "llm"),
                                        ("ALL", "postgres"), ("chroma,embeddings", "embeddings")])
def test_named_server_fails(monkeypatch, value, name):
    monkeypatch.setenv("RAGSCOPE_REQUIRE", value)
    with pytest.raises(pytest.fail.Exception, match="not installed here"):
        require_or_skip(name, "the thing is not installed here")


@pytest.mark.parametrize("value", [None, "", "browser", "llm-extra,chromadb", " , "])
def test_unnamed_server_skips(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("RAGSCOPE_REQUIRE", raising=False)
    else:
        monkeypatch.setenv("RAGSCOPE_REQUIRE", value)
    with pytest.raises(pytest.skip.Exception, match="not installed here"):
        require_or_skip("llm", "the thing is not installed here")


def test_required_servers_parses_the_list(monkeypatch):
    monkeypatch.setenv("RAGSCOPE_REQUIRE", " LLM, browser ,,chroma ")
    assert required_servers() == {"llm", "browser", "chroma"}


def _sandbox(tmp_path: Path, failing: str = "") -> Path:
    """A copy of the layout test.sh needs; the install script named ``failing`` exits 1."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    (root / "tests").mkdir()
    shutil.copy(ROOT / "scripts" / "test.sh", root / "scripts" / "test.sh")
    shutil.copy(ROOT / "scripts" / "install-embeddings.sh", root / "scripts" / "install-embeddings.sh")
    named = re.findall(r"^install bash scripts/(install-[a-z0-9-]+\.sh)", (ROOT / "scripts" / "test.sh").read_text(),
                       flags=re.M)
    assert "install-embeddings.sh" in named and len(named) >= 3  # every install step is stubbed but this one
    for stub in [n for n in named if n != "install-embeddings.sh"]:
        status = 1 if stub == failing else 0
        (root / "scripts" / stub).write_text(f"#!/usr/bin/env bash\necho {stub} stub >&2\nexit {status}\n")
    (root / "requirements.txt").write_text("")
    (root / "requirements-test.txt").write_text("")
    (root / "tests" / "test_inner.py").write_text(INNER_TEST)
    return root


def _run(root: Path, tmp_path: Path, ci: str | None, venv: Path, **extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "RAGSCOPE_REQUIRE", "PYTEST_ADDOPTS")}
    env.update(MARKER=str(tmp_path / "marker"), RAGSCOPE_INFINITY_VENV=str(venv), **extra)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(["bash", str(root / "scripts" / "test.sh"), "-q", "-p", "no:cacheprovider", "tests"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)


def _ready_venv(tmp_path: Path) -> Path:
    """A fake Infinity venv that install-embeddings.sh's readiness check accepts (its python is ours)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / ".ragscope-ready").touch()
    (venv / "bin" / "infinity_emb").write_text("#!/bin/sh\n")
    (venv / "bin" / "infinity_emb").chmod(0o755)
    fake_python = venv / "bin" / "python"
    fake_python.write_text("#!/bin/sh\nexit 0\n")  # 'import infinity_emb, torch, ...' succeeds
    fake_python.chmod(0o755)
    return venv


@pytest.mark.slow
def test_broken_embeddings_install_makes_the_run_red(tmp_path):
    root = _sandbox(tmp_path)
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the venv's parent folder should be")
    result = _run(root, tmp_path, ci="true", venv=blocker / "infinity-venv")
    assert result.returncode != 0, result.stderr
    assert "install step failed: bash scripts/install-embeddings.sh" in result.stderr
    assert not (tmp_path / "marker").exists(), "pytest ran although an install failed"


@pytest.mark.slow
@pytest.mark.parametrize("failing", ["install-browser.sh", "install-llm.sh"])
def test_any_failed_install_makes_the_run_red(tmp_path, failing):
    root = _sandbox(tmp_path, failing=failing)
    result = _run(root, tmp_path, ci=None, venv=_ready_venv(tmp_path))
    assert result.returncode != 0
    assert f"install step failed: bash scripts/{failing}" in result.stderr
    assert not (tmp_path / "marker").exists()


@pytest.mark.slow
@pytest.mark.parametrize("ci,preset,expected", [("true", None, "all"), ("1", None, "all"),
                                                ("true", "llm", "llm"), (None, None, "<unset>"),
                                                ("false", None, "<unset>"), (None, "browser", "browser")])
def test_ci_requires_every_server(tmp_path, ci, preset, expected):
    root = _sandbox(tmp_path)
    extra = {"RAGSCOPE_REQUIRE": preset} if preset is not None else {}
    result = _run(root, tmp_path, ci=ci, venv=_ready_venv(tmp_path), **extra)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "marker").read_text() == expected
