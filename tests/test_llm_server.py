"""The LLM path against a real local OpenAI-compatible server (llama.cpp + SmolLM2-135M).

One ``python -m llama_cpp.server`` process per test session (started by ``conftest.shared_server``)
on 127.0.0.1 and a free port. The tiny model writes poor, messy records: these tests check that
the pipeline copes (robustness), that every mode gets a generated answer, that calls and tokens
are accounted, that the cache makes a re-run free, and that the API key never reaches disk or logs.
Skipped when llama-cpp-python or the model package is not installed (scripts/install-llm.sh).
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time

import pytest

from conftest import MODEL_NAME, ROOT, free_port, index_document, llm_settings

pytestmark = [pytest.mark.llm, pytest.mark.slow]

DOCUMENT = """The Harwick Observatory stands on a ridge above the town of Lindqvist in northern Norway. It was \
founded in 1911 by the astronomer Elsa Marrow, who had trained at the University of Uppsala and spent ten years \
measuring the positions of faint stars. Marrow persuaded the shipping company Nordvik Lines to pay for the first \
telescope, a twelve-inch refractor built by the Hamburg workshop of Otto Brandt.

During the winter of 1923 the observatory recorded a bright comet that later carried Marrow's name. Her assistant, \
Jonas Pell, photographed the comet every clear night for six weeks and sent the plates to the Royal Astronomical \
Society in London. The society awarded Marrow its gold medal in 1925, the first time it honoured a woman working \
outside Britain.

After Marrow retired, the University of Tromso took over the observatory. The new director, Ingrid Salte, added a \
radio antenna in 1958 and began a long survey of the northern lights with the Norwegian Polar Institute. Salte's \
measurements showed that the aurora over Lindqvist brightened roughly every eleven years, following the cycle of \
sunspots on the Sun.

