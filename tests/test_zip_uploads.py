"""A ZIP of documents is unpacked on the server into separate documents (``core.loaders.archive``): each member
indexed or failing alone with its reason, named by its path in the zip, within the archive limits; the hostile
members of an attacker's zip fail alone; the CLI takes a .zip the same way. Each test fails on the code before
(a .zip was "unsupported file type .zip")."""
from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import time
import zipfile
from types import SimpleNamespace

import pytest

from conftest import ROOT
from core.loaders import load_bytes, load_uploads
from core.loaders.archive import SkippedFile, _Budget
from core.parsing.limits import LimitExceeded, ParseLimits

FLOOD = "# The flood\n\nIn 1953 the flood reached Port Sallow. Mayor Anna Reyes ordered the evacuation of the quay."
RAIL = "The Velmora Coastal Railway opened in 1894. It linked Port Sallow and Carrow."


def make_zip(members: dict[str, bytes | str], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name) if not name.endswith("@link") else _link(name)  # the name kept as written
            info.compress_type = method
            archive.writestr(info, data)
    return buffer.getvalue()


def _link(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name.removesuffix("@link"))
    info.external_attr = 0o120777 << 16  # a symbolic link (what `zip --symlinks` writes)
    return info


def _encrypted(data: bytes, name: str) -> bytes:
    """``data`` with the member ``name`` marked encrypted (bit 0 of its flags, local and central headers)."""
    out = bytearray(data)
    for signature, flags_at, name_at in ((b"PK\x03\x04", 6, 30), (b"PK\x01\x02", 8, 46)):
        at = out.find(signature)
        while at >= 0:
            if out[at + name_at:at + name_at + len(name)] == name.encode():
                struct.pack_into("<H", out, at + flags_at, struct.unpack_from("<H", out, at + flags_at)[0] | 1)
            at = out.find(signature, at + 4)
    return bytes(out)


def test_each_member_becomes_a_document_named_by_its_path_in_the_zip():
    jsonl = "\n".join(json.dumps({"doc_id": f"c{i}", "title": f"Passage {i}", "text": f"Text of passage {i}."})
                      for i in range(3))
    data = make_zip({"notes/flood.md": FLOOD, "rail.txt": RAIL, "corpus/passages.jsonl": jsonl, "notes/": "",
                     ".DS_Store": "x", "__MACOSX/notes/._flood.md": "x", "./extra/./plain.txt": "Plain words here."})
    docs, failures = load_bytes("upload.zip", data)
    assert failures == []
    assert [d.name for d in docs] == ["notes/flood.md", "rail.txt", "Passage 0", "Passage 1", "Passage 2",
                                      "extra/plain.txt"]
    assert docs[0].text.startswith("# The flood") and [d.doc_id for d in docs[2:5]] == ["c0", "c1", "c2"]


def test_hostile_members_fail_alone_with_their_reason_and_unsupported_ones_are_skipped():
    members = {"good.md": FLOOD, "../../etc/passwd": "root:x:0:0", "/abs/notes.txt": "x", "C:/win/notes.txt": "x",
               "a/../../escape.md": "x", "evil.md@link": "/etc/passwd", "inner.zip": make_zip({"x.md": "x"}),
               "secret.md": "locked", "data.csv": '=HYPERLINK("http://x"),b\n', "photo.png": b"\x89PNG\r\n",
               "<img src=x onerror=alert(1)>.md": RAIL, "empty.txt": ""}
    docs, failures = load_bytes("attack.zip", _encrypted(make_zip(members), "secret.md"))
    assert [d.name for d in docs] == ["good.md", "<img src=x onerror=alert(1)>.md"]  # the name kept as text
    reasons = {f.name: f.reason for f in failures}
    for escaping in ("../../etc/passwd", "/abs/notes.txt", "C:/win/notes.txt", "a/../../escape.md"):
        assert reasons[escaping].startswith("refused: its path leaves the archive"), escaping
    assert reasons["evil.md"] == "refused: a symbolic link (never followed)"
    assert reasons["inner.zip"].startswith("refused: a zip inside the zip is not unpacked (one level only)")
    assert reasons["secret.md"].startswith("refused: the member is encrypted")
    assert reasons["empty.txt"] == "the document is empty"
    skipped = {f.name for f in failures if isinstance(f, SkippedFile)}
    assert skipped == {"data.csv", "photo.png"} and reasons["data.csv"].startswith("unsupported file type .csv")
    assert not any(isinstance(f, SkippedFile) for f in failures if f.name not in skipped)


def test_a_second_member_with_the_same_path_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.md", FLOOD)
        archive.writestr("notes.md", RAIL)  # zipfile warns, and writes both
    docs, failures = load_bytes("twice.zip", buffer.getvalue())
    assert [d.text for d in docs] == [FLOOD] and failures[0].reason == "refused: a second member with the same path"


