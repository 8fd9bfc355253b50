"""A browser session's handle on a shared workspace: the same open workspace, its own credentials.

The app opens each workspace once per process (its record stores, vector client, embedding model and
views keyed by generation are heavy and are shared by every browser session), but in local mode each
session may type its own API key. A key kept on the shared ``Workspace`` would be one attribute for
everybody: a key typed in one tab would be sent with another tab's calls. ``SessionWorkspace`` is a
``Workspace`` whose state *is* the shared workspace's (the same attribute dictionary, so every open
store, cache and lock is the one object) while ``api_key`` lives in a slot of the handle itself:

* ``handle.embedder`` is the shared embedder sending this handle's key (``RemoteEmbedder.for_key``);
* the LLM calls of ``core.api`` take the key from the handle (``core.llm.provider.providers``);
* setting ``handle.api_key`` changes that handle only; the shared workspace's own key stays as it was.

Build one per session and request (it is cheap: two slots) with ``session_handle(shared, key)``.
"""
from __future__ import annotations

from typing import Optional

from core.workspace import Workspace

__all__ = ["SessionWorkspace", "session_handle", "shared_workspace"]


class SessionWorkspace(Workspace):
    """``shared`` seen by one caller: everything shared except ``api_key`` (this caller's own)."""

    __slots__ = ("_session_key", "_shared")

    def __init__(self, shared: Workspace, api_key: Optional[str] = None) -> None:  # no super().__init__: nothing is opened
        shared = shared_workspace(shared)
        self.__dict__ = shared.__dict__  # one state: stores, vectors, views, locks, settings
        self._shared = shared
        self._session_key = api_key or None

    @property
    def api_key(self) -> Optional[str]:
        """This caller's own key (None: the operator's keys only, added inside the HTTP clients)."""
        return self._session_key

    @api_key.setter
    def api_key(self, value: Optional[str]) -> None:
        self._session_key = value or None

    @property
    def shared(self) -> Workspace:
        """The process-wide workspace this handle looks at."""
        return self._shared

    def __repr__(self) -> str:  # never shows the key
        return f"SessionWorkspace({str(self.path)!r}, own_key={self._session_key is not None})"


def shared_workspace(ws: Workspace) -> Workspace:
    """The process-wide workspace behind ``ws`` (``ws`` itself when it is not a session handle)."""
    return ws.shared if isinstance(ws, SessionWorkspace) else ws


def session_handle(shared: Workspace, api_key: Optional[str] = None) -> SessionWorkspace:
    """A handle on ``shared`` (or on the workspace behind another handle) carrying ``api_key``."""
    return SessionWorkspace(shared, api_key)
