"""``core.api`` functions for the models: the chat model of a workspace's settings, testing a chat server
before the settings are saved, and warming the models up.

* viewer — ``chat_model``, ``warm_up``;
* admin — ``check_llm_connection`` (the Settings page: it sends the key to the server being set up).

Re-exported by ``core.api``.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Optional

from core.auth import Principal, Role, requires
from core.settings import Settings
from core.workspace import Workspace

if TYPE_CHECKING:
    from core.llm.cache import UsageCounter


@requires(Role.viewer)
def chat_model(principal: Principal, ws: Workspace, settings: Settings, api_key: Optional[str],
               cancel_event: Optional[threading.Event] = None) -> UsageCounter:
    """The chat model of ``settings`` with the workspace's LLM cache and usage accounting around it
    (``core.llm.provider.chat_from_settings``)."""
    from core.llm.provider import chat_from_settings

    return chat_from_settings(settings, api_key, ws.open_llm_cache(), cancel_event=cancel_event)


@requires(Role.admin)
def check_llm_connection(principal: Principal, settings: Settings, api_key: Optional[str] = None) -> tuple[bool, str]:
    """Check that the chat server of ``settings`` answers and knows the model: (ok, message for the user)
    (``core.llm.provider.test_connection``)."""
    from core.llm.provider import test_connection

    return test_connection(settings, api_key)


@requires(Role.viewer)
def warm_up(principal: Principal, ws: Optional[Workspace] = None) -> Optional[threading.Thread]:
    """Load the models (and ``ws``'s read views) in a daemon thread once per process and generation
    (``core.warmup.start_warmup``); returns the thread, or None when that warm-up already started. Once
    the models are loaded, the server's memory housekeeping starts too (``core.warmup.start_housekeeping``)."""
    from core.warmup import start_warmup

    return start_warmup(ws, housekeeping=True)
