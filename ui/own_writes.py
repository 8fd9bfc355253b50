"""The generation at which this process last saw each workspace: shared by ``ui.state`` and
``ui.indexing`` so that neither imports the other for it (no Streamlit here).

``ui.state.follow_generation`` compares a workspace's generation with the one recorded here: when it
moved and nobody writes, another process changed the workspace and its vector store is reopened. A
write of this process (an indexing job of ``ui.indexing``, a delete on the Documents page) records the
generation it reached (``note_own_write``), so it is not taken for a change made outside this page.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from core import api
from core.auth import Principal

if TYPE_CHECKING:
    from core.api import Workspace

SEEN: dict[str, int] = {}  # workspace path -> generation its vector store was last (re)opened at
SEEN_LOCK = threading.Lock()


def note_own_write(ws: Workspace, who: Principal) -> None:
    """This process wrote ``ws`` through its shared store: its vectors are current, so the generation it
    reached (read as ``who``) is not a change "outside this page"."""
    with SEEN_LOCK:
        SEEN[str(ws.path)] = api.generation(who, ws)
