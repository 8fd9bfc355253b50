"""Show exceptions as readable ``st.error`` messages instead of Streamlit's traceback page.

Use it as a context manager::

    with show_errors("Indexing failed"):
        api.index_text(ws, name, text)

or as a decorator on a page's ``main()``::

    @show_errors()
    def main() -> None: ...

Known, user-facing errors (``core.errors.KNOWN_ERRORS``, the same tuple as the CLI's: every
``RAGScopeError`` and ``ValueError``) show their message only. Anything else shows "Something went wrong: <type>: <msg>"
plus the traceback text in a collapsed expander (as plain text, never Markdown). Streamlit's own
control-flow exceptions (``st.rerun``, ``st.stop``, ``st.switch_page``) derive from
``BaseException`` and pass through untouched.
"""
from __future__ import annotations

import functools
import traceback
from types import TracebackType
from typing import Any, Callable, Optional, TypeVar

import streamlit as st

from core.errors import KNOWN_ERRORS
from ui.escape import md

F = TypeVar("F", bound=Callable[..., Any])
MAX_MESSAGE_CHARS = 1500


def escape_markdown(text: str) -> str:
    """Backslash-escape Markdown / Streamlit directive characters so text renders literally
    (``ui.escape.md``, the one escaping helper)."""
    return md(text)


def _short(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    text = " ".join(str(text).split()) if "\n" not in str(text) else str(text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(exc: BaseException) -> tuple[str, Optional[str]]:
    """(message, traceback text or None) for an exception, as shown to the user."""
    message = _short(str(exc)) or type(exc).__name__
    if isinstance(exc, KNOWN_ERRORS):
        return message, None
    details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return f"Something went wrong: {type(exc).__name__}: {message}", details


def render_exception(exc: BaseException, prefix: str = "") -> None:
    """Render one exception as an error box (plus a traceback expander for unexpected ones)."""
    message, details = describe(exc)
    if prefix:
        message = f"{prefix}: {message}"
    # st.error renders Markdown and messages may quote document text: escape every Markdown
    # character so the message shows literally.
    st.error(escape_markdown(message), icon="⚠️")
    if details and st.get_option("client.showErrorDetails") in ("full", True, "true"):  # off outside local mode
        with st.expander("Technical details (traceback)", expanded=False):
            st.code(details, language=None)


class show_errors:  # noqa: N801 - used like a function (context manager and decorator)
    """Context manager / decorator that turns exceptions into readable error messages."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.error: Optional[BaseException] = None

    def __enter__(self) -> "show_errors":
        self.error = None
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool:
        if exc is None or not isinstance(exc, Exception):
            return False  # no error, or Streamlit control flow / KeyboardInterrupt: let it pass
        self.error = exc
        render_exception(exc, self.prefix)
        return True

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with show_errors(self.prefix):
                return func(*args, **kwargs)
            return None

        return wrapper  # type: ignore[return-value]

    @property
    def failed(self) -> bool:
        """True when the block raised (and the error was shown)."""
        return self.error is not None
