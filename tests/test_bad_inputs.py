"""Bad inputs end to end: one upload batch mixing every kind of bad file with good ones goes through
``core.api.index_uploads``; each bad file becomes a failed document with a readable reason, the good ones
are indexed, and the rest of the workspace is untouched. Hostile questions go through ``run_modes``.

(File-level loader behaviour is unit-tested in test_loaders.py; this file checks the whole pipeline.)
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conftest import blank_pdf

pytestmark = pytest.mark.slow

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(64))
LIMIT_MB = 0.05  # 51.2 KB: the oversize file is refused, every other file fits
COUNT_KEYS = ("documents", "processed", "failed", "chunks", "entities", "relations", "mention_nodes",
              "mention_edges", "tree_nodes")


def empty_docx() -> bytes:
    import docx

    buffer = io.BytesIO()
    docx.Document().save(buffer)
    return buffer.getvalue()


LONG_NAME = "Velmora " + "very-long-name-" * 20 + "end.txt"  # 315 characters
LONG_NAME_STORED = LONG_NAME[:196] + ".txt"  # capped at 200 characters, extension kept
UNICODE_NAME = "Ünïcødé 文档 résumé – Käse.md"
XSS_TEXT = ('Notes on the festival website: <script>alert("xss")</script> and <img src=x onerror=alert(1)> '
            'were found in a comment posted by Mara Quill of Port Sallow.')
KOREAN = ("서울은 대한민국의 수도이다. 김민수 박사는 부산 해양 연구소에서 일하며 2019년에 조석 에너지 보고서를 "
          "발표했다. 그 보고서는 서울 대학교와 공동으로 작성되었다.")
CHINESE = ("北京是中华人民共和国的首都。李华教授在上海海洋研究所工作，并于二零一九年发表了关于潮汐能的报告。"
           "该报告与清华大学合作完成。")
LONG_LINE = " ".join(f"harbour{i % 97} tidewater" for i in range(1800))  # ~27 KB, no line break, no full stop

JSONL = "\n".join([
    json.dumps({"doc_id": "jl-1", "title": "Kestrel Point", "text": "Kestrel Point lighthouse was rebuilt by "
                "Hana Ito of the Velmora Marine Institute in 1998."}),
    '{"doc_id": "jl-2", "title": "Broken", "text": "this line is cut',
    json.dumps({"doc_id": "jl-1", "title": "Kestrel Point again", "text": "A duplicate id with other text."}),
    json.dumps({"doc_id": "jl-4", "title": "No text field"}),
    json.dumps(["not", "an", "object"]),
    json.dumps({"text": "A line without doc_id or title: Tobias Wren sailed from Carrow Sound."}),
]).encode("utf-8")

# name -> bytes, and what the user must read in the document's error
BAD: dict[str, tuple[bytes, str]] = {
    "zero-bytes.txt": (b"", "the document is empty"),
    "whitespace.txt": (b"  \n\t\r\n   \n", "the document is empty"),
    "empty-page.html": (b"<html><head><style>p{}</style></head><body><script>var a=1;</script></body></html>",
                        "the document is empty"),
    "empty.docx": (empty_docx(), "the document is empty"),
    "binary.txt": (bytes(range(256)) * 8, "looks like a binary file, not text"),
    "photo.png": (PNG, "unsupported file type .png (supported: "),
    "photo-renamed.txt": (PNG, "looks like a binary file (PNG image), not text"),
    "oversize.txt": (b"tidewater harbour " * 4000, "the file is too large (70.3 KB; the limit is 51.2 KB)"),
    "malformed.pdf": (b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R\n%%EOF", "could not read the PDF"),
    "scanned.pdf": (blank_pdf(), "the PDF has no text layer (scanned?); OCR it first"),
    "corrupt.docx": (b"PK\x03\x04" + b"not really a zip archive" * 10, "could not read the DOCX: "),
}
JSONL_FAILURES = {
    "corpus.jsonl line 2": "not valid JSON (Invalid control character at column ",
    "corpus.jsonl line 3": "duplicate doc_id jl-1 (first on line 1)",
    "corpus.jsonl line 4": 'missing or empty "text" field',
    "corpus.jsonl line 5": "expected a JSON object, got list",
}
GOOD: dict[str, bytes] = {
    "good-notes.md": "# Harbour notes\nThe harbourmaster Tobias Wren inspected the breakwater at Port Sallow."
                     .encode("utf-8"),
    "latin1.txt": "Café crème at the Müller façade in São Paulo; Zoë Brontë chaired the naïve jury.".encode("latin-1"),
    "utf16-bom.txt": "Ödön Varga of the Velmora Marine Institute measured the tides at Kestrel Point."
                     .encode("utf-16"),
    "mixed-endings.md": b"First line about Port Sallow.\r\nSecond line about Carrow Sound.\nThird line.\r"
                        b"Fourth line about Hollow Bay.\r\n",
    "page.html": b"<html><head><title>Flood report</title><style>.hidden-style-rule{color:red}</style>"
                 b"<script>var leaked = 'SCRIPT_PAYLOAD_TEXT';</script></head><body><h1>The Great Flood</h1>"
                 b"<p>The flood reached Port Sallow in 1953.</p><noscript>NOSCRIPT_PAYLOAD</noscript>"
                 b"<script>document.write('SECOND_SCRIPT_PAYLOAD')</script></body></html>",
    "../../x.txt": b"A path traversal name: the Tidewater Shipping Cooperative met in Port Sallow.",
    LONG_NAME: b"A document with a very long name about the Velmora Coastal Railway.",
    UNICODE_NAME: "Ein Dokument über Käse aus Dunmore, mit Umlauten: Grüße aus Köln.".encode("utf-8"),
    "xss.txt": XSS_TEXT.encode("utf-8"),
    "korean.txt": KOREAN.encode("utf-8"),
    "chinese.txt": CHINESE.encode("utf-8"),
    "long-line.txt": LONG_LINE.encode("utf-8"),
    "corpus.jsonl": JSONL,
}
# document names the good uploads produce (JSONL lines are documents of their own)
GOOD_NAMES = ["good-notes.md", "latin1.txt", "utf16-bom.txt", "mixed-endings.md", "page.html", "x.txt",
              LONG_NAME_STORED, UNICODE_NAME, "xss.txt", "korean.txt", "chinese.txt",
              "long-line.txt", "Kestrel Point", "corpus.jsonl line 6"]


def counts(ws) -> dict[str, int]:
    status = ws.status()
    return {k: status[k] for k in COUNT_KEYS}


@pytest.fixture(scope="module")
def uploaded(sample_workspace_dir, tmp_path_factory):
    """A copy of the sample workspace after ONE upload batch of every bad and good file."""
    import shutil

    from core.api import index_uploads
    from core.auth import LOCAL_ADMIN
    from core.workspace import Workspace

    root = tmp_path_factory.mktemp("bad_inputs")
    path = root / "deep" / "ws"
    shutil.copytree(sample_workspace_dir, path)
    ws = Workspace(path)
    ws.save_settings(ws.settings.with_overrides({"max_document_mb": LIMIT_MB}))
    before = counts(ws)
    sample_docs = {d.doc_id for d in ws.store.documents()}
    files = [(name, data) for name, (data, _) in BAD.items()]
    files[3:3] = list(GOOD.items())  # good files in the middle of the batch
    events = []
    report = index_uploads(LOCAL_ADMIN, ws, files, progress=events.append)
    yield {"ws": ws, "root": root, "before": before, "report": report, "sample_docs": sample_docs,
           "events": events}
    ws.close()


def rows_by_name(ws) -> dict[str, dict]:
    return {r["name"]: r for r in ws.documents_table()}


def chunk_texts(ws, name: str) -> list[str]:
    doc = rows_by_name(ws)[name]
    return [c.text for c in ws.store.chunks_of(doc["doc_id"])]


def test_every_bad_file_fails_alone_with_a_clear_reason(uploaded):
    ws, report = uploaded["ws"], uploaded["report"]
    rows = rows_by_name(ws)
    expected = {name: reason for name, (_, reason) in BAD.items()} | JSONL_FAILURES
    for name, reason in expected.items():
        assert name in rows, f"{name} has no document row"
        assert rows[name]["status"] == "failed", (name, rows[name])
        assert reason in rows[name]["error"], (name, rows[name]["error"])
        assert "Traceback" not in rows[name]["error"]
    reported = {f["name"]: f["reason"] for f in report.failed}
    assert set(reported) == set(expected)
    failed_rows = {n for n, r in rows.items() if r["status"] == "failed"}
    assert failed_rows == set(expected)


def test_the_good_files_of_the_same_batch_are_indexed(uploaded):
    ws, report = uploaded["ws"], uploaded["report"]
    rows = rows_by_name(ws)
    for name in GOOD_NAMES:
        assert name in rows, f"{name} missing: {sorted(rows)}"
        assert rows[name]["status"] == "processed", (name, rows[name])
        assert rows[name]["chunks"] >= 1 and rows[name]["error"] == ""
    assert report.processed == len(GOOD_NAMES)
    assert rows["Kestrel Point"]["doc_id"] == "jl-1"  # the JSONL doc_id is kept
    assert "Kestrel Point lighthouse" in chunk_texts(ws, "Kestrel Point")[0]  # the first jl-1, not the duplicate


def test_the_rest_of_the_workspace_is_intact(uploaded):
    ws, before = uploaded["ws"], uploaded["before"]
    after = counts(ws)
    n_bad = len(BAD) + len(JSONL_FAILURES)
    assert after["documents"] == before["documents"] + len(GOOD_NAMES) + n_bad
    assert after["processed"] == before["processed"] + len(GOOD_NAMES)
    assert after["failed"] == before["failed"] + n_bad
    assert after["chunks"] > before["chunks"] and after["tree_nodes"] >= before["tree_nodes"]
    assert ws.status()["pending"] == 0
    sample = {d.doc_id: d.status for d in ws.store.documents() if d.doc_id in uploaded["sample_docs"]}
    assert len(sample) == len(uploaded["sample_docs"]) and set(sample.values()) == {"processed"}
    # vectors agree with the database: nothing to repair
    from core.indexing.reconcile import reconcile

    assert reconcile(ws) == {}
    # failed documents own no chunks, graph fragments or tree nodes
    failed = [d.doc_id for d in ws.store.documents(status="failed")]
    conn = ws.store.conn
    for doc_id in failed:
        assert conn.execute("SELECT count(*) FROM chunks WHERE doc_id=?", (doc_id,)).fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM entity_fragments WHERE doc_id=?", (doc_id,)).fetchone()[0] == 0


def test_encodings_and_line_endings_are_decoded(uploaded):
    ws = uploaded["ws"]
    assert "Café crème at the Müller façade in São Paulo; Zoë Brontë" in chunk_texts(ws, "latin1.txt")[0]
    utf16 = chunk_texts(ws, "utf16-bom.txt")[0]
    assert utf16.startswith("Ödön Varga") and "\ufeff" not in utf16
    mixed = chunk_texts(ws, "mixed-endings.md")[0]
    assert "\r" not in mixed
    assert mixed.split("\n")[:4] == ["First line about Port Sallow.", "Second line about Carrow Sound.",
                                     "Third line.", "Fourth line about Hollow Bay."]


def test_html_scripts_and_styles_are_stripped(uploaded):
    ws = uploaded["ws"]
    text = "\n".join(chunk_texts(ws, "page.html"))
    assert "The flood reached Port Sallow in 1953." in text and "The Great Flood" in text
    everything = "\n".join(r[0] for r in ws.store.conn.execute("SELECT text FROM chunks"))
    for payload in ("SCRIPT_PAYLOAD_TEXT", "SECOND_SCRIPT_PAYLOAD", "NOSCRIPT_PAYLOAD", "hidden-style-rule",
                    "var leaked"):
        assert payload not in everything
    tree_text = "\n".join(n.text for n in ws.store.tree_nodes())
    assert "SCRIPT_PAYLOAD_TEXT" not in tree_text


def test_hostile_names_are_reduced_and_nothing_is_written_outside(uploaded):
    ws, root = uploaded["ws"], uploaded["root"]
    rows = rows_by_name(ws)
    assert "x.txt" in rows and not any("/" in n or "\\" in n or ".." in n for n in rows)
    assert len(LONG_NAME) > 300 and LONG_NAME not in rows
    assert LONG_NAME_STORED in rows and len(LONG_NAME_STORED) == 200
    assert UNICODE_NAME in rows
    # uploads never become files: nothing named x.txt anywhere near the workspace
    assert not list(root.rglob("x.txt"))
    for parent in (ws.path.parent, ws.path.parent.parent, Path.cwd(), Path.cwd().parent):
        assert not (parent / "x.txt").exists()
    assert not any(p.suffix == ".txt" for p in ws.path.rglob("*"))


def test_markup_in_text_is_stored_verbatim(uploaded):
    ws = uploaded["ws"]
    text = chunk_texts(ws, "xss.txt")[0]
    assert '<script>alert("xss")</script>' in text and "<img src=x onerror=alert(1)>" in text
    # the graphs hold it as plain text too (nothing was parsed as markup or dropped)
    assert "Mara Quill" in ws.knowledge_graph() or "mara quill" in ws.knowledge_graph()


def test_other_scripts_and_a_very_long_line_are_indexed(uploaded):
    ws = uploaded["ws"]
    assert "서울은 대한민국의 수도이다." in chunk_texts(ws, "korean.txt")[0]
    assert "北京是中华人民共和国的首都。" in chunk_texts(ws, "chinese.txt")[0]
    long_chunks = chunk_texts(ws, "long-line.txt")
    assert len(long_chunks) >= 3  # ~7k tokens on a single line are still split into 1200-token chunks
    assert all("\n" not in c for c in long_chunks)
    rows = rows_by_name(ws)
    assert ws.store.tree_nodes(doc_id=rows["long-line.txt"]["doc_id"])  # it has a summary subtree


def test_the_default_upload_limit_refuses_a_50_mb_file(tmp_path):
    from core.api import index_uploads
    from core.auth import LOCAL_ADMIN
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "ws")
    try:
        data = b"tidewater " * (5 * 2**20 + 1)  # 50 MB + 10 bytes
        report = index_uploads(LOCAL_ADMIN, ws, [("big.txt", data)])
        reason = "the file is too large (52,428,810 bytes; the limit is 52,428,800 bytes)"
        assert report.failed == [{"name": "big.txt", "reason": reason}]
        assert ws.status()["failed"] == 1 and ws.status()["chunks"] == 0
    finally:
        ws.close()


@pytest.mark.parametrize("question", ["", "   \n\t "])
def test_an_empty_question_is_a_clear_value_error(uploaded, question):
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN

    with pytest.raises(ValueError, match="question is empty"):
        run_modes(LOCAL_ADMIN, uploaded["ws"], question, ["naive"])


def test_a_10000_character_question_gets_a_result_from_every_mode(uploaded):
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN

    base = ("Who inspected the breakwater at Port Sallow, and how is the Velmora Marine Institute connected "
            "to the Tidewater Shipping Cooperative and Kestrel Point? ")
    question = (base * (10_000 // len(base) + 1))[:10_000]
    assert len(question) == 10_000
    from core.retrieval.registry import modes as registered_modes

    modes = registered_modes()
    results = run_modes(LOCAL_ADMIN, uploaded["ws"], question, modes)
    assert list(results) == modes
    for mode, result in results.items():
        assert result.mode == mode and result.query == question
        assert result.answer is not None and isinstance(result.answer.text, str)
        assert result.context_tokens >= 0
    assert results["naive"].chunks, "naive found nothing for a long but meaningful question"
