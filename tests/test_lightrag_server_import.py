"""Server-side LightRAG import (admin only): the directory must lie under the folder the operator allows
(``RAGSCOPE_IMPORT_ROOT`` or ``import_root`` in the secrets), never reach out of it through ``..``, an
absolute path or a symbolic link, and the option is hidden when no folder is allowed."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from conftest import HashEmbedder, documents_page
from core import api
from core.auth import LOCAL_ADMIN, Principal, Role
from core.errors import PermissionDeniedError
from core.importers.lightrag.server_dirs import (ENV, ServerImportError, candidate_dirs, import_root,
                                                 resolve_under_root)
from core.workspace import Workspace

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "lightrag"
EDITOR = Principal(subject="ed", email="ed@example.org", role=Role.editor, workspaces=None)


@pytest.fixture()
def allowed(tmp_path):
    """An allowed folder with two LightRAG directories, plus a directory outside it and links out."""
    root = tmp_path / "allowed"
    (root / "nested").mkdir(parents=True)
    shutil.copytree(FIXTURES / "ainsert", root / "ainsert")
    shutil.copytree(FIXTURES / "custom_kg", root / "nested" / "custom_kg")
    outside = tmp_path / "outside"
    shutil.copytree(FIXTURES / "ainsert", outside)
    (root / "link_out").symlink_to(outside, target_is_directory=True)
    (root / "link_in").symlink_to(root / "ainsert", target_is_directory=True)
    leaky = root / "leaky"
    shutil.copytree(FIXTURES / "ainsert", leaky)
    (leaky / "kv_store_full_docs.json").unlink()
    (leaky / "kv_store_full_docs.json").symlink_to(outside / "kv_store_full_docs.json")
    return root


def test_the_root_comes_from_the_environment_or_the_secrets(tmp_path):
    assert import_root(secrets={}, environ={}) is None
    assert import_root(secrets={"ragscope": {"import_root": str(tmp_path)}}, environ={}) == tmp_path
    assert import_root(secrets={"ragscope": {"import_root": "/elsewhere"}}, environ={ENV: str(tmp_path)}) == tmp_path
    assert import_root(secrets={}, environ={ENV: "  "}) is None


def test_only_directories_inside_the_root_resolve(allowed, tmp_path):
    assert resolve_under_root(allowed, "ainsert") == (allowed / "ainsert").resolve()
    assert resolve_under_root(allowed, str(allowed / "nested" / "custom_kg")) == (allowed / "nested" / "custom_kg").resolve()
    assert resolve_under_root(allowed, "link_in") == (allowed / "ainsert").resolve()  # a link that stays inside
    cases = {"../outside": "outside that folder", str(tmp_path / "outside"): "outside that folder",
             "/etc": "outside that folder", "link_out": "a symbolic link points out of it",
             "leaky": "kv_store_full_docs.json is a symbolic link out of the server import folder",
             "ainsert/kv_store_text_chunks.json": "not a directory", "": "name a directory"}
    for requested, words in cases.items():
        with pytest.raises(ServerImportError, match=words.replace(".", r"\.")):
            resolve_under_root(allowed, requested)


def test_candidates_are_the_lightrag_directories_inside(allowed):
    assert candidate_dirs(allowed) == ["ainsert", "leaky", "link_in", "nested/custom_kg/demo"]


def test_api_is_admin_only_and_off_without_a_root(allowed, tmp_path, monkeypatch):
    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    monkeypatch.setenv(ENV, str(allowed))
    with pytest.raises(PermissionDeniedError):
        api.import_lightrag_from_server(EDITOR, ws, "ainsert")
    with pytest.raises(PermissionDeniedError):
        api.server_import_dirs(EDITOR)
    with pytest.raises(ServerImportError, match="symbolic link"):
        api.import_lightrag_from_server(LOCAL_ADMIN, ws, "link_out")
    assert ws.status()["documents"] == 0
    report = api.import_lightrag_from_server(LOCAL_ADMIN, ws, "ainsert", source_model="m")
    assert report.ragscope["entities"] == report.lightrag["entities"] == 18
    monkeypatch.setenv(ENV, "")
    monkeypatch.setattr("core.auth.read_secrets", lambda paths=None: {})
    assert api.server_import_dirs(LOCAL_ADMIN) is None
    with pytest.raises(ServerImportError, match="server-side import is off"):
        api.import_lightrag_from_server(LOCAL_ADMIN, ws, "ainsert")
    ws.close()


@pytest.mark.slow
def test_documents_page_offers_server_directories_only_when_allowed(allowed, tmp_path, monkeypatch):
    data = tmp_path / "workspaces"
    (data / "fresh").mkdir(parents=True)
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(data))
    monkeypatch.delenv("RAGSCOPE_WORKSPACE", raising=False)
    monkeypatch.setenv(ENV, "")
    monkeypatch.setattr("core.auth.read_secrets", lambda paths=None: {})

    def page() -> AppTest:
        return documents_page("fresh")

    at = page()
    assert at.button(key="lightrag_import") is not None
    assert not [b for b in at.button if b.key == "lightrag_server_import"]
    monkeypatch.setenv(ENV, str(allowed))
    at = page()
    box = at.selectbox(key="lightrag_server_dir")
    assert box.options == ["ainsert", "leaky", "link_in", "nested/custom_kg/demo"]
    box.set_value("nested/custom_kg/demo").run()
    at.button(key="lightrag_server_import").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Imported in" in s.value for s in at.success), [s.value for s in at.success]
