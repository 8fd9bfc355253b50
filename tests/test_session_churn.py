"""Session churn: 200 browser sessions opened and closed leave the server's memory where it was.

The sessions speak Streamlit's own websocket protocol to a real ``streamlit run app.py``
(``tests/streamlit_ws.py``); every other one asks a sample question on Compare with all modes, whose
results stay in its session state. A closed session is kept by Streamlit for a reconnect for
``server.disconnectedSessionTTL`` seconds; Streamlit's default (120 s, up to 128 sessions) held
about 1.5 MB per closed Compare session, so the app's config shortens it; and with the collection
after each script run turned off (``runner.postScriptGC``), closed sessions' cyclic garbage waited for
a rare full collection, so the server freezes the loaded models out of the collector and collects
every 20 s (``core.warmup.start_housekeeping``). The server's RSS must be back within 50 MB of its
warm start once it has stopped falling after the last session closed (read every 10 s from 40 s on, at
most 180 s more: on a busy machine the closed sessions' last Compare runs finish well after their
sockets closed). ``benchmarks/session_churn.py`` prints the figures: +133.8 MB before the TTL and
housekeeping, +0.1 MB after them, +11.8 MB 40 s after the churn in a later run at a load of about 8.
Still opt-in (``RAGSCOPE_CHURN_TEST=1``): a fast churn (62 s at a low load) ended at +83.9 MB settled.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

GROWTH_LIMIT_MB = 50
SETTLE_S = 40


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
@pytest.mark.skipif(not os.environ.get("RAGSCOPE_CHURN_TEST"),
                    reason="opt-in (RAGSCOPE_CHURN_TEST=1): not reliably within 50 MB — it passed once (load 5-7), "
                           "but a benchmark run with a 62 s churn ended at +83.9 MB once the RSS had settled")
@pytest.mark.timeout(3600)  # about 6 min on two idle cores (warm-up, 200 sessions, 40 s); far more on a busy machine
def test_200_sessions_opened_and_closed_leave_the_server_within_50_mb(sample_workspace_dir, tmp_path):
    if importlib.util.find_spec("websocket") is None:
        pytest.skip("websocket-client is not installed (pip install -r requirements-test.txt)")
    result = _churn_module().measure(sample_workspace_dir, sessions=200, settle_s=SETTLE_S, log_dir=tmp_path,
                                     echo=False)
    assert result["back_growth_mb"] < GROWTH_LIMIT_MB, result  # once the RSS stopped falling (at most 180 s more)
    log = (tmp_path / "streamlit-churn.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
