"""Shared start-up of the browser tests: ``streamlit run app.py`` on a free 127.0.0.1 port and headless
Debian Chromium through Playwright.

* ``require_browser()`` skips (or fails, when ``RAGSCOPE_REQUIRE`` names ``browser`` or ``all``) when
  /usr/bin/chromium or Playwright is missing (Chromium comes from ``scripts/install-browser.sh``,
  never ``playwright install``);
* ``streamlit_app(data, log_dir, ...)`` serves the app with ``RAGSCOPE_DATA_DIR=data`` and an offline
  environment, waits for ``/_stcore/health``, yields its URL and stops it (optionally failing on a
  ``Traceback`` in its log); ``launcher`` replaces ``python -m streamlit`` (e.g. a script that installs
  a test hook in the server process first);
* ``served(command, ready_url, log)`` runs any server until its URL answers and stops it afterwards;
* ``chromium()`` launches the browser; ``idle`` / ``open_page`` wait for the app as the tests do;
  ``upload_and_index`` indexes files through Documents; ``run_sample_evaluation`` runs the Evaluate
  page on the first sample questions.
"""
from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence

import pytest

from conftest import require_or_skip

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(os.environ.get("RAGSCOPE_SCREENSHOT_DIR") or ROOT / "test-artifacts")
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
               "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
# variables of the developer's shell that would change what the app under test does
DROPPED_ENV = ("RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "RAGSCOPE_ROLES", "RAGSCOPE_WORKSPACE")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def require_browser() -> None:
    """Skip (or fail under RAGSCOPE_REQUIRE) without Debian Chromium or Playwright."""
    if not CHROMIUM.exists():
        require_or_skip("browser", "Debian chromium is not installed: run scripts/install-browser.sh (as root)")
    if importlib.util.find_spec("playwright") is None:
        require_or_skip("browser", "playwright is not installed (pip install -r requirements-test.txt)")


def wait_http(url: str, proc: subprocess.Popen, log: Path, timeout_s: float = 120) -> None:
    """Wait until ``url`` answers (fail when ``proc`` exits first or the time runs out)."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{url}: the server exited:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"{url} did not answer in {timeout_s} s:\n{log.read_text(errors='replace')[-3000:]}")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def app_env(data: Path, extra: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """The app's environment: this process's, offline, ``RAGSCOPE_DATA_DIR=data``, without the
    developer's LLM / roles / workspace variables, plus ``extra``."""
    env = dict(os.environ, RAGSCOPE_DATA_DIR=str(data), **OFFLINE_ENV)
    for name in DROPPED_ENV:
        env.pop(name, None)
    env.update(extra or {})
    return env


@contextmanager
def served(command: Sequence[str], ready_url: str, log: Path, cwd: Optional[Path] = None,
           env: Optional[Mapping[str, str]] = None) -> Iterator[subprocess.Popen]:
    """Run ``command`` (output to ``log``) until the block ends; entered once ``ready_url`` answers."""
    with open(log, "w") as out:
        proc = subprocess.Popen(list(command), cwd=cwd, env=None if env is None else dict(env), stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        wait_http(ready_url, proc, log)
        yield proc
    finally:
        stop(proc)


@contextmanager
def streamlit_app(data: Path, log_dir: Path, env: Optional[Mapping[str, str]] = None, args: Sequence[str] = (),
                  launcher: Optional[Sequence[str]] = None, fail_on_traceback: bool = True,
                  port: Optional[int] = None) -> Iterator[str]:
    """Serve ``app.py`` over ``data``; yields the app's URL. ``env``: variables added to ``app_env``;
    ``args``: more ``streamlit run`` options; ``launcher``: the command before ``run app.py``
    (default ``python -m streamlit``); ``port``: default a free one (pass one when the app's secrets
    must name it before it starts). The log is ``log_dir/streamlit.log``."""
    port = port or free_port()
    log = log_dir / "streamlit.log"
    command = [*(launcher or [sys.executable, "-m", "streamlit"]), "run", "app.py", "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.headless", "true", *args]
    url = f"http://127.0.0.1:{port}"
    with served(command, url + "/_stcore/health", log, cwd=ROOT, env=app_env(data, env)):
        yield url
    if fail_on_traceback:
        tail = log.read_text(errors="replace")[-4000:]
        assert "Traceback" not in tail, tail


@contextmanager
def chromium() -> Iterator[Any]:
    """Headless Debian Chromium (a Playwright ``Browser``); the screenshot folder is created."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def idle(tab: Any, timeout_ms: int = 300_000) -> None:
    """Wait until the app is not running a script (no 'Running…' status widget)."""
    tab.wait_for_timeout(300)
    tab.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_ms)


def open_page(tab: Any, title: str, heading: str) -> None:
    """Click ``title`` in the sidebar navigation (the session lives on) and wait for ``heading``."""
    tab.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True).click()
    tab.get_by_role("heading", name=heading).first.wait_for(timeout=120_000)
    tab.wait_for_timeout(300)


def run_sample_evaluation(tab: Any, questions: int, timeout_ms: int) -> None:
    """Open Evaluate, run the first ``questions`` sample questions in every mode and wait for the tables."""
    open_page(tab, "Evaluate", "Evaluate")
    limit = tab.get_by_label("Questions to run (0 = all)")
    limit.fill(str(questions))
    limit.press("Enter")
    idle(tab)
    tab.get_by_role("button", name="Run evaluation").click()
    tab.get_by_text("Per question: where each mode ranked the gold documents").wait_for(timeout=timeout_ms)
    idle(tab)


def upload_and_index(tab: Any, files: Sequence[Path], timeout_ms: int) -> None:
    """On Documents: upload ``files``, press "Index uploaded files" and wait until they are indexed."""
    open_page(tab, "Documents", "Documents")
    tab.locator('[data-testid="stFileUploader"] input[type="file"][multiple]').set_input_files([str(f) for f in files])
    tab.wait_for_function("() => [...document.querySelectorAll('button')].some(b => "
                          "b.innerText.includes('Index uploaded files') && !b.disabled)", timeout=60_000)
    tab.get_by_role("button", name="Index uploaded files").click()
    tab.get_by_text(f"Indexed {len(files)} document(s)").first.wait_for(timeout=timeout_ms)
    idle(tab)
