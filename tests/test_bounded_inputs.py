"""Issue 38, item 4, on both backends: a 200 k-character graph search is answered with a plain message
(``InputTooLongError``, one of ``KNOWN_ERRORS``) in well under a second on SQLite and PostgreSQL,
before any SQL runs (on SQLite a ~50 KB LIKE pattern used to raise "LIKE or GLOB pattern too complex";
on PostgreSQL a generic plan took 13-15 s); a search at the bound still runs. (The bounds themselves
and the page fields: tests/test_input_bounds.py.)"""
from __future__ import annotations

import time

import pytest

from postgres_fixture import pg_store, postgres_server  # noqa: F401 - fixtures
from test_graph_page_storage import generated_ws  # noqa: F401 - fixture (SQLite and PostgreSQL)

from core import api
from core.auth import LOCAL_ADMIN
from core.errors import KNOWN_ERRORS, MAX_SEARCH_CHARS, InputTooLongError


@pytest.mark.parametrize("mention", [False, True], ids=["knowledge", "mention"])
def test_a_huge_search_is_answered_with_a_message_in_under_a_second(generated_ws, mention):  # noqa: F811
    started = time.perf_counter()
    with pytest.raises(InputTooLongError) as refused:
        api.graph_selection(LOCAL_ADMIN, generated_ws, mention, "a" * 200_000, 1, (), 0, 60)
    assert time.perf_counter() - started < 1.0
    assert isinstance(refused.value, KNOWN_ERRORS)  # shown as a message, not a traceback
    assert "200,000" in str(refused.value) and f"{MAX_SEARCH_CHARS:,}" in str(refused.value)
    at_bound = api.graph_selection(LOCAL_ADMIN, generated_ws, mention, "%_!" * (MAX_SEARCH_CHARS // 3), 1, (), 0, 60)
    assert at_bound.matches == [] and at_bound.nodes == []


def test_a_search_over_the_bound_never_reaches_the_database(generated_ws, monkeypatch):  # noqa: F811
    import core.graph_page as graph_page

    def refuse(*_args, **_kwargs):
        raise AssertionError("the search reached storage")

    monkeypatch.setattr(graph_page, "_keys", refuse)
    with pytest.raises(InputTooLongError):
        api.graph_selection(LOCAL_ADMIN, generated_ws, False, "x" * (MAX_SEARCH_CHARS + 1))
