"""Issue 38, item 5: after a crash, documents left 'processing' are shown as interrupted (no run holds
the workspace's write lock), and as processing while a run does; Resume indexes them."""
from __future__ import annotations

from pathlib import Path

from conftest import HashEmbedder

from core import api
from core.auth import LOCAL_ADMIN
from core.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]


def test_a_processing_document_without_a_run_reads_interrupted(tmp_path):
    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    try:
        ws.records.insert_document("d1", "a.txt", "a.txt", "h", "Harbour text.", 3)
        ws.records.set_status("d1", "processing")  # what a killed run leaves
        assert [r["status"] for r in api.documents_table(LOCAL_ADMIN, ws)] == ["interrupted"]
        with ws.writer():  # a run holds the lock: the document is being processed
            assert [r["status"] for r in api.documents_table(LOCAL_ADMIN, ws)] == ["processing"]
    finally:
        ws.close()


def test_the_documents_page_offers_resume_for_interrupted_documents():
    text = (ROOT / "pages" / "documents.py").read_text()
    assert 'frame["status"].isin(["pending", "processing", "interrupted"])' in text
    assert "were interrupted" in text


def test_after_a_crash_the_page_says_how_many_documents_resume_will_index(tmp_path, monkeypatch):
    """Killed mid-way through a 100,000-record upload, the page said "1401 document(s) were interrupted …
    Resume pending indexes them" while 94,275 more were pending (only the sidebar counted them): the warning
    names both and the total Resume takes on."""
    from streamlit.testing.v1 import AppTest

    ws = Workspace(tmp_path / "workspaces" / "crashed", embedder=HashEmbedder())
    try:
        with ws.records.unit_of_work():
            for i, status in enumerate(["processing", "pending", "pending", "processed"]):
                ws.records.insert_document(f"d{i}", f"{i}.txt", f"{i}.txt", f"h{i}", "Harbour text.", 3)
                ws.records.set_status(f"d{i}", status)
    finally:
        ws.close()
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(tmp_path / "workspaces"))
    for variable in ("RAGSCOPE_WORKSPACE", "RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "RAGSCOPE_ROLES"):
        monkeypatch.delenv(variable, raising=False)
    at = AppTest.from_file(str(ROOT / "pages" / "documents.py"), default_timeout=300)
    at.session_state["workspace_name"] = "crashed"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    warning = next(w.value for w in at.warning if "were interrupted" in w.value)
    assert warning.startswith("1 document(s) were interrupted")
    assert warning.endswith("Resume pending indexes them and the 2 still pending (3 in all).")
