"""The app's LLM path (AppTest) against the real local server.

Documents: with an LLM configured (here through RAGSCOPE_LLM_BASE_URL/RAGSCOPE_LLM_MODEL, as a
deployment would), the page says before the run that the LLM will extract, indexes with LLM
extraction and LLM tree summaries, and shows the calls and tokens per stage afterwards; its Cancel
button stops the run with the document left pending, and Resume pending finishes it without
sending any request that was answered before the stop. Compare answers with the same session LLM.
"""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from conftest import MODEL_NAME
from test_app_pages import app, assert_clean, finish_indexing, open_page, status_table

pytestmark = [pytest.mark.llm, pytest.mark.slow]

TEXT = ("Elsa Marrow founded the Harwick Observatory above the town of Lindqvist in 1911. Her assistant Jonas Pell "
        "photographed a bright comet and sent the plates to the Royal Astronomical Society in London.")
LONGER = TEXT + " " + ("Ingrid Salte later directed the observatory for the University of Tromso and studied the "
                       "northern lights with the Norwegian Polar Institute, while Nordvik Lines paid for a new dome "
                       "and the town of Lindqvist opened a museum in the old library. ") * 2


@pytest.fixture()
def llm_data_dir(tmp_path, monkeypatch, llm_server) -> Path:
    """An empty data folder whose 'default' workspace gets the LLM from the environment, with settings
    that keep the tiny model's work short."""
    from core.settings import Settings, save_settings

    folder = tmp_path / "workspaces"
    (folder / "default").mkdir(parents=True)
    save_settings(folder / "default", Settings(chunk_tokens=80, chunk_overlap=10, llm_max_tokens=120,
                                               llm_concurrency=1, gleaning_passes=1, summary_tokens=50,
                                               llm_timeout_s=300))
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(folder))
    monkeypatch.delenv("RAGSCOPE_WORKSPACE", raising=False)
    monkeypatch.setenv("RAGSCOPE_LLM_BASE_URL", llm_server)
    monkeypatch.setenv("RAGSCOPE_LLM_MODEL", MODEL_NAME)
    return folder


def query(data_dir: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{data_dir / 'default' / 'ragscope.sqlite3'}?mode=ro", uri=True, timeout=5) as conn:
        return conn.execute(sql).fetchall()


def usage(data_dir: Path) -> dict[str, dict[str, int]]:
    rows = query(data_dir, "SELECT stage, calls, cached, prompt_tokens, completion_tokens FROM llm_usage")
    return {r[0]: {"calls": r[1], "cached": r[2], "prompt": r[3], "completion": r[4]} for r in rows}


def paste(at, name: str, text: str) -> None:
    at.text_input(key="doc_paste_name").input(name)
    at.text_area(key="doc_paste_text").input(text)
    at.button(key="doc_paste_index").click().run()
    assert_clean(at)


def test_documents_page_indexes_with_the_llm_and_shows_its_usage(llm_data_dir):
    at = open_page(app(), "pages/documents.py")
    label = next(i.value for i in at.info if "Extraction:" in i.value)
    assert "Extraction: LLM" in label and "smollm2" in label, label
    paste(at, "harwick", TEXT)
    assert at.button(key="doc_cancel"), "a running job offers Cancel"
    finish_indexing(at)
    assert any("Indexed 1 document" in s.value for s in at.success), [s.value for s in at.success]
    frames = [d.value for d in at.dataframe if "stage" in d.value.columns]
    assert frames, "the LLM usage table is shown after the run"
    stages = frames[0].set_index("stage")
    table = status_table(at)
    chunks = int(table["chunks"].iloc[0])
    assert "dropped" in table.columns  # what the extraction parser could not use, per document
    assert stages.loc["extraction", "calls"] == chunks and stages.loc["extraction", "prompt tokens"] > 0
    assert "gleaning" in stages.index
    caption = next(c.value for c in at.caption if "per chunk" in c.value)
    assert MODEL_NAME in caption.replace("\\", "")  # the model name is escaped for markdown (a served name is untrusted)
    stored = usage(llm_data_dir)
    assert stored["extraction"]["calls"] == chunks  # the same numbers went to the workspace's usage table
    assert query(llm_data_dir, "SELECT value FROM meta WHERE key='extractor'") == [(f"llm:{MODEL_NAME}",)]
    print(f"\napp indexing: {caption}; parser dropped {int(table['dropped'].iloc[0])} record(s)")

    at.switch_page("pages/compare.py")  # the same session LLM answers
    at.run()
    assert_clean(at)
    at.text_area(key="compare_question").input("Who founded the Harwick Observatory?")
    at.multiselect(key="compare_modes").set_value(["naive"])
    at.button(key="compare_run").click().run()
    assert_clean(at)
    result = at.session_state["compare_last"]["results"]["naive"]
    assert result.answer.kind == "llm" and result.answer.model == MODEL_NAME


def test_cancel_keeps_the_document_pending_and_resume_sends_no_repeated_request(llm_data_dir):
    at = open_page(app(), "pages/documents.py")
    paste(at, "harwick-long", LONGER)
    deadline = time.monotonic() + 600
    while not query(llm_data_dir, "SELECT count(*) FROM llm_cache")[0][0] and time.monotonic() < deadline:
        time.sleep(0.2)  # let one reply finish, so the resume has cached work to reuse
    at.button(key="doc_cancel").click().run()
    assert_clean(at)
    finish_indexing(at)
    warnings = [w.value for w in at.warning]
    assert any("Indexing cancelled" in w and "1 document(s) stay pending" in w for w in warnings), warnings
    assert list(status_table(at)["status"]) == ["pending"]
    answered = query(llm_data_dir, "SELECT count(*) FROM llm_cache")[0][0]
    calls_before = sum(v["calls"] for v in usage(llm_data_dir).values())
    assert answered >= 1 and calls_before == answered

    at.button(key="doc_resume").click().run()
    assert_clean(at)
    finish_indexing(at)
    assert any("Indexed 1 document" in s.value for s in at.success), [s.value for s in at.success]
    assert list(status_table(at)["status"]) == ["processed"]
    after = usage(llm_data_dir)
    new_calls = sum(v["calls"] for v in after.values()) - calls_before
    assert new_calls == query(llm_data_dir, "SELECT count(*) FROM llm_cache")[0][0] - answered
    assert sum(v["cached"] for v in after.values()) >= answered  # the finished work came from the cache
