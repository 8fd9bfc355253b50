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
