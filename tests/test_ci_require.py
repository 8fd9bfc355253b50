"""CI cannot stay green on a missing server: ``require_or_skip`` fails a test whose server
``RAGSCOPE_REQUIRE`` names (or ``all``), and ``scripts/test.sh`` stops red when any install step fails and
sets ``RAGSCOPE_REQUIRE=all`` when ``CI`` is set.

The ``test.sh`` tests run the real script in a scratch copy of the repository layout: the requirement
files are empty; the three installs that build a venv of their own (``install-embeddings.sh``,
``install-oidc.sh``, ``install-lightrag.sh``, with their shared ``scripts/venv-lib.sh``) are the real
scripts, each given a ready fake venv or, to break it, a venv path that cannot be created (its parent is
a regular file: how a broken install looks on a runner); every other install step that ``test.sh`` runs
(browser, LLM, …) is a stub that succeeds or fails on demand."""
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


VENV_SCRIPTS = {"install-embeddings.sh": "RAGSCOPE_INFINITY_VENV", "install-oidc.sh": "RAGSCOPE_OIDC_VENV",
                "install-lightrag.sh": "RAGSCOPE_LIGHTRAG_VENV"}  # the real ones, and where each puts its venv
INSTALL_STEPS = re.findall(r"^install bash scripts/(install-[a-z0-9-]+\.sh)",
                           (ROOT / "scripts" / "test.sh").read_text(), flags=re.M)
STUBBED = [n for n in INSTALL_STEPS if n not in VENV_SCRIPTS]


def _sandbox(tmp_path: Path, failing: str = "") -> Path:
    """A copy of the layout test.sh needs; the stubbed install script named ``failing`` exits 1."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    (root / "tests").mkdir()
    for name in ["test.sh", "venv-lib.sh", *VENV_SCRIPTS]:
        shutil.copy(ROOT / "scripts" / name, root / "scripts" / name)
    assert set(VENV_SCRIPTS) <= set(INSTALL_STEPS) and len(STUBBED) >= 2  # every other install step is stubbed
    for stub in STUBBED:
        status = 1 if stub == failing else 0
        (root / "scripts" / stub).write_text(f"#!/usr/bin/env bash\necho {stub} stub >&2\nexit {status}\n")
    (root / "requirements.txt").write_text("")
    (root / "requirements-test.txt").write_text("")
    (root / "tests" / "test_inner.py").write_text(INNER_TEST)
    return root


def _run(root: Path, tmp_path: Path, ci: str | None, broken: str = "", **extra: str) -> subprocess.CompletedProcess:
    """test.sh in the sandbox; every real venv script finds a ready venv but ``broken``, whose venv path
    cannot be created."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "RAGSCOPE_REQUIRE", "PYTEST_ADDOPTS")}
    env.update(MARKER=str(tmp_path / "marker"), **extra)
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the venv's parent folder should be")
    for script, variable in VENV_SCRIPTS.items():
        env[variable] = str(blocker / "venv" if script == broken else _ready_venv(tmp_path / script))
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(["bash", str(root / "scripts" / "test.sh"), "-q", "-p", "no:cacheprovider", "tests"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)


def _ready_venv(folder: Path) -> Path:
    """A fake venv that the readiness check of each real venv script accepts (its python says yes)."""
    venv = folder / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / ".ragscope-ready").touch()
    for program, text in (("infinity_emb", "#!/bin/sh\n"), ("oidc-provider-mock", "#!/bin/sh\n"),
                          ("python", "#!/bin/sh\nexit 0\n")):  # 'python -c "import …"' succeeds
        (venv / "bin" / program).write_text(text)
        (venv / "bin" / program).chmod(0o755)
    return venv


@pytest.mark.slow
@pytest.mark.parametrize("broken", sorted(VENV_SCRIPTS))
def test_broken_venv_install_makes_the_run_red(tmp_path, broken):
    root = _sandbox(tmp_path)
    result = _run(root, tmp_path, ci="true", broken=broken)
    assert result.returncode != 0, result.stderr
    assert f"install step failed: bash scripts/{broken}" in result.stderr
    assert not (tmp_path / "marker").exists(), "pytest ran although an install failed"


@pytest.mark.slow
@pytest.mark.parametrize("failing", STUBBED)
def test_any_failed_install_makes_the_run_red(tmp_path, failing):
    root = _sandbox(tmp_path, failing=failing)
    result = _run(root, tmp_path, ci=None)
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
    result = _run(root, tmp_path, ci=ci, **extra)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "marker").read_text() == expected


# --- the real LLM install script, broken from outside ---------------------------------------------
# ``scripts/install-llm.sh`` runs its python as ``$PYTHON`` (default ``python``). Pointing PYTHON at a
# program that fails every call makes the real script fail the way a runner without a compiler or without
# the package index does: its import checks fail, then its pip install fails. Nothing is installed and no
# real venv is touched; the steps before it (requirements, browser) are the empty files and stubs above.
SWALLOWING_INSTALL = 'install() {\n  "$@" || echo "test.sh: install step failed: $* (ignored)" >&2\n}\n'


def _broken_python(tmp_path: Path) -> Path:
    fake = tmp_path / "bin" / "broken-python"
    fake.parent.mkdir(parents=True, exist_ok=True)
    fake.write_text("#!/bin/sh\necho \"broken-python: $*: no such module\" >&2\nexit 1\n")
    fake.chmod(0o755)
    return fake


def _sandbox_with_real_llm_install(tmp_path: Path, test_sh: str | None = None) -> Path:
    root = _sandbox(tmp_path)
    shutil.copy(ROOT / "scripts" / "install-llm.sh", root / "scripts" / "install-llm.sh")
    if test_sh is not None:
        (root / "scripts" / "test.sh").write_text(test_sh)
    return root


def test_the_real_llm_install_failing_makes_the_run_red(tmp_path):
    root = _sandbox_with_real_llm_install(tmp_path)
    result = _run(root, tmp_path, ci=None, PYTHON=str(_broken_python(tmp_path)))
    assert result.returncode != 0, result.stderr
    assert "install-llm: building llama-cpp-python" in result.stderr  # the real script ran and tried pip
    assert "test.sh: install step failed: bash scripts/install-llm.sh" in result.stderr
    assert "installs done" not in result.stderr
    assert not (tmp_path / "marker").exists(), "pytest ran although the LLM install failed"


@pytest.mark.slow
def test_the_check_above_catches_an_install_step_that_swallows_failures(tmp_path):
    """The same broken LLM install under a test.sh whose ``install()`` only prints the failure (what
    ``|| echo`` did before): the run goes on to pytest and exits 0, so every assertion of the test above
    would fail on it."""
    real = (ROOT / "scripts" / "test.sh").read_text()
    swallowing, count = re.subn(r"^install\(\) \{\n.*?^\}\n", SWALLOWING_INSTALL, real, flags=re.M | re.S)
    assert count == 1, "test.sh no longer defines install() the way this test rewrites it"
    root = _sandbox_with_real_llm_install(tmp_path, swallowing)
    result = _run(root, tmp_path, ci=None, PYTHON=str(_broken_python(tmp_path)))
    assert result.returncode == 0, result.stderr
    assert "install-llm: building llama-cpp-python" in result.stderr
    assert (tmp_path / "marker").exists()
