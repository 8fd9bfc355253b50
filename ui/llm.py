"""The LLM of this app session, set up in one place for every page (Documents, Compare, Inspect).

An LLM is configured when the session's settings select the provider 'openai' (Settings page;
``RAGSCOPE_LLM_BASE_URL`` + ``RAGSCOPE_LLM_MODEL`` are already applied to them by
``core.settings.load_settings``). The API key comes from ``ui.state.api_key()`` (this session's
field, Streamlit secrets, ``OPENAI_API_KEY``) and is handed to the ``openai`` client only — never
stored here, shown or written. When the LLM is asked for but cannot be used, ``note`` says why and
the pages run offline (spaCy extraction, extractive summaries and answers).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

import pandas as pd
import streamlit as st

from ui.errors import escape_markdown
from ui.state import api_key, principal, session_settings

if TYPE_CHECKING:
    from core.api import Workspace

USAGE_STAGES = ("extraction", "gleaning", "summaries", "keywords", "answer")


@dataclass
class SessionLLM:
    """The chat model (usage-counting, cached) and keyword extractor of a session, or none (offline)."""

    chat: Any = None
    keywords: Any = None
    note: str = ""  # why the offline path is used although an LLM was asked for
    settings: Any = None
    cancel_event: threading.Event = field(default_factory=threading.Event)
    enabled: bool = False  # the LLM will be used (the chat is only built when asked for)

    def extraction_text(self) -> str:
        """What indexing will do, in Markdown (user-provided names escaped)."""
        if not self.enabled:
            from core.auth import Role
            from ui.state import can

            how = ("Choose the OpenAI-compatible provider in Settings to extract with an LLM." if can(Role.admin)
                   else "An admin can choose an LLM provider in Settings; ask the operator if you need one.")
            return ("**Extraction: spaCy (offline).** Entities and relations come from spaCy; profiles and "
                    f"summary-tree nodes are extractive. {how}")
        s = self.settings
        where = escape_markdown(s.llm_base_url or "the OpenAI API")
        passes = s.gleaning_passes
        return (f"**Extraction: LLM** {escape_markdown(s.llm_model)} at {where}. The LLM extracts entities and "
                f"relations ({passes} gleaning pass{'es' if passes != 1 else ''}) and summarises long profiles "
                f"and the summary-tree nodes; the mention graph still comes from spaCy. Replies are cached in the "
                f"workspace, so re-indexing the same text costs no new calls.")


def llm_problem(settings: Any, key: Optional[str]) -> str:
    """Why an 'openai' provider cannot be used as configured ('' when it can)."""
    if not settings.llm_model:
        return "no chat model is set (Settings → Chat model)"
    from core import providers
    from core.errors import RAGScopeError

    try:
        sendable = providers.key_for(settings.llm_base_url, "llm", key)  # the operator's key, if allowed there
    except RAGScopeError as exc:
        return str(exc)
    if not settings.llm_base_url and not sendable:
        return "neither an LLM base URL nor an API key is set (Settings → Server URL, or OPENAI_API_KEY)"
    return ""


def session_llm(ws: "Workspace", settings: Any = None, cancel_event: Optional[threading.Event] = None,
                build: bool = True) -> SessionLLM:
    """The session's LLM for ``ws`` (``settings`` default: the session's); offline when none is configured.

    ``cancel_event`` becomes the client's cancellation: setting it makes calls raise ``LLMCancelled``.
    ``build=False`` only decides whether the LLM would be used (for labels), without a client."""
    settings = settings if settings is not None else session_settings()
    cancel_event = cancel_event or threading.Event()
    if getattr(settings, "provider", "offline") != "openai":
        return SessionLLM(settings=settings, cancel_event=cancel_event)
    key = api_key()
    problem = llm_problem(settings, key)
    if problem:
        return SessionLLM(note=f"An LLM is selected but {problem}: the offline path is used.", settings=settings,
                          cancel_event=cancel_event)
    if not build:
        return SessionLLM(settings=settings, cancel_event=cancel_event, enabled=True)
    try:
        from core import api
        from core.llm.keywords import LLMKeywords

        chat = api.chat_model(principal(), ws, settings, key, cancel_event=cancel_event)
    except Exception as exc:  # noqa: BLE001 - shown to the user; the page still works offline
        return SessionLLM(note=f"Could not set up the LLM ({exc}); the offline path is used.", settings=settings,
                          cancel_event=cancel_event)
    return SessionLLM(chat, LLMKeywords(chat), "", settings, cancel_event, enabled=True)


def llm_for_queries(ws: "Workspace", settings: Any = None) -> tuple[Any, Any]:
    """(chat model, keyword extractor) for Compare/Inspect — (None, None) offline — with a warning
    on the page when an LLM was asked for but cannot be used (answers are then extractive)."""
    llm = session_llm(ws, settings)
    if llm.note:
        st.warning(escape_markdown(llm.note + " Answers are extractive."))
    return llm.chat, llm.keywords


def usage_frame(usage: dict[str, dict[str, float]]) -> pd.DataFrame:
    """Per-stage LLM usage (calls, cache hits, prompt/completion tokens, seconds) as a table."""
    stages = [s for s in USAGE_STAGES if s in usage] + sorted(s for s in usage if s not in USAGE_STAGES)
    rows = [{"stage": s, "calls": int(usage[s].get("calls", 0)), "cached": int(usage[s].get("cached", 0)),
             "prompt tokens": int(usage[s].get("prompt_tokens", 0)),
             "completion tokens": int(usage[s].get("completion_tokens", 0)),
             "seconds": round(float(usage[s].get("seconds", 0.0)), 1)} for s in stages]
    return pd.DataFrame(rows, columns=["stage", "calls", "cached", "prompt tokens", "completion tokens", "seconds"])


def usage_totals(usage: dict[str, dict[str, float]]) -> dict[str, int]:
    """Calls, cache hits and tokens summed over the stages."""
    return {name: int(sum(v.get(name, 0) for v in usage.values()))
            for name in ("calls", "cached", "prompt_tokens", "completion_tokens")}
