"""The cancel events of the indexing runs going on in this process, per workspace, so that a Cancel
from any session (through ``core.api.cancel_indexing``, which checks the caller's role) reaches the run
on that workspace and no other. ``core.api.index_pending`` registers each run for its duration."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

_LOCK = threading.Lock()
_EVENTS: dict[str, list[threading.Event]] = {}


@contextmanager
def registered(workspace_key: str, event: threading.Event) -> Iterator[threading.Event]:
    """Register ``event`` as the cancel event of a run on ``workspace_key`` while the block runs."""
    with _LOCK:
        _EVENTS.setdefault(workspace_key, []).append(event)
    try:
        yield event
    finally:
        with _LOCK:
            events = _EVENTS.get(workspace_key, [])
            if event in events:
                events.remove(event)
            if not events:
                _EVENTS.pop(workspace_key, None)


def cancel_runs(workspace_key: str) -> int:
    """Set the cancel event of every run registered on ``workspace_key``; the number of runs reached."""
    with _LOCK:
        events = list(_EVENTS.get(workspace_key, []))
    for event in events:
        event.set()
    return len(events)


def runs_on(workspace_key: str) -> int:
    """How many runs are registered on ``workspace_key``."""
    with _LOCK:
        return len(_EVENTS.get(workspace_key, []))
