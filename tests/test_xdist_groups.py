"""``tests/conftest.py::xdist_groups``: under ``-n 2 --dist loadgroup`` (scripts/test.sh) every test file
runs on one worker, and files sharing the llama.cpp server, PostgreSQL or Chromium share one, so no
session server starts twice and module fixtures are built once."""
from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT, xdist_groups


class FakeItem:
    def __init__(self, nodeid: str, fixtures=(), marks=()):
        self.nodeid, self.fixturenames, self.marks = nodeid, list(fixtures), set(marks)

    def get_closest_marker(self, name: str):
        return name if name in self.marks else None


def test_files_sharing_a_server_share_a_group_and_other_files_keep_their_own():
    items = [FakeItem("tests/test_a.py::one", ["llm_server"]), FakeItem("tests/test_a.py::two"),
             FakeItem("tests/test_b.py::x", marks=["llm"]),
             FakeItem("tests/test_c.py::y", ["postgres_server", "tmp_path"]),
             FakeItem("tests/test_d.py::z", ["tmp_path"]), FakeItem("tests/test_d.py::w"),
             FakeItem("tests/test_e.py::b", marks=["browser"]), FakeItem("tests/test_f.py::b", marks=["browser"])]
    groups = xdist_groups(items)
    assert groups["tests/test_a.py"] == groups["tests/test_b.py"] == "llm"
    assert groups["tests/test_c.py"] == "postgres"
    assert groups["tests/test_d.py"] == "tests/test_d.py"
    assert groups["tests/test_e.py"] == groups["tests/test_f.py"] == "browser"


def test_a_file_using_two_servers_joins_their_groups():
    items = [FakeItem("tests/test_a.py::one", ["llm_server"]), FakeItem("tests/test_p.py::one", ["postgres_server"]),
             FakeItem("tests/test_both.py::one", ["llm_server"]), FakeItem("tests/test_both.py::two", ["postgres_server"])]
    groups = xdist_groups(items)
    assert groups["tests/test_a.py"] == groups["tests/test_p.py"] == groups["tests/test_both.py"] == "llm+postgres"


def test_the_suite_command_runs_two_workers_by_group_with_xdist_pinned():
    script = (ROOT / "scripts" / "test.sh").read_text()
    assert re.search(r'python -m pytest -n "\$WORKERS" --dist loadgroup "\$@"', script)
    assert 'WORKERS="${RAGSCOPE_TEST_WORKERS:-2}"' in script
    pins = (ROOT / "requirements-test.txt").read_text()
    assert re.search(r"^pytest-xdist==\d", pins, flags=re.M) and re.search(r"^execnet==\d", pins, flags=re.M)
