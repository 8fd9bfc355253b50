"""Issue 38, item 4: the graph search and the free-text fields are bounded in length. A 200 k-character
search is answered with a plain message (``InputTooLongError``, one of ``KNOWN_ERRORS``) in well under a
second on SQLite and PostgreSQL, before any SQL runs (on SQLite a ~50 KB LIKE pattern used to raise
"LIKE or GLOB pattern too complex"; on PostgreSQL a generic plan took 13-15 s); a search at the bound
still runs; a question over its bound is refused before retrieval; the pages' widgets carry the bounds."""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from postgres_fixture import pg_store, postgres_server  # noqa: F401 - fixtures
from test_graph_page_storage import generated_ws  # noqa: F401 - fixture (SQLite and PostgreSQL)

from core import api
from core.auth import LOCAL_ADMIN
from core.errors import KNOWN_ERRORS, InputTooLongError

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("mention", [False, True], ids=["knowledge", "mention"])
def test_a_huge_search_is_answered_with_a_message_in_under_a_second(generated_ws, mention):  # noqa: F811
    started = time.perf_counter()
    with pytest.raises(InputTooLongError) as refused:
        api.graph_selection(LOCAL_ADMIN, generated_ws, mention, "a" * 200_000, 1, (), 0, 60)
    assert time.perf_counter() - started < 1.0
    assert isinstance(refused.value, KNOWN_ERRORS)  # shown as a message, not a traceback
    assert "200,000" in str(refused.value) and f"{api.MAX_SEARCH_CHARS:,}" in str(refused.value)
    at_bound = api.graph_selection(LOCAL_ADMIN, generated_ws, mention, "%_!" * (api.MAX_SEARCH_CHARS // 3), 1, (), 0, 60)
    assert at_bound.matches == [] and at_bound.nodes == []


def test_a_search_over_the_bound_never_reaches_the_database(generated_ws, monkeypatch):  # noqa: F811
    import core.graph_page as graph_page

    def refuse(*_args, **_kwargs):
        raise AssertionError("the search reached storage")

    monkeypatch.setattr(graph_page, "_keys", refuse)
    with pytest.raises(InputTooLongError):
        api.graph_selection(LOCAL_ADMIN, generated_ws, False, "x" * (api.MAX_SEARCH_CHARS + 1))


def test_a_question_over_its_bound_is_refused_before_retrieval(tmp_path):
    from conftest import HashEmbedder
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    try:
        with pytest.raises(InputTooLongError):
            api.run_modes(LOCAL_ADMIN, ws, "why " * api.MAX_QUESTION_CHARS, "naive", with_answers=False)
    finally:
        ws.close()


@pytest.mark.parametrize("page, key, bound", [("pages/knowledge_graph.py", "kg_search", "MAX_SEARCH_CHARS"),
                                              ("pages/compare.py", "compare_question", "MAX_QUESTION_CHARS"),
                                              ("pages/inspect.py", "inspect_question", "MAX_QUESTION_CHARS")])
def test_the_pages_widgets_carry_the_bounds(page, key, bound):
    text = (ROOT / page).read_text()
    call = re.search(r'\.text_(?:input|area)\((?:[^()]|\([^()]*\))*?key="%s"(?:[^()]|\([^()]*\))*\)' % key, text)
    assert call, key
    assert f"max_chars=api.{bound}" in call.group(0)
