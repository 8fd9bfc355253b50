"""The app's warm-up (with housekeeping, the server's) freezes the workspace's loaded views out of the
garbage collector's view once they are loaded, as it does the models: a full collection then never
rescans the generation's few hundred thousand long-lived objects in the middle of a Compare."""
from __future__ import annotations

import gc

from core import warmup


def test_views_are_frozen_after_the_workspace_warm_up(monkeypatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(warmup, "warm_models", lambda embedder_too=True: calls.append("models"))
    monkeypatch.setattr(warmup, "start_housekeeping", lambda: calls.append("housekeeping"))
    monkeypatch.setattr(warmup, "warm_workspace", lambda ws: calls.append("views"))
    monkeypatch.setattr(warmup, "refreeze", lambda: calls.append("freeze"))
    warmup._run(object(), embedder_too=False, housekeeping=True)
    assert calls == ["models", "housekeeping", "views", "freeze"]
    calls.clear()
    warmup._run(object(), embedder_too=False, housekeeping=False)  # a plain warm-up (tests, tools) freezes nothing
    assert calls == ["models", "views"]


class _Views:
    """Stands for a generation's loaded views: an object in a reference cycle."""

    def __init__(self) -> None:
        self.me = self


def test_an_older_generations_frozen_views_are_collected_at_the_next_freeze() -> None:
    import weakref

    gc.collect()
    old = _Views()
    gone = weakref.ref(old)
    gc.freeze()  # the first generation's warm-up froze its views
    try:
        del old  # a new generation replaced them: only their own cycle holds them now
        gc.collect()
        assert gone() is not None  # frozen: a plain collection never reaches them
        warmup.refreeze()  # the next generation's warm-up
        assert gone() is None, "the old generation's views stayed frozen for the life of the process"
    finally:
        gc.unfreeze()
