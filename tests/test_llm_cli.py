"""The CLI's LLM path against the real local server: Ctrl-C during LLM indexing is a resumable stop
whose finished work is never paid for twice; ``retry`` and ``eval`` honour ``--llm-base-url`` /
``--llm-model``. (The ``--offline`` side of the same flags is in ``test_cli.py``.)"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import MODEL_NAME, ROOT, free_port

pytestmark = [pytest.mark.llm, pytest.mark.slow]

TEXT = """Elsa Marrow founded the Harwick Observatory above the town of Lindqvist in 1911. She persuaded the \
shipping company Nordvik Lines to pay for the first telescope, a refractor built by Otto Brandt in Hamburg.

In 1923 her assistant Jonas Pell photographed a bright comet every clear night for six weeks and sent the plates \
to the Royal Astronomical Society in London, which gave Elsa Marrow its gold medal in 1925."""


def env() -> dict[str, str]:
    out = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    out.pop("RAGSCOPE_LLM_BASE_URL", None)
    out.pop("RAGSCOPE_LLM_MODEL", None)
    return out


def cli(*args: str, code: int | None = 0) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=env(), capture_output=True,
                          text=True, timeout=900)
    if code is not None:
        assert proc.returncode == code, proc.stderr[-3000:]
    return proc


def small_workspace(path: Path, **overrides) -> Path:
    """A workspace folder whose settings keep the tiny model's work short (two chunks)."""
    from core.settings import Settings, save_settings

    path.mkdir(parents=True)
    values = dict(chunk_tokens=80, chunk_overlap=10, llm_max_tokens=120, llm_concurrency=1, gleaning_passes=1,
                  summary_tokens=50, llm_timeout_s=300)
    save_settings(path, Settings(**(values | overrides)))  # provider stays offline: the flags turn the LLM on
    return path


def query(ws: Path, sql: str) -> list[tuple]:
    """Read the workspace database from outside (0 rows while it does not exist yet)."""
    db = ws / "ragscope.sqlite3"
    if not db.exists():
        return []
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []


def cache_rows(ws: Path) -> int:
    rows = query(ws, "SELECT count(*) FROM llm_cache")
    return rows[0][0] if rows else 0


def usage(ws: Path) -> dict[str, int]:
    rows = query(ws, "SELECT coalesce(sum(calls), 0), coalesce(sum(cached), 0) FROM llm_usage")
    return {"calls": rows[0][0], "cached": rows[0][1]}


def test_ctrl_c_cancels_llm_indexing_and_a_rerun_pays_only_for_missing_work(llm_server, tmp_path):
    ws = small_workspace(tmp_path / "ws")
    doc = tmp_path / "harwick.txt"
    doc.write_text(TEXT, encoding="utf-8")
    args = ["index", "--workspace", str(ws), "--quiet", "--llm-base-url", llm_server, "--llm-model", MODEL_NAME,
            str(doc)]
    proc = subprocess.Popen([sys.executable, "-m", "core", *args], cwd=ROOT, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    while cache_rows(ws) < 1 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # wait for the first finished LLM reply
    assert proc.poll() is None, "the run ended before it could be cancelled: " + proc.stderr.read()[-2000:]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 130, err[-3000:]
    assert "cancelled; run index again to resume" in err
    assert query(ws, "SELECT status, error FROM documents") == [("pending", "")]
    assert query(ws, "SELECT count(*) FROM chunks") == [(0,)]  # nothing of the batch was committed
    rows_before, used_before = cache_rows(ws), usage(ws)
    assert rows_before >= 1 and used_before["calls"] == rows_before

    cli(*args)  # resume
    assert query(ws, "SELECT status FROM documents") == [("processed",)]
    rows_after, used_after = cache_rows(ws), usage(ws)
    new_calls = used_after["calls"] - used_before["calls"]
    assert new_calls == rows_after - rows_before, "a request answered before the stop was sent again"
    assert used_after["cached"] - used_before["cached"] >= rows_before  # the finished work came from the cache
    print(f"\ncancelled after {rows_before} call(s); the rerun made {new_calls} new call(s) and "
          f"{used_after['cached'] - used_before['cached']} cache hit(s)")


def test_retry_uses_the_llm_flags(llm_server, tmp_path):
    ws = small_workspace(tmp_path / "ws", llm_max_retries=0)
    doc = tmp_path / "harwick.txt"
    doc.write_text(TEXT.split("\n\n")[0], encoding="utf-8")
    dead = f"http://127.0.0.1:{free_port()}/v1"
    failed = cli("index", "--workspace", str(ws), "--quiet", "--llm-base-url", dead, "--llm-model", MODEL_NAME,
                 str(doc), code=1)
    assert "could not reach" in failed.stderr
    cli("retry", "--workspace", str(ws), "--quiet", "--llm-base-url", llm_server, "--llm-model", MODEL_NAME)
    status = json.loads(cli("status", "--workspace", str(ws), "--json").stdout)
    assert status["processed"] == 1 and status["failed"] == 0
    assert status["extractor"] == f"llm:{MODEL_NAME}"
    assert status["llm_usage"]["extraction"]["calls"] == status["chunks"]


def test_eval_uses_llm_keywords(llm_server, sample_workspace_dir, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(sample_workspace_dir, ws)
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"qid": "q1", "question": "Who founded the Tidewater Shipping Cooperative?",
                                     "answer": "", "gold_doc_names": ["03-tidewater-shipping-cooperative.md"]}) + "\n",
                         encoding="utf-8")
    rows_file = tmp_path / "rows.json"
    proc = cli("eval", "--workspace", str(ws), "--questions", str(questions), "--modes", "naive,local,global",
               "--json", "--per-question", str(rows_file), "--llm-base-url", llm_server, "--llm-model", MODEL_NAME)
    summary = json.loads(proc.stdout)
    assert summary["keywords"]["extractor"] == f"llm:{MODEL_NAME}"
    rows = json.loads(rows_file.read_text(encoding="utf-8"))
    assert {r["keywords_source"] for r in rows} <= {"llm", "offline fallback"}  # the LLM was asked either way
    local = next(r for r in rows if r["mode"] == "local")
    assert local["llm_calls"] == 1 and local["prompt_tokens"] > 0
    used = json.loads(cli("status", "--workspace", str(ws), "--json").stdout)["llm_usage"]
    assert used["keywords"]["calls"] == 1 and set(used) == {"keywords"}  # keywords only: no answers in eval
