"""The CLI contract: index/status/docs/delete/export/query/compare/eval (subprocesses, offline)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES

pytestmark = pytest.mark.slow

ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")


def run(*args: str, check_code: int | None = 0) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=600)
    if check_code is not None:
        assert proc.returncode == check_code, proc.stderr[-2000:]
    return proc


@pytest.fixture(scope="module")
def cli_ws(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("cli") / "ws"
    corpus = tmp_path_factory.mktemp("cli_in")
    for name in ("02-port-sallow.md", "03-tidewater-shipping-cooperative.md"):
        (corpus / name).write_text((SAMPLES / name).read_text(encoding="utf-8"), encoding="utf-8")
    (corpus / "broken.txt").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    proc = run("index", "--quiet", "--workspace", str(ws), str(corpus), check_code=1)  # one bad file -> exit 1
    assert "broken.txt" in proc.stderr and "2 indexed" in proc.stderr
    return ws


def test_status_json_has_the_contract_keys(cli_ws):
    status = json.loads(run("status", "--workspace", str(cli_ws), "--json").stdout)
    for key in ("documents", "processed", "failed", "chunks", "entities", "relations", "mention_nodes",
                "mention_edges", "tree_nodes"):
        assert isinstance(status[key], int), key
    assert status["processed"] == 2 and status["failed"] == 1
    assert status["entities"] > 0 and status["relations"] > 0 and status["tree_nodes"] > 0
    assert status["embedder"] == {"kind": "local-minilm-int8", "model": "all-MiniLM-L6-v2-int8", "dimension": 384,
                                  "base_url": ""}  # the default embedder of a new workspace


def test_docs_json_lists_documents_with_errors(cli_ws):
    docs = json.loads(run("docs", "--workspace", str(cli_ws), "--json").stdout)
    assert {d["status"] for d in docs} == {"processed", "failed"}
    failed = next(d for d in docs if d["status"] == "failed")
    assert failed["name"] == "broken.txt" and "binary" in failed["error"]
    assert set(docs[0]) == {"doc_id", "name", "status", "chunks", "error"}


def test_reindex_is_a_no_op(cli_ws):
    proc = run("index", "--quiet", "--workspace", str(cli_ws), str(SAMPLES / "02-port-sallow.md"))
    assert "0 new document(s), 1 unchanged" in proc.stderr


def test_query_and_compare_json(cli_ws):
    result = json.loads(run("query", "--workspace", str(cli_ws), "--mode", "naive", "--json",
                            "--param", "naive_top_k=2", "Who founded the Tidewater Shipping Cooperative?").stdout)
    assert result["mode"] == "naive" and result["params"]["naive_top_k"] == 2
    assert len(result["chunks"]) == 2 and result["answer"]["kind"] == "extractive"
    compared = json.loads(run("compare", "--workspace", str(cli_ws), "--modes", "naive,tree", "--json",
                              "Where is the cooperative based?").stdout)
    assert set(compared["results"]) == {"naive", "tree"}
    assert compared["question"] == "Where is the cooperative based?"


def test_many_questions_in_one_process_from_a_file_or_stdin(cli_ws, tmp_path):
    """``query --questions``: one run loads the models once and answers each line (plain or JSONL), one
    JSON line per question with --json; standard input works the same."""
    path = tmp_path / "questions.jsonl"
    path.write_text('{"question": "Who founded the Tidewater Shipping Cooperative?"}\n\nWhere is Port Sallow?\n',
                    encoding="utf-8")
    lines = run("query", "--workspace", str(cli_ws), "--mode", "naive", "--json", "--questions", str(path)
                ).stdout.strip().splitlines()
    results = [json.loads(line) for line in lines]
    assert [r["query"] for r in results] == ["Who founded the Tidewater Shipping Cooperative?", "Where is Port Sallow?"]
    proc = subprocess.run([sys.executable, "-m", "core", "compare", "--workspace", str(cli_ws), "--modes", "naive,tree",
                           "--questions", "-"], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600,
                          input="Where is Port Sallow?\nWho founded the Tidewater Shipping Cooperative?\n")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("### ") == 2 and proc.stdout.count("== tree ==") == 2


def test_status_reads_as_text_and_query_help_names_the_default_mode(cli_ws):
    text = run("status", "--workspace", str(cli_ws)).stdout
    assert "local-minilm-int8 (all-MiniLM-L6-v2-int8, 384 dimensions)" in text and "{" not in text
    assert "(default: hybrid)" in " ".join(run("query", "--help").stdout.split())


def test_unknown_mode_and_empty_question_give_clear_errors(cli_ws):
    proc = run("query", "--workspace", str(cli_ws), "--mode", "nope", "q", check_code=2)
    assert "unknown mode" in proc.stderr
    proc = run("query", "--workspace", str(cli_ws), "--mode", "naive", "   ", check_code=2)
    assert "question is empty" in proc.stderr


def test_export_and_delete(cli_ws, tmp_path):
    out = tmp_path / "graph.graphml"
    run("export", "--workspace", str(cli_ws), "--format", "graphml", str(out))
    assert out.read_text(encoding="utf-8").startswith("<?xml")
    out_json = tmp_path / "graph.json"
    run("export", "--workspace", str(cli_ws), "--format", "json", str(out_json))
    assert json.loads(out_json.read_text(encoding="utf-8"))["knowledge_graph"]["nodes"]
    docs = json.loads(run("docs", "--workspace", str(cli_ws), "--json").stdout)
    target = next(d for d in docs if d["name"].startswith("02-"))
    run("delete", "--workspace", str(cli_ws), target["doc_id"])
    after = json.loads(run("status", "--workspace", str(cli_ws), "--json").stdout)
    assert after["processed"] == 1
    proc = run("delete", "--workspace", str(cli_ws), "no-such-doc", check_code=1)
    assert "unknown document id" in proc.stderr


def test_eval_offline_flag_wins_over_an_llm_in_the_environment(cli_ws, tmp_path):
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"qid": "q1", "question": "Who founded the Tidewater Shipping Cooperative?",
                                     "gold_doc_names": ["03-tidewater-shipping-cooperative.md"]}) + "\n",
                         encoding="utf-8")
    rows_file = tmp_path / "rows.json"
    dead = {"RAGSCOPE_LLM_BASE_URL": "http://127.0.0.1:9/v1", "RAGSCOPE_LLM_MODEL": "nobody"}
    proc = run_env(dead, "eval", "--workspace", str(cli_ws), "--questions", str(questions), "--modes", "local,naive",
                   "--json", "--per-question", str(rows_file), "--offline")
    summary = json.loads(proc.stdout)
    assert summary["keywords"] == {"extractor": "spacy", "questions_by_source": {"offline": 1}}
    rows = json.loads(rows_file.read_text(encoding="utf-8"))
    assert {r["keywords_source"] for r in rows} == {"offline"} and all(r["llm_calls"] == 0 for r in rows)
    assert "recall@k" in summary["modes"]["local"]
    # answer-in-answer comes from the offline extractive answer, whatever the provider
    assert "answer_in_answer" in summary["modes"]["local"] and all("answer_in_answer" in r for r in rows)


def test_retry_offline_flag_wins_over_an_llm_in_the_environment(tmp_path):
    from core.settings import Settings, save_settings

    ws = tmp_path / "ws"
    ws.mkdir()
    save_settings(ws, Settings(llm_max_retries=0))
    doc = tmp_path / "note.txt"
    doc.write_text((SAMPLES / "02-port-sallow.md").read_text(encoding="utf-8")[:600], encoding="utf-8")
    dead = {"RAGSCOPE_LLM_BASE_URL": "http://127.0.0.1:9/v1", "RAGSCOPE_LLM_MODEL": "nobody"}
    failed = run_env(dead, "index", "--quiet", "--workspace", str(ws), str(doc), check_code=1)
    assert "could not reach" in failed.stderr  # the environment's LLM was used, and it is not there
    run_env(dead, "retry", "--quiet", "--workspace", str(ws), "--offline")
    status = json.loads(run("status", "--workspace", str(ws), "--json").stdout)
    assert status["processed"] == 1 and status["failed"] == 0
    assert status["extractor"] == "spacy" and not status["llm_usage"]


def run_env(extra: dict[str, str], *args: str, check_code: int | None = 0) -> subprocess.CompletedProcess:
    """``run`` with extra environment variables."""
    proc = subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=ENV | extra, capture_output=True,
                          text=True, timeout=600)
    if check_code is not None:
        assert proc.returncode == check_code, proc.stderr[-2000:]
    return proc
