"""Free text is bounded in the library, not only in the browser: a 200 k-character graph search is
answered with a message naming the limit in well under a second (it used to raise SQLite's "LIKE or GLOB
pattern too complex" and hold PostgreSQL for seconds), a search at the limit still runs, and an overlong
question is refused before any retrieval. The check runs before any SQL, so it is the same on PostgreSQL."""
from __future__ import annotations

import time

import pytest

from core import api
from core.auth import LOCAL_ADMIN
from core.errors import KNOWN_ERRORS, MAX_QUESTION_CHARS, MAX_SEARCH_CHARS, InputTooLongError


def test_a_huge_graph_search_gets_a_message_fast(sample_ws):
    started = time.perf_counter()
    with pytest.raises(InputTooLongError) as raised:
        api.graph_selection(LOCAL_ADMIN, sample_ws, False, "harbour " * 25_000)
    assert time.perf_counter() - started < 1.0
    assert f"limit is {MAX_SEARCH_CHARS}" in str(raised.value) and isinstance(raised.value, KNOWN_ERRORS)
    with pytest.raises(InputTooLongError):
        api.graph_selection(LOCAL_ADMIN, sample_ws, True, "%" * (MAX_SEARCH_CHARS + 1))


def test_a_search_at_the_limit_still_runs(sample_ws):
    found = api.graph_selection(LOCAL_ADMIN, sample_ws, False, ("Port Sallow " * 40)[:MAX_SEARCH_CHARS])
    assert found is not None
    assert api.graph_selection(LOCAL_ADMIN, sample_ws, False, "Port Sallow").nodes


def test_an_overlong_question_is_refused_before_retrieval(sample_ws):
    with pytest.raises(InputTooLongError, match="question"):
        api.run_modes(LOCAL_ADMIN, sample_ws, "Who? " * MAX_QUESTION_CHARS, "naive")
