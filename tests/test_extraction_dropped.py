"""What the extraction parser drops is recorded per document and reported (status, documents table, CLI)."""
from __future__ import annotations

from core.indexing.deletion import delete_documents
from core.llm.client import Completion
from core.workspace import Workspace

from test_cancel_resume import RECORDS, TEXT, ScriptedChat, chat_for, index, settings

MESSY = ("Sure! Here are the records:\n" + RECORDS.replace("\nEND", "") +
         "\nentity | PERSON | PERSON | a type label in the name's place\n"
         "relation | Mara Quill | Mara Quill | self | loops back | 3\nEND")


class MessyChat(ScriptedChat):
    """Extraction replies with prose and two unusable records around the good ones."""

    def complete(self, messages, *, stage: str, json_mode: bool = False, max_tokens=None):
        reply = super().complete(messages, stage=stage, json_mode=json_mode, max_tokens=max_tokens)
        return Completion(MESSY, 20, 10) if stage == "extraction" else reply


def test_dropped_records_are_kept_per_document_and_reported(tmp_path):
    ws = Workspace(tmp_path / "ws", settings=settings())
    report = index(ws, chat_for(ws, MessyChat()))
    assert report.processed == 1
    chunks = ws.status()["chunks"]
    assert report.dropped_records == 3 * chunks  # prose line, type-label entity, self-relation: per chunk
    [(doc_id, record)] = ws.dropped_records().items()
    assert record["dropped"] == 3 * chunks and record["chunks"] == chunks and record["extractor"] == "llm:scripted"
    assert record["reasons"] == {"not a record": chunks, "entity name is a type label": chunks,
                                 "relation of an entity with itself": chunks}
    assert record["examples"] and all(e.startswith("extraction: ") for e in record["examples"])
    assert ws.status()["dropped_records"] == 3 * chunks
    assert ws.documents_table()[0]["dropped"] == 3 * chunks

    with ws.writer():
        delete_documents(ws, [doc_id])
    assert ws.dropped_records() == {} and ws.status()["dropped_records"] == 0
    clean = ScriptedChat()
    clean.model = "scripted-clean"  # not the cached messy replies
    report = index(ws, chat_for(ws, clean), name="again.txt")  # clean replies: nothing dropped
    assert report.dropped_records == 0 and ws.status()["dropped_records"] == 0
    assert [r["dropped"] for r in ws.dropped_records().values()] == [0]
    ws.close()


def test_offline_extraction_drops_nothing_on_ordinary_text(tmp_path):
    from core.indexing.pipeline import process_pending, register_documents
    from core.types import SourceDocument

    ws = Workspace(tmp_path / "ws")
    with ws.writer():
        register_documents(ws, [SourceDocument("plain.txt", TEXT)])
        report = process_pending(ws)
    assert report.processed == 1 and report.dropped_records == 0
    assert list(ws.dropped_records().values())[0]["extractor"] == "spacy"
    ws.close()