def test_a_zip_bomb_and_a_zip_of_too_many_members_are_refused_before_any_member_is_read():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("bomb.txt", "w", force_zip64=True) as member:
            for _ in range(300):
                member.write(b"\0" * 2**20)
    started = time.perf_counter()
    docs, [failure] = load_bytes("bomb.zip", buffer.getvalue())
    assert docs == [] and "expand to 300 MB, over the 256 MB limit" in failure.reason
    assert "`max_archive_uncompressed_mb`" in failure.reason
    many = make_zip({f"n{i}.txt": "x" for i in range(10_001)}, zipfile.ZIP_STORED)
    docs, [failure] = load_bytes("many.zip", many)
    assert docs == [] and "number 10,001, over the 10,000-member limit" in failure.reason
    assert time.perf_counter() - started < 10  # nothing was inflated


def test_a_member_whose_header_lies_about_its_size_fails_alone():
    data = bytearray(make_zip({"liar.txt": "A" * 500_000, "honest.md": RAIL}))
    for signature, size_at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # liar.txt comes first in both
        struct.pack_into("<L", data, data.find(signature) + size_at, 100)
    docs, [failure] = load_bytes("liar.zip", bytes(data))
    assert [d.name for d in docs] == ["honest.md"]
    assert failure.name == "liar.txt" and failure.reason.startswith("could not read the member")


class _Stream(io.BytesIO):
    """A member reader that inflates past what its header declared (zipfile stops at the declared size itself;
    the count while reading does not rely on that)."""


def test_reading_stops_at_the_declared_size_and_at_the_archive_budget_whatever_the_reader_does():
    archive = SimpleNamespace(open=lambda info: _Stream(b"x" * 300_000))
    with pytest.raises(ValueError, match="inflates past the"):
        _Budget(ParseLimits()).read(archive, SimpleNamespace(file_size=1_000), max_bytes=10**9)
    small = ParseLimits(max_archive_uncompressed_mb=0.1)  # 104,857 bytes left for all the members
    with pytest.raises(LimitExceeded, match="max_archive_uncompressed_mb"):
        _Budget(small).read(archive, SimpleNamespace(file_size=10**6), max_bytes=10**9)
    budget = _Budget(small)
    budget.read(SimpleNamespace(open=lambda info: _Stream(b"x" * 60_000)), SimpleNamespace(file_size=60_000), 10**9)
    with pytest.raises(LimitExceeded):  # what the first member used is gone for the second
        budget.read(SimpleNamespace(open=lambda info: _Stream(b"x" * 60_000)), SimpleNamespace(file_size=60_000), 10**9)


def test_a_member_over_the_file_size_limit_and_the_per_upload_document_count_are_held():
    varied = " ".join(f"w{i * 7919 % 100_003}" for i in range(40_000))  # ~270 KB, deflates to about a third
    data = make_zip({"big.txt": varied, "ok.md": RAIL})
    assert len(data) < 200_000 < len(varied)
    docs, [failure] = load_bytes("big.zip", data, max_bytes=200_000)  # the zip is within the limit, a member not
    assert [d.name for d in docs] == ["ok.md"] and failure.name == "big.txt"
    assert failure.reason == "the file is too large (269.1 KB; the limit is 195.3 KB)"
    four = make_zip({f"n{i}.md": f"Note number {i}." for i in range(4)})
    docs, [failure] = load_uploads([("four.zip", four)], limits=ParseLimits(max_documents_per_upload=3))
    assert docs == [] and "more than 3 documents, the limit per upload" in failure.reason


@pytest.mark.slow
def test_the_cli_indexes_a_zip_lists_skipped_files_and_records_no_failed_document_for_them(tmp_path):
    archive = tmp_path / "docs.zip"
    archive.write_bytes(make_zip({"notes/flood.md": FLOOD, "rail.txt": RAIL, "photo.png": b"\x89PNG\r\n",
                                  "../../etc/passwd": "root:x:0:0"}))
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    ws = tmp_path / "ws"
    proc = subprocess.run([sys.executable, "-m", "core", "index", "--quiet", "--workspace", str(ws), str(archive)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr[-2000:]  # one refused member: exit 1, as for a bad file
    assert "failed: ../../etc/passwd: refused: its path leaves the archive" in proc.stderr
    assert "skipped: photo.png: unsupported file type .png" in proc.stderr and "2 indexed" in proc.stderr
    docs = json.loads(subprocess.run([sys.executable, "-m", "core", "docs", "--workspace", str(ws), "--json"],
                                     cwd=ROOT, env=env, capture_output=True, text=True, timeout=600).stdout)
    status = {d["name"]: d["status"] for d in docs}
    assert status == {"notes/flood.md": "processed", "rail.txt": "processed", "../../etc/passwd": "failed"}
