"""Saving a new chunk size offers to re-index the stored documents (issue 32, item 7): the indexed documents
keep their chunks until the offered run goes; the button starts it as an indexing job (progress and Cancel
on the Documents page) through ``core.api.reindex``, which cuts every document again from its stored text;
a viewer is refused by the library."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core import api
from core.auth import Principal, Role
from core.errors import PermissionDeniedError
from core.workspace import Workspace

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 600


@pytest.fixture()
def sample_data_dir(tmp_path, monkeypatch, sample_workspace_dir) -> Path:
    folder = tmp_path / "workspaces"
    folder.mkdir()
    for name in ("RAGSCOPE_WORKSPACE", "RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "RAGSCOPE_EMBEDDING_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(folder))
    shutil.copytree(sample_workspace_dir, folder / "sample")
    return folder


def _counts(path: Path) -> dict:
    ws = Workspace(path)
    try:
        status = ws.status()
        return {"chunks": int(status["chunks"]), "processed": int(status["processed"]),
                "pending": int(status["pending"])}
    finally:
        ws.close()


def _clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.mark.slow
def test_a_new_chunk_size_offers_a_reindex_that_recuts_the_documents(sample_data_dir) -> None:
    path = sample_data_dir / "sample"
    before = _counts(path)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["workspace_name"] = "sample"
    at.run()
    at.switch_page("pages/settings.py")
    at.run()
    _clean(at)
    assert not [b for b in at.button if b.key == "settings_reindex"]  # nothing to offer before a save
    at.number_input(key="set::sample::chunk_tokens").set_value(300)
    at.button(key="settings_save").click().run()
    _clean(at)
    offer = [w.value for w in at.warning if "Re-indexing cuts them again" in w.value]
    assert offer and f"{before['processed']} indexed document(s)" in offer[0], [w.value for w in at.warning]
    assert _counts(path) == before  # saved, not re-indexed: the documents keep their chunks
    at.button(key="settings_reindex").click().run()
    job = at.session_state["doc_job"]
    assert job.join(TIMEOUT), "the re-index did not finish in time"
    assert job.state == "done", job.error_traceback
    after = _counts(path)
    assert after["processed"] == before["processed"] and after["pending"] == 0
    assert after["chunks"] > before["chunks"]  # cut again at 300 tokens: more, smaller chunks
    ws = Workspace(path)
    try:
        assert max(c.tokens for d in ws.records.documents() for c in ws.records.chunks_of(d.doc_id)) <= 300
    finally:
        ws.close()
    at.run()
    assert not [b for b in at.button if b.key == "settings_reindex"]  # the offer is gone once taken


def test_a_viewer_cannot_reindex(sample_ws) -> None:
    viewer = Principal("viewer-1", "v@example.org", Role.viewer)
    with pytest.raises(PermissionDeniedError):
        api.reindex(viewer, sample_ws)
