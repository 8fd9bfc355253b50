"""Bounded parsing (issue 20): hostile files fail alone, fast, naming the limit and the setting.

* The amplification files of the issue, made here (``hostile_files``): a PDF whose pages share one
  large compressed content stream, a PDF over the page limit, a DOCX whose XML expands hundreds of
  times. Through ``core.api.index_uploads`` (what the Documents page calls) with a normal file in
  the same batch: each hostile file fails in ≤ 10 s with the limit named, the normal ones are
  indexed, and this process (the app's) grows by < 200 MB.
* Loaders that spin, allocate or block for ever, registered for made-up extensions, prove that the
  worker's CPU-time, address-space and wall-clock limits hold by themselves (not only the caps), and
  that the next file of the batch still parses.
* Each cap on its own, on small files, in-process formats included (text, JSONL).
"""
from __future__ import annotations

import io
import json
import time

import psutil
import pytest

import hostile_files as H
from conftest import HashEmbedder
from core.loaders import load_bytes, load_uploads
from core.parsing.limits import ParseLimits
from core.parsing.registry import loader_for, register_loader, unregister_loader

NORMAL_TEXT = ("Hana Ito of the Velmora Marine Institute rebuilt the Kestrel Point lighthouse in 1998. "
               "The lighthouse guards the entrance to Carrow Sound.")


def small_docx(text: str) -> bytes:
    import docx

    document = docx.Document()
    document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def only_failure(result, name: str) -> str:
    docs, failures = result
    assert docs == [], [d.name for d in docs]
    assert [f.name for f in failures] == [name], failures
    return failures[0].reason


# ----------------------------------------------------------------------------- each cap alone

def test_shared_stream_pdf_is_refused_by_the_expansion_ratio() -> None:
    data = H.shared_stream_pdf(pages=20, repeats=40_000)
    assert len(data) < 20_000  # a few KB on disk
    started = time.perf_counter()
    reason = only_failure(load_bytes("shared.pdf", data), "shared.pdf")
    assert time.perf_counter() - started < 10
    assert "100× limit" in reason and "`max_archive_ratio`" in reason and "Settings" in reason


def test_the_uncompressed_size_cap_applies_to_pdf_content_streams() -> None:
    data = H.shared_stream_pdf(pages=20, repeats=40_000)  # ~20 MB of page content
    limits = ParseLimits(max_archive_ratio=10_000, max_archive_uncompressed_mb=5)
    reason = only_failure(load_bytes("shared.pdf", data, limits=limits), "shared.pdf")
    assert "over the 5 MB limit" in reason and "`max_archive_uncompressed_mb`" in reason


def test_pdf_over_the_page_limit_is_refused_before_extraction() -> None:
    data = H.shared_stream_pdf(pages=3_000, repeats=50)
    reason = only_failure(load_bytes("many.pdf", data), "many.pdf")
    assert reason.startswith("the document has 3,000 pages, over the 2,000-page limit")
    assert "`max_document_pages`" in reason


def test_the_character_cap_stops_pdf_extraction() -> None:
    data = H.shared_stream_pdf(pages=5, repeats=400)  # ~8,000 characters a page
    limits = ParseLimits(max_archive_ratio=10_000, max_document_chars=10_000)
    reason = only_failure(load_bytes("long.pdf", data, limits=limits), "long.pdf")
    assert "10,000-character limit (stopped at page 2 of 5)" in reason and "`max_document_chars`" in reason
    docs, failures = load_bytes("long.pdf", data, limits=ParseLimits(max_archive_ratio=10_000))
    assert failures == [] and len(docs[0].text) > 30_000  # the same file under the default cap


def test_expanding_docx_is_refused_from_the_zip_directory() -> None:
    data = H.expanding_docx(paragraphs=200_000)
    assert len(data) < 1_000_000
    started = time.perf_counter()
    reason = only_failure(load_bytes("bomb.docx", data), "bomb.docx")
    assert time.perf_counter() - started < 10
    assert "zip members expand to" in reason and "100× limit" in reason and "`max_archive_ratio`" in reason
    limits = ParseLimits(max_archive_ratio=10_000, max_archive_uncompressed_mb=10)
    reason = only_failure(load_bytes("bomb.docx", data, limits=limits), "bomb.docx")
    assert "over the 10 MB limit" in reason and "`max_archive_uncompressed_mb`" in reason