Today the Harwick Observatory is a museum. Visitors can see Brandt's refractor, the comet plates made by Jonas \
Pell and the notebooks in which Elsa Marrow recorded her star positions. Each February the town of Lindqvist holds \
the Marrow Festival, when schoolchildren build paper telescopes and the museum opens its dome at night. The \
festival is funded by Nordvik Lines, which still keeps its headquarters in the harbour below the ridge.
"""

QUESTION = "Who founded the Harwick Observatory and what did Jonas Pell do?"

@pytest.fixture(scope="module")
def indexed(llm_server, tmp_path_factory):
    """A workspace holding DOCUMENT indexed with LLM extraction and LLM tree summaries."""
    from core.llm.provider import chat_from_settings
    from core.workspace import Workspace

    ws = Workspace(tmp_path_factory.mktemp("llm_ws") / "ws", settings=llm_settings(llm_server))
    chat = chat_from_settings(ws.settings, None, ws.store.conn)
    started = time.perf_counter()
    report = index_document(ws, chat, DOCUMENT, "harwick.txt")
    seconds = time.perf_counter() - started
    yield ws, chat, report, seconds
    ws.close()


def test_index_with_llm_extraction_and_tree_summaries(indexed):
    ws, chat, report, seconds = indexed
    assert report.processed == 1 and not report.failed, report.failed
    status = ws.status()
    assert status["extractor"] == f"llm:{MODEL_NAME}"
    assert status["chunks"] >= 3 and status["tree_nodes"] >= 1
    assert status["mention_nodes"] > 0, "the mention graph still comes from spaCy"
    usage = status["llm_usage"]
    chunks = status["chunks"]
    assert usage["extraction"]["calls"] == chunks and usage["gleaning"]["calls"] <= chunks
    assert usage["summaries"]["calls"] >= 1  # at least the tree parent
    for stage in ("extraction", "summaries"):
        assert usage[stage]["prompt_tokens"] > 0 and usage[stage]["completion_tokens"] > 0
    node = ws.store.tree_nodes()[0]
    assert node.text.strip()
    print(f"\nindexing: {chunks} chunks in {seconds:.1f}s; usage {json.dumps(usage)}; "
          f"{status['entities']} entities, {status['relations']} relations")


def test_every_mode_gets_an_llm_answer(indexed):
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.llm.keywords import LLMKeywords

    ws, chat, _, _ = indexed
    keywords = LLMKeywords(chat)
    try:
        results = run_modes(LOCAL_ADMIN, ws, QUESTION, "all", llm=chat, keywords=keywords)
    except ImportError:  # retrieval modes still being written: exercise the ones that exist
        results = _available_modes(ws, chat, keywords)
    assert results
    assert sum(r.llm_calls for r in results.values()) >= 1
    for mode, result in results.items():
        assert result.answer is not None and result.answer.kind == "llm", mode
        assert result.answer.model == MODEL_NAME
        # the answer call (0 when another mode had the same context: a cache hit), plus the keyword
        # call in the modes that use keywords; auto's fused candidates run ppr with other modes, so they
        # may add ppr's recognition call to the one keyword call (counted once however many parts use it)
        fused = "+" in str((result.route or {}).get("chosen", ""))
        assert result.llm_calls <= (3 if fused else 2), mode
        if result.llm_calls:
            assert result.prompt_tokens > 0 and result.completion_tokens > 0, mode
        print(f"\n[{mode}] answer call: {result.llm_calls} call, {result.prompt_tokens}+{result.completion_tokens} "
              f"tokens; context {result.context_tokens} tokens")
    assert keywords.last_source in ("llm", "offline fallback")
    chat.flush()
    usage = ws.llm_usage()
    with_context = sum(1 for r in results.values() if r.context_text.strip())
    assert usage["answer"]["calls"] + usage["answer"]["cached"] >= with_context
    assert usage["keywords"]["calls"] + usage["keywords"]["cached"] >= 1
    print(f"keywords ({keywords.last_source}): {keywords.last_usage} {keywords.last_note}")


def _available_modes(ws, chat, keywords):
    import time as _time

    from core.answers import answer
    from core.retrieval.registry import query_context

    out = {}
    ctx = query_context(ws, QUESTION, keywords=keywords)
    ctx.keywords()
    for module, cls in (("core.retrieval.naive_search", "NaiveRetriever"),):
        retriever = getattr(__import__(module, fromlist=[cls]), cls)()
        result = retriever.retrieve(ctx)
        started = _time.perf_counter()
        result.answer = answer(result, ws, chat)
        result.timings_ms["answer"] = (_time.perf_counter() - started) * 1000
        out[retriever.name] = result
    return out


def test_streamed_answer(indexed):
    from core.llm.generated_answers import stream_answer
    from core.types import RetrievalResult

    ws, chat, _, _ = indexed
    result = RetrievalResult(mode="naive", query="Where is the Harwick Observatory?",
                             context_text=DOCUMENT.split("\n\n")[0])
    pieces = list(stream_answer(chat, result, max_tokens=40))
    assert len(pieces) >= 1 and result.answer.kind == "llm"
    assert "".join(pieces).strip() == result.answer.text
    assert result.llm_calls == 1 and result.completion_tokens > 0


def test_reindex_after_delete_is_served_from_the_cache(indexed):
    from core.indexing.deletion import delete_documents
    from core.llm.provider import chat_from_settings

    ws, chat, _, _ = indexed
    before = ws.llm_usage()
    [doc] = [d for d in ws.store.documents() if d.name == "harwick.txt"]
    with ws.writer():
        delete_documents(ws, [doc.doc_id])
    fresh = chat_from_settings(ws.settings, None, ws.store.conn)  # a new process would start like this
    report = index_document(ws, fresh, DOCUMENT, "harwick.txt")
    assert report.processed == 1 and not report.failed
    assert fresh.inner.inner.attempts == 0, "no request reached the server"
    totals = fresh.snapshot()
    hits = sum(v["cached"] for v in totals.values())
    calls = sum(v["calls"] for v in totals.values())
    assert calls == 0 and hits > 0
    after = ws.llm_usage()
    assert after["extraction"]["calls"] == before["extraction"]["calls"]
    print(f"\nre-index: {hits} cache hits, {calls} calls (hit rate 100%)")


def test_api_key_is_never_written_or_logged(llm_server, tmp_path, caplog, capsys):
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.llm.keywords import LLMKeywords
    from core.llm.provider import chat_from_settings
    from core.workspace import Workspace

    secret = "sk-ragscope-test-" + os.urandom(8).hex()
    caplog.set_level(logging.DEBUG)
    ws = Workspace(tmp_path / "ws", settings=llm_settings(llm_server, gleaning_passes=0), api_key=secret)
    ws.save_settings(ws.settings)
    chat = chat_from_settings(ws.settings, ws.api_key, ws.store.conn)
    text = "Elsa Marrow founded the Harwick Observatory in Lindqvist. Jonas Pell photographed a comet there."
    report = index_document(ws, chat, text, "secret.txt")
    assert report.processed == 1
    results = run_modes(LOCAL_ADMIN, ws, "Who founded the observatory?", ["naive"], llm=chat, keywords=LLMKeywords(chat))
    assert results["naive"].answer.kind == "llm"
    chat.flush()
    ws.close()
    captured = capsys.readouterr()
    assert secret not in caplog.text and secret not in captured.out and secret not in captured.err
    assert secret not in repr(chat)
    needle = secret.encode()
    for path in (tmp_path / "ws").rglob("*"):
        if path.is_file():
            assert needle not in path.read_bytes(), f"API key found in {path}"


def test_connection_checks(llm_server):
    from core.llm.provider import test_connection

    ok, message = test_connection(llm_settings(llm_server))
    assert ok, message
    assert MODEL_NAME in message
    ok, message = test_connection(llm_settings(llm_server.rsplit("/v1", 1)[0] + "/nothing"))
    assert not ok and "Settings → LLM base URL" in message
    ok, message = test_connection(llm_settings(f"http://127.0.0.1:{free_port()}/v1"))
    assert not ok and "could not reach" in message


def test_cli_index_with_llm_flags_and_status(llm_server, tmp_path):
    text = tmp_path / "short.txt"
    text.write_text("Ingrid Salte directed the Harwick Observatory for the University of Tromso. She studied "
                    "the northern lights with the Norwegian Polar Institute.", encoding="utf-8")
    ws_dir = tmp_path / "cli_ws"
    ws_dir.mkdir()
    from core.settings import Settings, save_settings

    save_settings(ws_dir, Settings(llm_max_tokens=200))  # provider stays offline: the flags turn the LLM on
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    env.pop("RAGSCOPE_LLM_BASE_URL", None)
    env.pop("RAGSCOPE_LLM_MODEL", None)
    run = subprocess.run([sys.executable, "-m", "core", "index", "--workspace", str(ws_dir), "--quiet",
                          "--llm-base-url", llm_server, "--llm-model", MODEL_NAME, str(text)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    status = subprocess.run([sys.executable, "-m", "core", "status", "--workspace", str(ws_dir), "--json"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    data = json.loads(status.stdout)
    assert data["extractor"] == f"llm:{MODEL_NAME}"
    assert data["llm_usage"]["extraction"]["calls"] == data["chunks"]
