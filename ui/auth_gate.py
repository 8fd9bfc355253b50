"""Who may see the app, decided before any page runs (``app.py``).

* No ``[auth]`` in the secrets and a loopback address (the default, ``.streamlit/config.toml``): the
  single-user local tool, the caller is ``core.auth.LOCAL_ADMIN``.
* No ``[auth]`` and a non-loopback address: every page shows only the refusal of
  ``core.auth.exposure_refusal`` (how to turn sign-in on).
* ``[auth]``: a visitor who is not signed in sees only the sign-in page (whatever page URL it opened);
  a signed-in identity the operator's role mapping gives no role sees why, and Sign out.

Outside local mode error details are hidden from the browser (``client.showErrorDetails = none``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import streamlit as st
from streamlit import config as st_config

from core import auth
from core.errors import RAGScopeError
from ui import state
from ui.errors import escape_markdown


@dataclass(frozen=True)
class Decision:
    """The gate's outcome: a principal (serve the pages) or what to show instead."""

    principal: Optional[auth.Principal] = None
    refusal: Optional[str] = None  # the server is exposed without sign-in
    sign_in: bool = False  # show the sign-in page
    denied: Optional[str] = None  # signed in, but no role / bad role mapping


def server_address() -> Optional[str]:
    """The address Streamlit listens on (None: every interface)."""
    return st_config.get_option("server.address")


def local_mode() -> bool:
    """No sign-in and a loopback address: the single-user local tool."""
    return not state.signin_on() and auth.is_loopback(server_address())


def decide() -> Decision:
    """Who this session is, or why it sees no page (see the module docstring)."""
    signin = state.signin_on()
    refusal = auth.exposure_refusal(server_address(), signin)
    if refusal:
        return Decision(refusal=refusal)
    if not signin:
        return Decision(principal=auth.LOCAL_ADMIN)
    if not state.signed_in():
        return Decision(sign_in=True)
    try:
        return Decision(principal=state.principal())
    except RAGScopeError as exc:
        return Decision(denied=str(exc))


def providers() -> list[Optional[str]]:
    """The sign-in providers of ``[auth]``: ``[None]`` for a single provider configured in ``[auth]``
    itself, else the names of its ``[auth.NAME]`` sub-tables."""
    section: Any = state._secrets().get("auth") or {}
    if "client_id" in section or "server_metadata_url" in section:
        return [None]
    return sorted(name for name, value in section.items() if isinstance(value, dict)) or [None]


def harden() -> None:
    """Hide exception details from the browser unless this is the local single-user tool."""
    if not local_mode():
        st.set_option("client.showErrorDetails", "none")


def render(decision: Decision) -> None:
    """Draw the page shown instead of the app (refusal, sign-in, or no role)."""
    st.title("RAGScope")
    if decision.refusal:
        st.error(escape_markdown(decision.refusal))
        return
    if decision.sign_in:
        st.subheader("Sign in")
        st.write("This RAGScope deployment is shared: sign in with your organisation's account to open its "
                 "workspaces. What you may do (browse, edit, administer) is set by the operator.")
        for name in providers():
            label = "Sign in" if name is None else f"Sign in with {name}"
            st.button(label, key=f"login_{name or 'default'}", type="primary",
                      on_click=st.login, args=() if name is None else (name,))
        return
    st.error(escape_markdown(decision.denied or "This account may not use this deployment."))
    st.button("Sign out", key="denied_logout", on_click=st.logout)


def through_app() -> None:
    """Rerun through ``app.py`` when a page script was started on its own by Streamlit's old
    pages-folder mode. Streamlit keeps that mode on for the whole process until the first
    ``st.navigation`` call: on a freshly started server, a page URL opened before anyone opened the
    root ran ``pages/NAME.py`` alone — without app.py's gate, its hardening (error details), its
    sidebar and its role-filtered navigation (found by hand, 20). Leaving the mode and rerunning
    sends this and every later run through app.py, on the same page."""
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def guard(minimum: auth.Role = auth.Role.viewer) -> auth.Principal:
    """The first call of every page: the session's principal, or (when the gate refuses, or the role is
    below ``minimum``) the refusal / sign-in page and ``st.stop()``. ``app.py`` already gates before
    any page runs (``through_app`` makes sure it did); this keeps a page safe when it is run on its own
    (AppTest, a future entry point)."""
    through_app()
    decision = decide()
    if decision.principal is None:
        render(decision)
        st.stop()
    if decision.principal.role < minimum:
        st.error(escape_markdown(f"This page needs the {minimum.name} role; you are a "
                                 f"{decision.principal.role.name}. Ask the operator for the role."))
        st.stop()
    return decision.principal
