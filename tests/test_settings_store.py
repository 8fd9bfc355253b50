"""The Settings page says which store the workspace uses, read-only: the SQLite file by default, the
PostgreSQL database (its password masked) when ``RAGSCOPE_STORE`` names one; and ``core.api`` gives
it to admins only."""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from streamlit.testing.v1 import AppTest

from postgres_fixture import pg_store, postgres_server  # noqa: F401 - fixtures
from test_app_pages import data_dir  # noqa: F401 - fixture: an empty data folder, no LLM configured

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def default_store(monkeypatch) -> None:
    """The store the environment names (a PostgreSQL CI run) is not this module's: SQLite unless a test says."""
    monkeypatch.delenv("RAGSCOPE_STORE", raising=False)


def store_line(at: AppTest) -> str:
    assert not at.exception, [e.value for e in at.exception]
    shown = [re.sub(r"\\(.)", r"\1", c.value).replace("\u2060", "") for c in at.caption]  # as rendered
    lines = [c for c in shown if c.startswith("Store (read-only")]
    assert len(lines) == 1, [c.value for c in at.caption]
    assert not [w for w in at.text_input if "store" in (w.label or "").lower()]  # nothing to edit
    return lines[0]


def settings_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page("pages/settings.py")
    return at.run()


def test_the_sqlite_store_is_shown(data_dir):
    line = store_line(settings_page())
    assert "sqlite: the SQLite file ragscope.sqlite3 in the workspace folder" in line
    assert "vectors: ChromaDB in the workspace folder" in line


def test_the_postgresql_store_is_shown_without_its_password(data_dir, monkeypatch, pg_store):
    parts = urlsplit(pg_store)  # the test cluster trusts local connections: any password is accepted
    with_password = urlunsplit(parts._replace(netloc=f"{parts.username}:s3cret-pw@{parts.hostname}:{parts.port}"))
    monkeypatch.setenv("RAGSCOPE_STORE", with_password)
    line = store_line(settings_page())
    assert f"postgresql: the PostgreSQL database postgresql://{parts.username}:***@{parts.hostname}:{parts.port}" \
           f"{parts.path}" in line
    assert "s3cret-pw" not in line and not list((data_dir / "default").glob("*.sqlite3"))


def test_only_an_admin_reads_the_store(tmp_path):
    from core import api
    from core.auth import Principal, Role
    from core.errors import PermissionDeniedError
    from core.workspace import Workspace

    from conftest import HashEmbedder

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder(), store="sqlite")
    try:
        assert api.store_description(Principal("a", "a@x", Role.admin), ws).startswith("sqlite: ")
        with pytest.raises(PermissionDeniedError):
            api.store_description(Principal("e", "e@x", Role.editor), ws)
    finally:
        ws.close()