def test_a_docx_of_many_members_is_refused_before_its_directory_is_read() -> None:
    from core.parsing.limits import zip_entry_bound

    data = H.many_member_docx(extra_members=300_000)
    assert zip_entry_bound(data) == 300_003  # the zip64 directory counted exactly
    started = time.perf_counter()
    reason = only_failure(load_bytes("members.docx", data), "members.docx")
    assert time.perf_counter() - started < 5  # opening its zip directory alone took 6 s and 230 MB
    assert "300,003" in reason and "10,000-member limit" in reason and "`max_archive_entries`" in reason
    small = H.many_member_docx(extra_members=20)
    assert zip_entry_bound(small) == 23
    docs, failures = load_bytes("members.docx", small)
    assert failures == [] and docs[0].text == "Harbour ledger"
    reason = only_failure(load_bytes("members.docx", small, limits=ParseLimits(max_archive_entries=22)), "members.docx")
    assert "23, over the 22-member limit" in reason


def test_the_character_cap_stops_docx_extraction() -> None:
    data = H.expanding_docx(paragraphs=300, text="ledger " * 10)
    limits = ParseLimits(max_archive_ratio=10_000, max_document_chars=5_000)
    reason = only_failure(load_bytes("long.docx", data, limits=limits), "long.docx")
    assert "5,000-character limit" in reason
    docs, failures = load_bytes("long.docx", data, limits=ParseLimits(max_archive_ratio=10_000))
    assert failures == [] and docs[0].text.count("ledger") == 3_000


def test_the_character_cap_applies_to_in_process_formats() -> None:
    limits = ParseLimits(max_document_chars=1_000)
    assert "1,000-character limit" in only_failure(load_bytes("big.txt", b"word " * 400, limits=limits), "big.txt")
    assert "1,000-character limit" in only_failure(
        load_bytes("big.html", b"<p>" + b"word " * 400 + b"</p>", limits=limits), "big.html")
    lines = [json.dumps({"doc_id": "a", "text": "short text"}), json.dumps({"doc_id": "b", "text": "word " * 400})]
    docs, failures = load_bytes("corpus.jsonl", "\n".join(lines).encode(), limits=limits)
    assert [d.doc_id for d in docs] == ["a"]  # the long line fails alone
    assert failures[0].name == "corpus.jsonl line 2" and "`max_document_chars`" in failures[0].reason


def test_normal_files_pass_every_cap() -> None:
    for name, data in (("a.pdf", H.text_pdf("Kestrel Point lighthouse")), ("a.docx", small_docx(NORMAL_TEXT)),
                       ("a.html", f"<p>{NORMAL_TEXT}</p>".encode()), ("a.txt", NORMAL_TEXT.encode())):
        docs, failures = load_bytes(name, data)
        assert failures == [] and len(docs) == 1, (name, failures)


def test_limits_come_from_the_settings() -> None:
    from core.settings import Settings

    settings = Settings().with_overrides({"max_document_pages": 7, "parse_memory_mb": 700})
    limits = ParseLimits.from_settings(settings)
    assert limits.max_document_pages == 7 and limits.parse_memory_mb == 700
    defaults = ParseLimits.from_settings(Settings())
    assert defaults == ParseLimits()  # the library's defaults are the settings' defaults
    for name in ParseLimits.__dataclass_fields__:
        assert Settings.model_fields[name].metadata, name  # bounded (ge/le) settings
        assert any(getattr(m, "le", None) is not None for m in Settings.model_fields[name].metadata), name


# ----------------------------------------------------------------------------- the worker's own limits

@pytest.fixture
def hostile_loaders():
    """Register the test-only loaders for made-up extensions; forget them afterwards."""
    loaders = {".spin": H.spin_loader, ".alloc": H.allocate_loader, ".sleep": H.sleep_loader}
    for ext, loader in loaders.items():
        register_loader(ext, loader, isolated=True)
    yield loaders
    for ext in loaders:
        unregister_loader(ext)
    assert loader_for(".spin") is None


@pytest.mark.slow
def test_the_cpu_limit_stops_a_spinning_parser(hostile_loaders) -> None:
    limits = ParseLimits(parse_cpu_seconds=1, parse_timeout_s=120)  # the wall clock must not be what stops it
    started = time.perf_counter()
    docs, failures = load_uploads([("forever.spin", b"x"), ("after.html", b"<p>still parsed</p>")], limits=limits)
    assert [d.text for d in docs] == ["still parsed"]  # the next file gets a fresh worker
    assert failures[0].name == "forever.spin"
    assert "1-second CPU limit" in failures[0].reason and "`parse_cpu_seconds`" in failures[0].reason
    assert time.perf_counter() - started < 60


