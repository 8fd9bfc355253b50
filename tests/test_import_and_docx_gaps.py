"""Issue 38, item 5: the smaller escapes. The importer refuses a LightRAG workspace name that leaves
the working directory (``lightrag_workspace="../../elsewhere"`` used to import from outside the
server import folder); malformed import JSON (nested too deeply, a number of too many digits) and an
over-size GraphML are refused with a message naming the file, not a raw ``RecursionError`` /
``ValueError`` / a 1 GB parse; the zip-size message never reads "1024 MB; the limit is 1024 MB"; the
DOCX loader keeps the text after an entity reference (it used to drop it without a word)."""
from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path

import docx
import pytest

from conftest import HashEmbedder
from core import api
from core.auth import LOCAL_ADMIN
from core.errors import KNOWN_ERRORS
from core.importers.lightrag import LightRAGFormatError
from core.importers.lightrag import reader
from core.importers.lightrag.archive import UnsafeArchiveError, unpack_zip
from core.importers.lightrag.server_dirs import ENV
from core.parsing.limits import ParseLimits
from core.parsing.office import load_docx
from core.workspace import Workspace

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "lightrag"


@pytest.fixture()
def layout(tmp_path):
    """An allowed import folder holding one LightRAG directory, and a LightRAG directory outside it."""
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    shutil.copytree(FIXTURES / "ainsert", allowed / "mine")
    (allowed / "mine" / "inner").mkdir()
    shutil.copytree(FIXTURES / "ainsert", tmp_path / "elsewhere")
    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    yield allowed, ws
    ws.close()


@pytest.mark.parametrize("name", ["../../elsewhere", "../elsewhere", "..", "inner/../..", "/etc", "a\\..\\..", "x\x00"])
def test_a_lightrag_workspace_name_cannot_leave_the_directory(layout, monkeypatch, name):
    allowed, ws = layout
    monkeypatch.setenv(ENV, str(allowed))
    with pytest.raises(LightRAGFormatError, match="not a LightRAG workspace name"):
        api.import_lightrag_from_server(LOCAL_ADMIN, ws, "mine", lightrag_workspace=name)
    with pytest.raises(LightRAGFormatError, match="not a LightRAG workspace name"):
        api.import_lightrag(LOCAL_ADMIN, ws, allowed / "mine", lightrag_workspace=name)
    assert ws.status()["documents"] == 0


def test_a_workspace_folder_linking_out_is_refused(layout):
    allowed, ws = layout  # (the server import refuses any link out of its folder before this check)
    (allowed / "mine" / "out").symlink_to(allowed.parent / "elsewhere", target_is_directory=True)
    with pytest.raises(LightRAGFormatError, match="links out"):
        api.import_lightrag(LOCAL_ADMIN, ws, allowed / "mine", lightrag_workspace="out")
    assert ws.status()["documents"] == 0


@pytest.mark.parametrize("content, words", [("[" * 100_000 + "]" * 100_000, "nested too deeply"),
                                            ('{"a": {"n": ' + "9" * 10_000 + "}}", "cannot be read")])
def test_malformed_import_json_is_a_clear_message(tmp_path, content, words):
    folder = tmp_path / "lr"
    shutil.copytree(FIXTURES / "ainsert", folder)
    (folder / "kv_store_text_chunks.json").write_text(content)
    with pytest.raises(LightRAGFormatError, match=words) as refused:
        reader.read_index(folder)
    assert isinstance(refused.value, KNOWN_ERRORS) and "kv_store_text_chunks.json" in str(refused.value)


def test_an_oversize_graphml_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    folder = tmp_path / "lr"
    shutil.copytree(FIXTURES / "ainsert", folder)
    monkeypatch.setattr(reader, "MAX_IMPORT_FILE_BYTES", 1024)  # the fixture's graph is larger

    def refuse(*_args, **_kwargs):
        raise AssertionError("parsed")

    monkeypatch.setattr(reader.nx, "read_graphml", refuse)
    monkeypatch.setattr(reader, "load_json", lambda path: {})  # only the graph is under test here
    with pytest.raises(LightRAGFormatError, match="at most"):
        reader._read_graph(folder)


def test_the_zip_size_message_never_contradicts_itself():
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.json", b"0" * (2**20 + 10))
    with pytest.raises(UnsafeArchiveError) as refused:
        unpack_zip(data.getvalue(), Path("/nonexistent"), max_unpacked_bytes=2**20, max_ratio=10_000)
    message = str(refused.value)
    assert "1,048,586 bytes; the limit is 1,048,576 bytes" in message, message


def _docx_with(body: str, doctype: str) -> bytes:
    document = docx.Document()
    document.add_paragraph("PLACEHOLDER")
    buf = io.BytesIO()
    document.save(buf)
    source, out = zipfile.ZipFile(io.BytesIO(buf.getvalue())), io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                head, rest = data.decode().replace("PLACEHOLDER", body).split("?>", 1)
                data = (head + "?>" + doctype + rest).encode()
            target.writestr(item, data)
    return out.getvalue()


def test_the_docx_loader_keeps_the_text_around_an_entity_reference():
    data = _docx_with("Before &co; after the entity, &co; again.", '<!DOCTYPE w:document [<!ENTITY co "Company">]>')
    docs, failures = load_docx("e.docx", data, ParseLimits())
    assert failures == [] and docs[0].text == "Before &co; after the entity, &co; again."
