"""Choosing and building the LLM provider for the CLI and the app.

* ``providers(ws, settings)`` → (chat model or None, keyword extractor or None) for the resolved
  settings of a run (``core.config.resolve_settings`` decides flags > environment > settings).
* ``chat_from_settings(settings, api_key, cache)`` → ``UsageCounter(CachedChat(OpenAIChat))``.
* ``index_components(ws, chat)`` → keyword arguments of ``core.indexing.pipeline.process_pending``.
* ``test_connection(settings, api_key)`` → (ok, message) for the Settings page.

API keys: the argument (the user's own key typed in the app session) or ``ws.api_key`` (each browser
session's handle, ``core.session``, carries its own); the operator's keys (environment / secrets) are
added by ``core.providers`` for allowed URLs only, inside the client.
"""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Optional

from core.errors import RAGScopeError
from core.llm.cache import CachedChat, UsageCounter
from core.llm.client import LLMError, OpenAIChat
from core.settings import Settings

if TYPE_CHECKING:
    from core.workspace import Workspace


def chat_from_settings(settings: Settings, api_key: Optional[str] = None, cache: Any = None,
                       cancel_event: Optional[threading.Event] = None, **client_options: Any) -> UsageCounter:
    """The chat model of ``settings`` with the workspace cache and usage accounting around it."""
    inner = OpenAIChat(settings.llm_base_url, settings.llm_model, api_key, temperature=settings.llm_temperature,
                       max_tokens=settings.llm_max_tokens, timeout_s=settings.llm_timeout_s,
                       max_retries=settings.llm_max_retries, cancel_event=cancel_event,
                       context_tokens=settings.llm_context_tokens, **client_options)
    return UsageCounter(CachedChat(inner, cache), cache)


def providers(ws: Workspace, settings: Settings, cancel_event: Optional[threading.Event] = None
              ) -> tuple[Optional[UsageCounter], Optional[Any]]:
    """(chat model, keyword extractor) of ``settings`` (already resolved: flags > environment >
    settings), or (None, None) when the provider is 'offline'. The chat's cache and usage rows go to
    the workspace; setting ``cancel_event`` cancels its calls (``LLMCancelled``)."""
    from core.llm.keywords import LLMKeywords

    if settings.provider != "openai":
        return None, None
    chat = chat_from_settings(settings, getattr(ws, "api_key", None), ws.open_llm_cache(), cancel_event=cancel_event)
    return chat, LLMKeywords(chat)


def index_components(ws: Workspace, chat: Optional[Any]) -> dict[str, Any]:
    """``extractor``, ``profile_summarizer`` and ``tree_summarizer`` for ``process_pending``
    (empty when ``chat`` is None: the offline defaults apply). Call ``chat.flush()`` afterwards."""
    if chat is None:
        return {}
    from core.llm.extraction import LLMExtractor
    from core.llm.summaries import llm_profile_summarizer, llm_tree_summarizer

    return {"extractor": LLMExtractor(chat, ws.settings),
            "profile_summarizer": llm_profile_summarizer(chat, ws.settings),
            "tree_summarizer": llm_tree_summarizer(chat, ws.settings)}


def test_connection(settings: Settings, api_key: Optional[str] = None, timeout_s: float = 20.0) -> tuple[bool, str]:
    """Check that the server answers and knows the model: (ok, message for the user)."""
    if not settings.llm_model:
        return False, "no model is set — fill in Settings → Chat model"
    try:
        chat = OpenAIChat(settings.llm_base_url, settings.llm_model, api_key, temperature=0.0, max_tokens=8,
                          timeout_s=min(timeout_s, settings.llm_timeout_s), max_retries=0)
    except RAGScopeError as exc:  # a model missing, or a URL the operator did not allow: nothing was sent
        return False, str(exc)
    where = chat.base_url
    listed: list[str] = []
    try:
        listed = chat.list_models()
    except LLMError:
        listed = []  # some servers do not list models; the completion below decides
    started = time.perf_counter()
    try:
        reply = chat.complete([{"role": "user", "content": "Reply with the word OK."}], stage="answer", max_tokens=8)
    except LLMError as exc:
        return False, str(exc)
    note = ""
    if listed and settings.llm_model not in listed:
        note = f" (the server lists {', '.join(listed[:3])}; it accepted '{settings.llm_model}' anyway)"
    return True, (f"connected to {where}: model '{settings.llm_model}' answered in "
                  f"{time.perf_counter() - started:.1f}s{note}" + ("" if reply.text.strip() else " with an empty reply"))
