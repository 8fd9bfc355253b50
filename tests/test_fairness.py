"""Issue 38, item 6: work is shared through a bounded pool of slots (``core.fairness``). Heavy work
(indexing, evaluation, drawing every node) never holds the last slot, so a question is served while
any number of heavy jobs wait; waiters are served in arrival order; the front door's indexing,
evaluation and question calls take their slots. Deterministic: threads and events, no timing."""
from __future__ import annotations

import threading

import pytest

from core.fairness import ENV, WorkSlots, configured_size


def _hold(pool: WorkSlots, heavy: bool, started: threading.Event, release: threading.Event) -> threading.Thread:
    def run() -> None:
        with pool.slot(heavy=heavy):
            started.set()
            release.wait(30)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_heavy_work_never_takes_the_last_slot():
    pool = WorkSlots(3)
    release = threading.Event()
    first, second, third = threading.Event(), threading.Event(), threading.Event()
    threads = [_hold(pool, True, first, release), _hold(pool, True, second, release)]
    assert first.wait(10) and second.wait(10)
    threads.append(_hold(pool, True, third, release))  # a third heavy job waits...
    assert not third.wait(0.3)
    with pool.slot(heavy=False, timeout_s=5):  # ...while a question gets the last slot at once
        assert pool.snapshot() == {"size": 3, "busy": 3, "heavy": 2, "waiting": 1}
    release.set()
    assert third.wait(10)
    for thread in threads:
        thread.join(10)
    assert pool.snapshot()["busy"] == 0


def test_waiters_are_served_in_arrival_order():
    pool = WorkSlots(2)
    release = threading.Event()
    held = [threading.Event(), threading.Event()]
    holders = [_hold(pool, False, held[0], release), _hold(pool, False, held[1], release)]
    assert all(event.wait(10) for event in held)
    order: list[int] = []
    arrived = []

    def wait_turn(i: int) -> None:
        with pool.slot():
            order.append(i)

    waiters = []
    for i in range(5):
        thread = threading.Thread(target=wait_turn, args=(i,), daemon=True)
        thread.start()
        arrived.append(thread)
        while pool.snapshot()["waiting"] < i + 1:  # the i-th waiter is queued before the next arrives
            threading.Event().wait(0.01)
        waiters.append(thread)
    release.set()
    for thread in holders + waiters:
        thread.join(10)
    assert order == [0, 1, 2, 3, 4]


def test_a_timeout_says_so():
    pool = WorkSlots(2)
    with pool.slot():
        with pool.slot():
            with pytest.raises(TimeoutError, match="no work slot"):
                with pool.slot(timeout_s=0.05):
                    pass


def test_the_size_comes_from_the_environment():
    assert configured_size({ENV: "5"}) == 5
    assert configured_size({ENV: "1"}) >= 2 and configured_size({ENV: "x"}) >= 2
    assert WorkSlots(1).size == 2  # one slot would leave heavy work none


def test_the_front_door_takes_its_slots(tmp_path, monkeypatch):
    """index_pending and evaluate take a heavy slot, run_modes a light one (a stubbed pool records it)."""
    from conftest import HashEmbedder

    import core.fairness as fairness
    from core import api
    from core.auth import LOCAL_ADMIN
    from core.workspace import Workspace

    taken: list[bool] = []

    class Recording(WorkSlots):
        def slot(self, heavy: bool = False, timeout_s=None):
            taken.append(heavy)
            return super().slot(heavy, timeout_s)

    monkeypatch.setattr(fairness, "_POOL", Recording(2))
    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    try:
        api.index_pending(LOCAL_ADMIN, ws)
        assert taken == [True]
        api.evaluate(LOCAL_ADMIN, ws, [], ["naive"])
        assert taken == [True, True]
        api.run_modes(LOCAL_ADMIN, ws, "Who?", ["naive"], with_answers=False)
        assert taken == [True, True, False]
    finally:
        ws.close()
