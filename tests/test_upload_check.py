"""A file far larger than the rest of an upload is flagged before indexing with its expected time,
from the workspace's own measured throughput (``ui.upload_check``)."""
from __future__ import annotations

from ui.upload_check import (DEFAULT_TOKENS_PER_S, estimate_tokens, large_upload_notes, measured_tokens_per_s)

INDEXED = [{"status": "processed", "tokens": 1_200, "seconds": 3.0}] * 11  # 13,200 tokens in 33 s = 400 tokens/s


def test_the_far_larger_file_is_flagged_with_its_size_ratio_and_expected_time():
    files = [("a.md", 1_200), ("b.md", 1_300), ("c.md", 1_100), ("big.txt", 600_000)]
    [note] = large_upload_notes(files, INDEXED)
    assert note.startswith("big.txt is about 600,000 tokens, 500× the median of the other files: ")
    assert "expected to take about 25 min (at this workspace's measured 400 tokens/s)" in note


def test_similar_files_are_not_flagged_and_a_lone_long_file_is():
    assert large_upload_notes([("a.md", 1_200), ("b.md", 2_400), ("c.md", 15_000)], INDEXED) == []  # 8x the median
    [note] = large_upload_notes([("book.txt", 300_000)], [])
    assert note.startswith("book.txt is about 300,000 tokens: ")  # no reference size: no ratio claimed
    assert f"about 10 min (at an idle machine's {DEFAULT_TOKENS_PER_S:,.0f} tokens/s)" in note


def test_throughput_is_measured_only_over_enough_processed_text():
    assert measured_tokens_per_s(INDEXED) == (400.0, True)
    few = [{"status": "processed", "tokens": 500, "seconds": 1.0}, {"status": "failed", "tokens": 90_000, "seconds": 1}]
    assert measured_tokens_per_s(few) == (DEFAULT_TOKENS_PER_S, False)


def test_token_estimate_counts_text_and_extrapolates_a_long_one():
    assert estimate_tokens("note.md", b"The harbour of Port Sallow.") == 7
    long = ("word " * 600_000).encode()
    assert 590_000 <= estimate_tokens("long.txt", long) <= 610_000
    assert estimate_tokens("scan.pdf", b"x" * 8_000) == 1_000  # bytes, not text: a byte ratio


def test_a_pasted_name_with_slashes_keeps_every_part():
    """Pasted text is indexed as an upload, whose name the loader reads as a path: "Q1/Q2 notes" was
    indexed as "Q2 notes.txt". The name typed is kept whole, slashes as dashes."""
    from core.loaders import sanitize_name
    from ui.upload_check import pasted_document_name

    for typed, kept in [("Q1/Q2 notes", "Q1-Q2 notes"), ("a\\b/c", "a-b-c"), ("  plain  ", "plain"),
                        ("", "pasted-text"), ("   ", "pasted-text")]:
        assert pasted_document_name(typed) == kept
        assert sanitize_name(pasted_document_name(typed) + ".txt") == kept + ".txt"


def test_the_uploader_takes_a_zip_and_says_how_it_is_unpacked(tmp_path, monkeypatch):
    """20,000 files had not finished uploading after 15 minutes (2,000 took 75 s), where a JSONL of 100,000
    records uploads in under a second: the uploader's help says so. A .zip of documents was refused by the
    uploader ("application/zip files are not allowed") and its help said so; it is now accepted and unpacked on
    the server, and the help says how (each file a document named by its path, other types skipped, one level)
    and within which limits (the workspace's member count and unpacked size)."""
    from streamlit.testing.v1 import AppTest

    from conftest import ROOT

    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(tmp_path))
    for variable in ("RAGSCOPE_WORKSPACE", "RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "RAGSCOPE_ROLES"):
        monkeypatch.delenv(variable, raising=False)
    at = AppTest.from_file(str(ROOT / "pages" / "documents.py"), default_timeout=300).run()
    assert not at.exception, [e.value for e in at.exception]
    uploaders = at.get("file_uploader")
    assert len(uploaders) == 2  # the documents and the LightRAG import
    documents = uploaders[0].proto
    assert {".zip", ".md", ".jsonl"} <= set(documents.type), list(documents.type)
    assert "one JSONL file" in documents.help and "A .zip is unpacked on the server" in documents.help
    assert "named by its path in the zip" in documents.help and "listed as skipped" in documents.help
    assert "up to 10,000 files and 256 MB unpacked" in documents.help  # the workspace's limits, with separators
