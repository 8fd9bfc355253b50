"""Cancel honoured while one call that cannot check for it runs (loading a model, one long library call).

Loading the embedding model or the spaCy pipeline is one library call of several seconds (more on a
busy machine) that never looks at the run's Cancel. ``call_cancellable(load, doing)`` runs ``load``
in a helper thread and waits for it in short slices, checking the enclosing ``core.types.cancel_scope``
between them: on Cancel the caller gets ``Cancelled`` within ``POLL_S`` while the helper thread
finishes the load on its own (the loaders cache what they built, so the next run finds the model
loaded and pays nothing twice). Outside a cancel scope the call runs inline, exactly as before.
"""
from __future__ import annotations

import threading
from typing import Callable, TypeVar

from core.types import checkpoint, in_cancel_scope

T = TypeVar("T")
POLL_S = 0.1  # the longest a Cancel waits for the next look at the events


def call_cancellable(work: Callable[[], T], doing: str, poll_s: float = POLL_S) -> T:
    """``work()``'s result or exception; inside a cancel scope, ``Cancelled("indexing cancelled while
    <doing>")`` as soon as Cancel is pressed (``work`` then ends in the background, its result dropped)."""
    if not in_cancel_scope():
        return work()
    checkpoint(doing)
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller as it is
            outcome["error"] = exc

    helper = threading.Thread(target=run, name=f"ragscope-{doing.replace(' ', '-')}", daemon=True)
    helper.start()
    while helper.is_alive():
        helper.join(poll_s)
        if helper.is_alive():
            checkpoint(doing)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
