"""A signed-in viewer who presses everything it sees changes nothing (issue 38, tried by hand as an attacker
and kept as a test). Each page a viewer can open — by the navigation or by URL, the Settings page run on its
own included — is run as the viewer; every enabled button it draws is pressed in a fresh session (and every
checkbox and toggle ticked with it), and after each press the workspace is read back: its documents,
chunks, entities, relations, graph edits, annotations, settings file and the data folder's workspaces
are what they were. The presses themselves must work (a table of what was pressed is asserted non-empty),
so the test cannot pass by finding nothing to press."""
from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.auth import Principal, Role
from test_app_auth import PAGES, ROOT, address, data_dir, signed_in  # noqa: F401 - fixtures

VIEWER = Principal("v", "viewer@example.com", Role.viewer)
TABLES = ("documents", "chunks", "entities", "relations", "graph_edits", "annotations")


def fingerprint(data: Path) -> str:
    """A digest of what a write would change: the rows of the workspace's tables, its settings file and
    the workspaces in the data folder."""
    digest = hashlib.sha256()
    db = sqlite3.connect(f"file:{data / 'default' / 'ragscope.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table in TABLES:
            if table in names:
                for row in db.execute(f"SELECT * FROM {table} ORDER BY 1"):  # noqa: S608 - fixed names
                    digest.update(repr(row).encode())
    finally:
        db.close()
    settings = data / "default" / "settings.json"
    digest.update(settings.read_bytes() if settings.exists() else b"-")
    digest.update(repr(sorted(p.name for p in data.iterdir())).encode())
    return digest.hexdigest()


def open_as_viewer(page: str) -> AppTest:
    if page == "pages/settings.py":  # not in a viewer's navigation: opened by URL, it runs on its own
        return AppTest.from_file(str(ROOT / page), default_timeout=600).run()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.run()
    if page != PAGES[0]:
        at.switch_page(page)
        at.run()
    return at


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("page", PAGES + ["pages/source.py"])
def test_a_viewer_pressing_everything_it_sees_changes_nothing(data_dir, signed_in, sample_workspace_dir,  # noqa: F811
                                                              page) -> None:
    shutil.copytree(sample_workspace_dir, data_dir / "default")
    signed_in(VIEWER)
    before = fingerprint(data_dir)
    first = open_as_viewer(page)
    assert not first.exception, [e.value for e in first.exception]
    keys = [b.key for b in first.button if not b.disabled and b.key]
    ticks = [c.key for c in list(first.checkbox) + list(first.toggle) if c.key and not c.disabled]
    pressed = []
    for key in keys:
        at = open_as_viewer(page)
        for tick in ticks:
            if tick in {c.key for c in list(at.checkbox) + list(at.toggle)}:
                widget = at.checkbox(key=tick) if tick in {c.key for c in at.checkbox} else at.toggle(key=tick)
                widget.set_value(not widget.value)
        if key not in {b.key for b in at.button}:
            continue
        at.button(key=key).click().run()
        assert not at.exception, (key, [e.value for e in at.exception])
        assert fingerprint(data_dir) == before, f"{page}: the viewer's press of {key!r} changed the workspace"
        pressed.append(key)
    if page == "pages/settings.py":
        assert not keys and any("needs the admin role" in e.value for e in first.error)
    else:
        assert pressed or page in ("pages/source.py",), (page, keys)  # something to press, and it was pressed
    assert fingerprint(data_dir) == before