@pytest.mark.slow
def test_the_memory_limit_stops_an_allocating_parser(hostile_loaders) -> None:
    limits = ParseLimits(parse_memory_mb=400, parse_cpu_seconds=60, parse_timeout_s=120)
    rss_before = psutil.Process().memory_info().rss
    docs, failures = load_uploads([("hungry.alloc", b"x"), ("after.txt", b"still loaded")], limits=limits)
    assert [d.text for d in docs] == ["still loaded"]
    assert failures[0].name == "hungry.alloc"
    assert "400 MB memory limit" in failures[0].reason and "`parse_memory_mb`" in failures[0].reason
    assert psutil.Process().memory_info().rss - rss_before < 100 * 2**20  # the allocation was the worker's


@pytest.mark.slow
def test_the_wall_clock_timeout_stops_a_blocked_parser(hostile_loaders) -> None:
    limits = ParseLimits(parse_timeout_s=2)
    started = time.perf_counter()
    docs, failures = load_uploads([("stuck.sleep", b"x"), ("after.pdf", H.text_pdf("still parsed"))], limits=limits)
    assert [d.text for d in docs] == ["still parsed"]
    assert "2-second limit" in failures[0].reason and "`parse_timeout_s`" in failures[0].reason
    assert time.perf_counter() - started < 60


def test_a_loader_the_worker_cannot_import_fails_alone() -> None:
    def local_loader(name, data, limits):  # a closure: not importable by module and name
        return [], []

    register_loader(".local", local_loader, isolated=True)
    try:
        docs, failures = load_uploads([("x.local", b"x"), ("y.txt", b"fine")])
    finally:
        unregister_loader(".local")
    assert [d.text for d in docs] == ["fine"]
    assert failures[0].name == "x.local" and "could not" in failures[0].reason


# ----------------------------------------------------------------------------- end to end

@pytest.mark.slow
def test_hostile_batch_through_index_uploads(tmp_path) -> None:
    """The issue's attack: hostile files plus normal ones in one upload batch."""
    from core.api import index_uploads
    from core.auth import LOCAL_ADMIN
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    try:
        index_uploads(LOCAL_ADMIN, ws, [("warm-up.txt", b"Tobias Wren sailed from Carrow Sound to Port Sallow in 1921.")])
        hostile = {"shared-stream.pdf": (H.shared_stream_pdf(pages=20, repeats=40_000), "`max_archive_ratio`"),
                   "many-pages.pdf": (H.shared_stream_pdf(pages=3_000, repeats=50), "`max_document_pages`"),
                   "expanding.docx": (H.expanding_docx(paragraphs=200_000), "`max_archive_ratio`")}
        normal = {"normal.docx": small_docx(NORMAL_TEXT), "normal.pdf": H.text_pdf("Kestrel Point lighthouse")}
        for name, (data, setting) in hostile.items():  # each alone: fast, the limit named
            started = time.perf_counter()
            reason = only_failure(load_bytes(name, data), name)
            assert time.perf_counter() - started <= 10, name
            assert setting in reason, (name, reason)
        batch = [("expanding.docx", hostile["expanding.docx"][0]), ("normal.docx", normal["normal.docx"]),
                 ("shared-stream.pdf", hostile["shared-stream.pdf"][0]), ("normal.pdf", normal["normal.pdf"]),
                 ("many-pages.pdf", hostile["many-pages.pdf"][0])]
        process = psutil.Process()
        rss_before = process.memory_info().rss
        started = time.perf_counter()
        report = index_uploads(LOCAL_ADMIN, ws, batch)
        elapsed = time.perf_counter() - started
        grown = process.memory_info().rss - rss_before
        rows = {r["name"]: r for r in ws.documents_table()}
        for name, (_, setting) in hostile.items():
            assert rows[name]["status"] == "failed" and setting in rows[name]["error"], rows[name]
        for name in normal:
            assert rows[name]["status"] == "processed" and rows[name]["chunks"] >= 1, rows[name]
        assert report.processed == 2 and len(report.failed) == 3
        assert grown < 200 * 2**20, f"the app process grew by {grown / 2**20:.0f} MB"
        assert elapsed < 3 * 10 + 30  # three hostile files, each ≤ 10 s, plus indexing two small ones
    finally:
        ws.close()
