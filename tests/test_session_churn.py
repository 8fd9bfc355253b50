"""Session churn: 200 browser sessions opened and closed leave the server's memory where it was.

The sessions speak Streamlit's own websocket protocol to a real ``streamlit run app.py``
(``tests/streamlit_ws.py``); every other one asks a sample question on Compare with all modes, whose
results stay in its session state. A closed session is kept by Streamlit for a reconnect for
``server.disconnectedSessionTTL`` seconds; Streamlit's default (120 s, up to 128 sessions) held
about 1.5 MB per closed Compare session, so the app's config shortens it; and with the collection
after each script run turned off (``runner.postScriptGC``), closed sessions' cyclic garbage waited for
a rare full collection, so the server freezes the loaded models out of the collector and collects
every 20 s (``core.warmup.start_housekeeping``). The server's RSS must come back within 50 MB of its
warm start after the last session closed: read 40 s after it, then every 10 s (a session coming and
going) for at most 240 s more, the lowest reading kept. A closed session is freed only once the TTL has
passed, Streamlit has dropped it and the next collection has run — 60–90 s after a fast churn, and the
RSS can stay flat before it drops (an earlier "two equal readings" rule stopped too soon: +83.9 MB,
then +0.5 MB read at 90 s). ``benchmarks/session_churn.py`` prints the figures.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

GROWTH_LIMIT_MB = 50
SETTLE_S = 40
BACK_WITHIN_S = 240  # readings every 10 s after the TTL: the lowest must be back within the limit by then


def _churn_module():
    import session_churn  # benchmarks/session_churn.py

    return session_churn


def test_the_app_keeps_a_closed_session_for_less_than_the_settle_time():
    """The measured promise (memory back 40 s after the churn) rests on this setting."""
    ttl = _churn_module().configured_ttl()
    assert 5 <= ttl < SETTLE_S - 5, f"server.disconnectedSessionTTL is {ttl} s"


def test_release_memory_collects_what_closed_sessions_leave_in_cycles():
    import gc
    import weakref

    from core.warmup import release_memory

    class Session:
        pass

    gc.disable()  # only release_memory may collect here
    try:
        session = Session()
        session.me = session  # a cycle: reference counting alone never frees it
        gone = weakref.ref(session)
        del session
        assert gone() is not None
        assert release_memory() >= 1
        assert gone() is None
    finally:
        gc.enable()


def test_the_app_starts_the_housekeeping_with_its_warm_up(monkeypatch):
    from core import warmup
    from core.api import warm_up
    from core.auth import LOCAL_ADMIN

    seen = []
    monkeypatch.setattr(warmup, "start_warmup", lambda ws=None, housekeeping=False: seen.append(housekeeping))
    warm_up(LOCAL_ADMIN)
    assert seen == [True]


@pytest.mark.slow
@pytest.mark.timeout(3600)  # about 6 min on two idle cores (warm-up, 200 sessions, 40 s); far more on a busy machine
def test_200_sessions_opened_and_closed_leave_the_server_within_50_mb(sample_workspace_dir, tmp_path):
    if importlib.util.find_spec("websocket") is None:
        pytest.skip("websocket-client is not installed (pip install -r requirements-test.txt)")
    result = _churn_module().measure(sample_workspace_dir, sessions=200, settle_s=SETTLE_S, log_dir=tmp_path,
                                     echo=False, extra_s=BACK_WITHIN_S, back_within_mb=GROWTH_LIMIT_MB)
    assert result["back_growth_mb"] < GROWTH_LIMIT_MB, result
    log = (tmp_path / "streamlit-churn.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
