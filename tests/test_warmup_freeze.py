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
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    warmup._run(object(), embedder_too=False, housekeeping=True)
    assert calls == ["models", "housekeeping", "views", "freeze"]
    calls.clear()
    warmup._run(object(), embedder_too=False, housekeeping=False)  # a plain warm-up (tests, tools) freezes nothing
    assert calls == ["models", "views"]
