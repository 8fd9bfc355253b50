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


class ProviderNotAllowedError(RAGScopeError, ValueError):
    """A provider base URL is not an http(s) URL, or not one the operator allowed (``core.providers``)."""


class InputTooLongError(RAGScopeError, ValueError):
    """A free-text field (a graph search, a question, a document name) is longer than its bound."""


# Length bounds of the free-text fields a user types (characters). A search longer than any name is no
# search: it is refused with a message before it reaches the database (a 50 KB LIKE pattern is "too
# complex" for SQLite; a 200 k-character one took 13-15 s under PostgreSQL's generic plan).
MAX_SEARCH_CHARS = 200
MAX_QUESTION_CHARS = 4000
MAX_NAME_CHARS = 200


def check_length(text: str, limit: int, what: str) -> str:
    """``text`` unchanged when it has at most ``limit`` characters; otherwise ``InputTooLongError``
    naming ``what`` and both lengths (the check costs nothing, whatever the text's size)."""
    if len(text) > limit:
        raise InputTooLongError(f"{what} is {len(text):,} characters long; the limit is {limit:,}. "
                                "Shorten it and try again.")
    return text


# ValueError: bad input (an unknown mode, a malformed --param, a half-configured server) is reported
# with a ValueError whose message names the fix.
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
