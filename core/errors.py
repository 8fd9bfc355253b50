"""The user-facing errors of RAGScope: one base class, ``RAGScopeError``, and the classes under it.

Each one's message is written for the user (it names the fix). ``KNOWN_ERRORS`` is the one tuple
the CLI and the app use to decide what to show as a plain message (anything else is a bug and
shows its traceback). Each class keeps the built-in base it had before (``RuntimeError`` or
``ValueError``) so that existing ``except`` clauses still catch it.

This module imports nothing from ``core``: every layer may import it.
"""
from __future__ import annotations


class RAGScopeError(Exception):
    """Base of the errors whose message is meant for the user."""


class SettingsError(RAGScopeError, ValueError):
    """A settings file cannot be used."""


class WorkspaceBusyError(RAGScopeError, RuntimeError):
    """Another process is writing to this workspace."""


class CorruptWorkspaceError(RAGScopeError, RuntimeError):
    """The workspace database cannot be opened; the message says how to recover."""


class EmbedderMismatchError(RAGScopeError, RuntimeError):
    """The workspace was built with another embedder; its vectors cannot be mixed."""


class EmbeddingServerError(RAGScopeError, RuntimeError):
    """An embeddings request failed; the message (naming the URL) is meant for the user."""


class LLMError(RAGScopeError, RuntimeError):
    """An LLM call failed; the message is meant for the user."""


class PermissionDeniedError(RAGScopeError, PermissionError):
    """The caller's role (``core.auth``) does not allow this action or workspace."""


class WorkspaceNameError(RAGScopeError, ValueError):
    """A workspace name (or ``RAGSCOPE_WORKSPACE``) is malformed or points outside the data folder."""


class TooManyQuestionsError(RAGScopeError, ValueError):
    """A question set is larger than the workspace's ``max_eval_questions`` (an evaluation holds a heavy work slot)."""


class ProviderNotAllowedError(RAGScopeError, ValueError):
    """A provider base URL is not an http(s) URL, or not one the operator allowed (``core.providers``)."""


# ValueError: bad input (an unknown mode, a malformed --param, a half-configured server) is reported
# with a ValueError whose message names the fix.
class InputTooLongError(RAGScopeError, ValueError):
    """A free-text input (a graph search, a question) is longer than its limit."""


MAX_SEARCH_CHARS = 200  # a graph search: part of a name
MAX_QUESTION_CHARS = 10_000  # a question (Compare and Inspect use the first 2,000 characters of what is typed)


def check_length(text: str, limit: int, what: str) -> str:
    """``text`` when it is at most ``limit`` characters long, else ``InputTooLongError`` naming the limit."""
    if len(text or "") > limit:
        raise InputTooLongError(f"The {what} is {len(text):,} characters long; the limit is {limit:,}. "
                                f"Shorten it and try again.")
    return text


KNOWN_ERRORS: tuple[type[Exception], ...] = (RAGScopeError, ValueError)


def retry_after(exc: Exception) -> float:
    """Seconds a server asked the client to wait (the Retry-After header of an HTTP error from the
    ``openai`` client, used by the LLM and the embeddings clients); 0 when it did not say."""
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0
