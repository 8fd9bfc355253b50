"""Start loading the models and the current workspace's read views when the app first runs, in a
daemon thread (``core.warmup``), so the first Compare does not pay for them; the page never waits."""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def warm_in_background() -> None:
    """Warm the models once per process and the current workspace once per generation; never raises."""
    from core import api
    from ui import state

    api.warm_up(state.principal())
    try:
        api.warm_up(state.principal(), state.workspace())
    except Exception:  # noqa: BLE001 - no workspace yet, or it cannot be opened: the pages say why
        log.debug("workspace warm-up skipped", exc_info=True)
