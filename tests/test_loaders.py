"""Tests of core.loaders: every format, encodings, hostile names and inputs, folders, JSONL corpora."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import hostile_files as H
from conftest import SHARED_DATA, blank_pdf
from core.loaders import SUPPORTED_EXTENSIONS, load_bytes, load_path, load_paths, sanitize_name
from core.types import LoadFailure

PNG_BYTES = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(64))
MUSIQUE = SHARED_DATA / "dev_musique_full" / "corpus.jsonl"


def one_doc(result):
    docs, failures = result
    assert failures == [], failures
    assert len(docs) == 1
    return docs[0]


def one_failure(result):
    docs, failures = result
    assert docs == []
    assert len(failures) == 1, failures
    return failures[0]


# --------------------------------------------------------------------------- text and encodings

def test_supported_extensions() -> None:
    assert SUPPORTED_EXTENSIONS == {".txt", ".md", ".markdown", ".pdf", ".docx", ".html", ".htm", ".jsonl"}


def test_txt_utf8() -> None:
    doc = one_doc(load_bytes("notes.txt", "Grüße, café — ok\n".encode("utf-8")))
    assert doc.text == "Grüße, café — ok\n"
    assert doc.name == "notes.txt" and doc.source == "notes.txt" and doc.doc_id is None


def test_txt_utf8_bom_is_removed() -> None:
    doc = one_doc(load_bytes("bom.txt", b"\xef\xbb\xbf" + "Zürich".encode("utf-8")))
    assert doc.text == "Zürich"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_txt_utf16_with_bom(encoding: str) -> None:
    data = "Ωmega naïve 한국어\r\nline two".encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    doc = one_doc(load_bytes("wide.txt", data))
    assert doc.text == "Ωmega naïve 한국어\nline two"


def test_txt_latin1() -> None:
    text = "Café crème brûlée, naïve façade. Ça coûte cher.\n"
    doc = one_doc(load_bytes("legacy.txt", text.encode("latin-1")))
    assert doc.text == text


def test_mixed_line_endings_normalised() -> None:
    doc = one_doc(load_bytes("mixed.md", b"# a\r\nb\rc\nd\r\n"))
    assert doc.text == "# a\nb\nc\nd\n"
    assert "\r" not in doc.text


@pytest.mark.parametrize("data", [b"", b"   \n\t\r\n  ", "\ufeff  \n".encode("utf-8"), "  ".encode("utf-16")])
def test_empty_and_whitespace_only(data: bytes) -> None:
    failure = one_failure(load_bytes("empty.txt", data))
    assert failure.reason == "the document is empty"
    assert failure.name == "empty.txt"


def test_zero_byte_file_on_disk(tmp_path: Path) -> None:
    (tmp_path / "zero.md").write_bytes(b"")
    assert one_failure(load_path(tmp_path / "zero.md")).reason == "the document is empty"


def test_binary_with_txt_name() -> None:
    data = bytes(range(256)) * 4
    failure = one_failure(load_bytes("data.txt", data))
    assert failure.reason.startswith("looks like a binary file")
    assert "not text" in failure.reason


def test_png_bytes_under_txt_name() -> None:
    failure = one_failure(load_bytes("photo.txt", PNG_BYTES))
    assert failure.reason == "looks like a binary file (PNG image), not text"


def test_pdf_bytes_under_txt_name() -> None:
    assert "PDF document" in one_failure(load_bytes("x.txt", blank_pdf())).reason


def test_png_file_is_unsupported() -> None:
    failure = one_failure(load_bytes("photo.png", PNG_BYTES))
    assert failure.reason.startswith("unsupported file type .png (supported: ")
    assert ".pdf" in failure.reason and ".jsonl" in failure.reason
    assert one_failure(load_bytes("pic.JPG", b"\xff\xd8\xff\xe0")).reason.startswith("unsupported file type .jpg")


def test_unknown_and_missing_extension() -> None:
    assert one_failure(load_bytes("archive.xyz", b"hello")).reason.startswith("unsupported file type .xyz")
    assert "no extension" in one_failure(load_bytes("README", b"hello")).reason


def test_korean_and_chinese_text() -> None:
    text = "한국어 문서입니다. 그래프 검색.\n中文文档，检索增强生成。\n日本語も少し。"
    for encoding in ("utf-8", "utf-16"):
        assert one_doc(load_bytes("cjk.txt", text.encode(encoding))).text == text


def test_extremely_long_single_line() -> None:
    text = "word " * 400_000  # ~2 MB, no newline
    doc = one_doc(load_bytes("long.txt", text.encode("utf-8")))
    assert doc.text == text
    assert "\n" not in doc.text


def test_script_tag_in_txt_is_kept_verbatim() -> None:
    text = "before <script>alert(1)</script> after & <b>bold</b>"
    assert one_doc(load_bytes("xss.txt", text.encode())).text == text


def test_oversize_refused_with_limit() -> None:
    failure = one_failure(load_bytes("big.txt", b"a" * 2048, max_bytes=1024))
    assert "too large" in failure.reason and "1 KB" in failure.reason and "2 KB" in failure.reason


def test_oversize_file_checked_before_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 5000)

    def no_open(self: Path, *args: object, **kwargs: object) -> None:  # size is checked before opening
        raise AssertionError("file was opened")

    monkeypatch.setattr(Path, "open", no_open)
    monkeypatch.setattr(Path, "read_bytes", no_open)
    failure = one_failure(load_path(big, max_bytes=100))
    assert failure.reason == "the file is too large (4.9 KB; the limit is 100 bytes)"


# --------------------------------------------------------------------------- HTML, PDF, DOCX

def test_html_strips_script_style_and_keeps_paragraphs() -> None:
    html = (
        "<html><head><title>Page</title><style>p {color: red}</style>"
        "<script>alert('x')</script></head><body>"
        "<h1>Heading</h1><p>First   paragraph\nwraps here.</p><!-- secret comment -->"
        "<noscript>enable js</noscript><template><p>tmpl</p></template>"
        "<p>Second<br>line &amp; more</p><ul><li>one</li><li>two</li></ul></body></html>"
    )
    doc = one_doc(load_bytes("page.html", html.encode("utf-8")))
    for gone in ("alert", "color", "secret", "enable js", "tmpl"):
        assert gone not in doc.text
    assert "Heading\n\nFirst paragraph wraps here.\n\nSecond\nline & more" in doc.text
    assert doc.text.endswith("one\n\ntwo")
    assert doc.text.startswith("Page\n\nHeading")  # the <title> is kept, the rest of <head> is not
    assert doc.name == "page.html"


def test_html_respects_meta_charset_and_empty_html() -> None:
    html = '<html><head><meta charset="windows-1252"></head><body><p>Café</p></body></html>'
    assert one_doc(load_bytes("old.htm", html.encode("cp1252"))).text == "Café"
    body_only_script = b"<html><body><script>var a = 1;</script></body></html>"
    assert one_failure(load_bytes("s.html", body_only_script)).reason == "the document is empty"


def test_pdf_with_text() -> None:
    doc = one_doc(load_bytes("paper.pdf", H.text_pdf("Hello graph retrieval")))
    assert "Hello graph retrieval" in doc.text


def test_pdf_without_text_layer() -> None:
    failure = one_failure(load_bytes("scan.pdf", blank_pdf()))
    assert failure.reason == "the PDF has no text layer (scanned?); OCR it first"


@pytest.mark.parametrize("data", [b"%PDF-1.4\nthis is not really a pdf\n", b"plain text named pdf", PNG_BYTES])
def test_malformed_pdf(data: bytes) -> None:
    failure = one_failure(load_bytes("broken.pdf", data))
    assert failure.reason.startswith("could not read the PDF: ")


def test_docx_with_paragraph_and_table(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("Intro paragraph about graphs.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Name"
    table.cell(0, 1).text = "Role"
    table.cell(1, 0).text = "Alice"
    table.cell(1, 1).text = "Engineer"
    document.add_paragraph("Closing words.")
    path = tmp_path / "report.docx"
    document.save(path)
    doc = one_doc(load_path(path))
    assert doc.text == "Intro paragraph about graphs.\n\nName | Role\n\nAlice | Engineer\n\nClosing words."
    assert doc.name == "report.docx"


@pytest.mark.parametrize("data", [b"not a zip at all", b"PK\x03\x04" + b"\x00" * 40])
def test_corrupt_docx(data: bytes) -> None:
    assert one_failure(load_bytes("bad.docx", data)).reason.startswith("could not read the DOCX: ")


# --------------------------------------------------------------------------- JSONL corpora

def test_jsonl_corpus_with_bad_lines(tmp_path: Path) -> None:
    lines = [
        json.dumps({"doc_id": "d1", "title": "Alpha", "text": "Alpha text.", "source": "wiki"}),
        "",
        json.dumps({"doc_id": "d2", "title": "", "text": "No title here."}),
        '{"doc_id": "d3", "title": "Broken", "text": ',
        json.dumps({"doc_id": "d1", "title": "Again", "text": "Duplicate."}),
        json.dumps({"doc_id": "d4", "title": "No text"}),
        json.dumps(["a", "list"]),
        json.dumps({"title": "Anonymous", "text": "Has no doc_id.\r\nSecond line."}),
        json.dumps({"doc_id": "d5", "title": "Empty", "text": "   "}),
        "   ",
        json.dumps({"doc_id": "d6", "title": "Last", "text": "Still loaded."}),
    ]
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    docs, failures = load_path(path)
    assert [d.doc_id for d in docs] == ["d1", "d2", None, "d6"]
    assert docs[0].name == "Alpha" and docs[0].text == "Alpha\nAlpha text." and docs[0].source == "corpus.jsonl"
    assert docs[1].name == "d2" and docs[1].text == "No title here."
    assert docs[2].name == "Anonymous" and docs[2].text == "Anonymous\nHas no doc_id.\nSecond line."
    by_name = {f.name: f.reason for f in failures}
    assert list(by_name) == [f"corpus.jsonl line {n}" for n in (4, 5, 6, 7, 9)]
    assert by_name["corpus.jsonl line 4"].startswith("not valid JSON")
    assert by_name["corpus.jsonl line 5"] == "duplicate doc_id d1 (first on line 1)"
    assert by_name["corpus.jsonl line 6"] == 'missing or empty "text" field'
    assert by_name["corpus.jsonl line 7"] == "expected a JSON object, got list"
    assert by_name["corpus.jsonl line 9"] == 'missing or empty "text" field'
    # the same bytes as an upload give the same result
    up_docs, up_failures = load_bytes("corpus.jsonl", path.read_bytes())
    assert up_docs == docs and up_failures == failures


def test_jsonl_empty_and_binary() -> None:
    assert one_failure(load_bytes("c.jsonl", b"\n\n  \n")).reason == "the document is empty"
    assert one_failure(load_bytes("c.jsonl", PNG_BYTES)).reason == "looks like a binary file (PNG image), not text"


def test_jsonl_odd_values_and_failure_cap() -> None:
    data = b'{"doc_id": 7, "title": 3, "text": "t"}\n{"doc_id": {}, "text": "t"}\n{"text": 5}\n' + b"[" * 50_000
    docs, failures = load_bytes("odd.jsonl", data)
    assert [(d.doc_id, d.name, d.text) for d in docs] == [("7", "3", "3\nt")]
    assert [f.reason for f in failures] == ['"doc_id" must be a string', '"text" must be a string',
                                            "not valid JSON (nested too deeply)"]
    docs, failures = load_bytes("many.jsonl", b"oops\n" * 500)
    assert docs == [] and len(failures) == 201
    assert failures[-1] == LoadFailure("many.jsonl", "300 more bad lines not listed")
    utf16 = one_failure(load_bytes("wide.jsonl", '{"text": "a"}'.encode("utf-16")))
    assert "UTF-16" in utf16.reason


@pytest.mark.skipif(not MUSIQUE.exists(), reason="shared MuSiQue package not present")
def test_loads_shared_musique_corpus() -> None:
    docs, failures = load_path(MUSIQUE)
    assert failures == []
    assert len(docs) == 1006
    assert all(d.doc_id and d.doc_id.startswith("mq_") for d in docs)
    assert len({d.doc_id for d in docs}) == 1006
    first = json.loads(MUSIQUE.open(encoding="utf-8").readline())
    assert docs[0].doc_id == first["doc_id"] and docs[0].text.startswith(first["title"] + "\n")


# --------------------------------------------------------------------------- names, folders

def test_path_traversal_names_are_reduced() -> None:
    assert one_doc(load_bytes("../../etc/x.txt", b"hi")).name == "x.txt"
    assert one_doc(load_bytes("..\\..\\windows\\y.md", b"hi")).name == "y.md"
    assert sanitize_name("a/b/\x00evil\x1b[31m.txt") == "evil[31m.txt"
    assert sanitize_name("..") == "unnamed"
    assert sanitize_name("/abs/.hidden.txt") == "hidden.txt"
    assert sanitize_name("report\u202etxt.md") == "reporttxt.md"


def test_very_long_name_is_capped_keeping_extension() -> None:
    doc = one_doc(load_bytes("n" * 5000 + ".txt", b"content"))
    assert len(doc.name) <= 200
    assert doc.name.endswith(".txt")


def test_non_ascii_names_kept() -> None:
    assert one_doc(load_bytes("보고서_データ_Ünïcode.md", b"text")).name == "보고서_データ_Ünïcode.md"


def test_folder_loading(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("bee", encoding="utf-8")
    (tmp_path / "a.md").write_text("ay", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.html").write_text("<p>sea</p>", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(PNG_BYTES)
    (tmp_path / ".hidden.txt").write_text("secret", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config.txt").write_text("secret", encoding="utf-8")
    (tmp_path / "empty.txt").write_bytes(b"")
    docs, failures = load_path(tmp_path)
    assert [d.name for d in docs] == ["a.md", "b.txt", "sub/c.html"]
    assert [d.text for d in docs] == ["ay", "bee", "sea"]
    assert [(f.name, f.reason.split(" (")[0]) for f in failures] == [
        ("empty.txt", "the document is empty"),
        ("image.png", "unsupported file type .png"),
    ]
    # the same folder twice via load_paths, plus a missing path
    docs2, failures2 = load_paths([tmp_path, tmp_path / "missing.txt"])
    assert len(docs2) == 3 and failures2[-1].reason == "no such file or folder"


def test_one_bad_file_does_not_stop_others(tmp_path: Path) -> None:
    (tmp_path / "1.pdf").write_bytes(b"garbage")
    (tmp_path / "2.docx").write_bytes(b"garbage")
    (tmp_path / "3.txt").write_bytes(PNG_BYTES)
    (tmp_path / "4.txt").write_text("fine", encoding="utf-8")
    docs, failures = load_path(tmp_path)
    assert [d.name for d in docs] == ["4.txt"]
    assert [f.name for f in failures] == ["1.pdf", "2.docx", "3.txt"]


def test_empty_folder(tmp_path: Path) -> None:
    assert "no files" in one_failure(load_path(tmp_path)).reason
