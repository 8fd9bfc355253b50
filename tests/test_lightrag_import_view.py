"""The Documents page's LightRAG import: the zip checks (path traversal, links, sizes, not a zip), a zip of a
real LightRAG directory unpacked and imported, and the page showing the importer and the graph's provenance."""
from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import pytest

from conftest import documents_page
from core.importers.lightrag import import_lightrag
from core.importers.lightrag.archive import UnsafeArchiveError, unpack_zip
from core.workspace import Workspace

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "lightrag" / "custom_kg"


def zipped(entries: dict[str, bytes], links: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name)
            if name in links:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def folder_zip(folder: Path, prefix: str) -> bytes:
    return zipped({f"{prefix}/{p.relative_to(folder)}": p.read_bytes() for p in folder.rglob("*") if p.is_file()})


@pytest.mark.parametrize("entries, links, words", [
    ({"../evil.json": b"{}"}, (), "'..'"),
    ({"ok/../../evil.json": b"{}"}, (), "'..'"),
    ({"/etc/evil.json": b"{}"}, (), "absolute"),
    ({"C:/evil.json": b"{}"}, (), "absolute"),
    ({"dir/link": b"/etc/passwd"}, ("dir/link",), "links"),
])
def test_unsafe_entries_are_refused_before_anything_is_written(tmp_path, entries, links, words):
    data = zipped({"good.json": b"{}", **entries}, links)
    target = tmp_path / "out"
    with pytest.raises(UnsafeArchiveError, match=words):
        unpack_zip(data, target)
    assert not target.exists() or not any(target.rglob("*"))
    assert not (tmp_path / "evil.json").exists()


def test_size_entry_and_format_limits(tmp_path):
    big = zipped({"a.json": b"x" * 5000})
    with pytest.raises(UnsafeArchiveError, match="the limit is"):
        unpack_zip(big, tmp_path / "a", max_unpacked_bytes=4000)
    with pytest.raises(UnsafeArchiveError, match="the zip is 5 KB; the limit is 100 bytes"):
        unpack_zip(big, tmp_path / "b", max_zip_bytes=100)
    with pytest.raises(UnsafeArchiveError, match="entries"):
        unpack_zip(zipped({f"{i}.json": b"{}" for i in range(5)}), tmp_path / "c", max_entries=4)
    with pytest.raises(UnsafeArchiveError, match="not a zip"):
        unpack_zip(b"PK\x03\x04 not really", tmp_path / "d")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.json", b"x" * 400_000)  # deflates ~1000-fold: over the 100x expansion ratio
    bomb = buffer.getvalue()
    with pytest.raises(UnsafeArchiveError, match="times the file's size, over the 100× limit.*max_archive_ratio"):
        unpack_zip(bomb, tmp_path / "e")
    assert not (tmp_path / "e").exists() or not any((tmp_path / "e").rglob("*"))
    assert (unpack_zip(bomb, tmp_path / "f", max_ratio=10_000) / "a.json").stat().st_size == 400_000


def test_a_zipped_lightrag_directory_imports(tmp_path):
    folder = unpack_zip(folder_zip(FIXTURE, "my_index"), tmp_path / "up")
    assert folder.name == "my_index" and (folder / "demo" / "kv_store_text_chunks.json").is_file()
    ws = Workspace(tmp_path / "ws")
    report = import_lightrag(ws, folder, source_model="gpt-4o")
    assert report.ragscope["entities"] == report.lightrag["entities"] > 0
    ws.close()


@pytest.mark.slow
def test_documents_page_offers_the_import_and_shows_provenance(tmp_path, monkeypatch):
    data = tmp_path / "workspaces"
    data.mkdir()
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(data))
    monkeypatch.delenv("RAGSCOPE_WORKSPACE", raising=False)
    ws = Workspace(data / "imported")
    import_lightrag(ws, FIXTURE, source_model="<b>model</b>")
    ws.close()
    at = documents_page("imported")
    assert at.button(key="lightrag_import").disabled  # no zip chosen yet
    captions = [c.value for c in at.caption]
    assert any("imported from LightRAG" in c and "\\<b\\>model\\<" in c for c in captions), captions
