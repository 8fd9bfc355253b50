"""Who is calling: roles, principals, the operator's role mapping, and the checks the library makes.

* ``Role`` — ordered: ``viewer < editor < admin``. A viewer browses, queries, compares, inspects,
  evaluates and exports; an editor may also upload, index and delete documents and annotate; an admin
  may also change settings (among the operator's allowed choices) and create or delete workspaces.
* ``Principal(subject, email, role, workspaces)`` — the caller of every ``core.api`` function.
  ``workspaces`` is the set of workspace names it may open (``None``: all of them).
* ``LOCAL_ADMIN`` — the principal when sign-in is off (the single-user local app, the CLI).
* ``require(principal, role)`` / ``@requires(role)`` — raise ``PermissionDeniedError`` below the role;
  the decorator also records the minimum role on the function (``min_role``), which a test reads.
* ``RoleMap`` / ``load_role_map(secrets, environ)`` — the *operator's* mapping from signed-in
  identities (e-mail, or OIDC issuer and subject: ``identity_key``) to a role and the workspaces each may open, read once at start-up
  from ``RAGSCOPE_ROLES`` (JSON) or the ``[ragscope.roles]`` table of ``.streamlit/secrets.toml``.
  Nothing in the app writes it. ``docs/deployment.md`` shows the format.
* ``signin_enabled(secrets)`` — whether ``[auth]`` (Streamlit's OIDC sign-in) is configured.
* ``exposure_refusal(address, signin)`` — the refusal shown when the server listens on a non-loopback
  address without sign-in (None when it may serve).

This module imports nothing from Streamlit: the app passes ``st.secrets`` in as a mapping.
"""
from __future__ import annotations

import enum
import functools
import inspect
import ipaddress
import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, TypeVar

from core.errors import PermissionDeniedError, RAGScopeError

F = TypeVar("F", bound=Callable[..., Any])
ALL = "*"
NO_ROLE = "none"
ROLES_ENV = "RAGSCOPE_ROLES"


class Role(enum.IntEnum):
    """The roles, ordered by what they may do (each one may do everything of the ones below it)."""

    viewer = 1
    editor = 2
    admin = 3

    @classmethod
    def parse(cls, value: Any, where: str = "role") -> "Role":
        """A role from its name ("viewer", "editor", "admin"; case-insensitive); RoleConfigError otherwise."""
        if isinstance(value, Role):
            return value
        try:
            return cls[str(value).strip().lower()]
        except KeyError:
            raise RoleConfigError(f"{where}: unknown role {value!r}; use one of viewer, editor, admin") from None


class RoleConfigError(RAGScopeError, ValueError):
    """The operator's role mapping cannot be used (the message names the entry)."""


@dataclass(frozen=True)
class Principal:
    """A caller: the identity it signed in with, its role, and the workspaces it may open (None: all)."""

    subject: str
    email: str
    role: Role
    workspaces: Optional[frozenset[str]] = None

    def may_open(self, name: str) -> bool:
        return self.workspaces is None or name in self.workspaces

    @property
    def label(self) -> str:
        return self.email or self.subject


LOCAL_ADMIN = Principal(subject="local", email="", role=Role.admin, workspaces=None)

ACTIONS = {Role.viewer: "browse, query and export", Role.editor: "upload, index, delete documents and annotate",
           Role.admin: "change settings and create or delete workspaces"}


def require(principal: Principal, role: Role, action: str = "") -> None:
    """Raise PermissionDeniedError unless ``principal``'s role is at least ``role``."""
    if not isinstance(principal, Principal):
        raise TypeError(f"expected a core.auth.Principal, got {type(principal).__name__} (pass core.auth.LOCAL_ADMIN "
                        "for local use)")
    if principal.role < role:
        what = f" ({action})" if action else ""
        raise PermissionDeniedError(f"{principal.label or 'this account'} is a {principal.role.name}: only an "
                                    f"{role.name} or above may {ACTIONS[role]}{what}. Ask the operator for the role.")


def require_workspace(principal: Principal, name: str) -> None:
    """Raise PermissionDeniedError unless ``principal`` may open the workspace ``name``."""
    if not principal.may_open(name):
        raise PermissionDeniedError(f"{principal.label or 'this account'} may not open the workspace {name!r}. "
                                    "Ask the operator to add it to your workspaces.")


def requires(role: Role) -> Callable[[F], F]:
    """Decorator of a ``core.api`` function whose first parameter is the caller's ``Principal``: checks the
    role (and, when the function has a ``ws`` parameter, that the principal may open that workspace)
    before the body runs, and records ``min_role`` on the function."""

    def decorate(func: F) -> F:
        signature = inspect.signature(func)
        takes_ws = "ws" in signature.parameters

        @functools.wraps(func)
        def wrapper(principal: Principal, *args: Any, **kwargs: Any) -> Any:
            require(principal, role, func.__name__)
            if takes_ws:
                ws = signature.bind_partial(principal, *args, **kwargs).arguments.get("ws")
                name = getattr(ws, "name", None)
                if isinstance(name, str):
                    require_workspace(principal, name)
            return func(principal, *args, **kwargs)

        wrapper.min_role = role  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


@dataclass(frozen=True)
class Grant:
    """One entry of the role mapping: a role and the workspaces (None: all)."""

    role: Role
    workspaces: Optional[frozenset[str]] = None


@dataclass(frozen=True)
class RoleMap:
    """The operator's mapping: identities (lower-case e-mail or exact subject) → grants, plus the grant of
    a signed-in identity that is not listed (None: refused)."""

    users: Mapping[str, Grant] = field(default_factory=dict)
    default: Optional[Grant] = None

    def principal_for(self, identity: Mapping[str, Any]) -> Principal:
        """The principal of a signed-in identity (``st.user``'s claims: ``sub``, ``email``,
        ``email_verified``); PermissionDeniedError when the mapping gives it no role. An e-mail counts only
        when the provider did not mark it unverified. A subject is matched with its issuer
        (``identity_key``): two providers' equal ``sub`` claims are different identities."""
        subject = identity_key(identity)
        email = str(identity.get("email") or "")
        trusted_email = email.lower() if email and identity.get("email_verified") is not False else ""
        grant = (self.users.get(subject) if subject else None) or (
            self.users.get(trusted_email) if trusted_email else None) or self.default
        if grant is None:
            raise PermissionDeniedError(f"{email or subject or 'This account'} has no role in this deployment. "
                                        f"Ask the operator to add it to [ragscope.roles] (or {ROLES_ENV}).")
        return Principal(subject=subject, email=email, role=grant.role, workspaces=grant.workspaces)


def identity_key(identity: Mapping[str, Any]) -> str:
    """The key of a signed-in identity in the role mapping: ``<issuer>#<subject>`` (the ``iss`` and ``sub``
    claims; an OIDC issuer holds no ``#``), or the bare subject when the identity names no issuer;
    "" without a subject."""
    subject = str(identity.get("sub") or "")
    issuer = str(identity.get("iss") or "")
    return f"{issuer}#{subject}" if subject and issuer else subject


def _workspaces(value: Any, where: str) -> Optional[frozenset[str]]:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise RoleConfigError(f"{where}: workspaces must be a list of workspace names (or \"*\")")
    names = frozenset(v.strip() for v in value if v.strip())
    return None if ALL in names else names


def _grant(value: Any, where: str) -> Optional[Grant]:
    if isinstance(value, str):
        return None if value.strip().lower() == NO_ROLE else Grant(Role.parse(value, where))
    if isinstance(value, Mapping):
        unknown = set(value) - {"role", "workspaces"}
        if unknown:
            raise RoleConfigError(f"{where}: unknown key(s) {sorted(unknown)}; use role and workspaces")
        role = value.get("role", "")
        if str(role).strip().lower() == NO_ROLE:
            return None
        return Grant(Role.parse(role, where), _workspaces(value.get("workspaces"), where))
    raise RoleConfigError(f"{where}: expected a role name or a table with role and workspaces")


def parse_role_map(data: Mapping[str, Any]) -> RoleMap:
    """A RoleMap from its configuration::

        {"default": "viewer" | "none", "default_workspaces": ["*"],
         "users": {"alice@example.com": "admin", "bob@example.com": {"role": "editor", "workspaces": ["team"]}}}
    """
    if not isinstance(data, Mapping):
        raise RoleConfigError("the role mapping must be a table (TOML) or an object (JSON)")
    unknown = set(data) - {"default", "default_workspaces", "users"}
    if unknown:
        raise RoleConfigError(f"role mapping: unknown key(s) {sorted(unknown)}; use default, default_workspaces, users")
    default = _grant(data.get("default", NO_ROLE), "default")
    if default is not None:
        default = Grant(default.role, _workspaces(data.get("default_workspaces"), "default_workspaces"))
    users_data = data.get("users") or {}
    if not isinstance(users_data, Mapping):
        raise RoleConfigError("users must be a table: identity = role")
    users: dict[str, Grant] = {}
    for identity, value in users_data.items():
        grant = _grant(value, f"users.{identity}")
        if grant is not None:
            key = str(identity).strip()
            users[key.lower() if "@" in key and "#" not in key else key] = grant  # subjects match exactly
    return RoleMap(users=users, default=default)


def load_role_map(secrets: Optional[Mapping[str, Any]] = None,
                  environ: Optional[Mapping[str, str]] = None) -> RoleMap:
    """The operator's role mapping: ``RAGSCOPE_ROLES`` (JSON) if set, else ``secrets["ragscope"]["roles"]``,
    else an empty mapping (nobody signed in gets a role)."""
    environ = os.environ if environ is None else environ
    raw = environ.get(ROLES_ENV, "").strip()
    if raw:
        try:
            return parse_role_map(json.loads(raw))
        except json.JSONDecodeError as exc:
            raise RoleConfigError(f"{ROLES_ENV} is not valid JSON ({exc.msg} at character {exc.pos})") from None
    section = (secrets or {}).get("ragscope") or {}
    roles = section.get("roles") if isinstance(section, Mapping) else None
    return parse_role_map(roles) if roles else RoleMap()


def default_secrets_files(cwd: Optional[Path] = None) -> list[Path]:
    """Where Streamlit looks for secrets by default: ``~/.streamlit/secrets.toml``, then the project's."""
    return [Path.home() / ".streamlit" / "secrets.toml", (cwd or Path.cwd()) / ".streamlit" / "secrets.toml"]


def read_secrets(paths: Optional[list[Path]] = None) -> dict[str, Any]:
    """The merged secrets files (later files win), for callers without Streamlit (the CLI, tests)."""
    merged: dict[str, Any] = {}
    for path in paths if paths is not None else default_secrets_files():
        if path.is_file():
            merged.update(tomllib.loads(path.read_text(encoding="utf-8")))
    return merged


def signin_enabled(secrets: Optional[Mapping[str, Any]] = None) -> bool:
    """True when ``[auth]`` is configured (Streamlit's OIDC sign-in): ``secrets`` default: the files."""
    secrets = read_secrets() if secrets is None else secrets
    auth = secrets.get("auth")
    return isinstance(auth, Mapping) and bool(auth)


def is_loopback(address: Optional[str]) -> bool:
    """True for an address that only this machine reaches (127.0.0.0/8, ::1, "localhost"); an empty
    address means "every interface" to Streamlit, so it is not loopback."""
    host = (address or "").strip().strip("[]")
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost: assume other machines reach it


def exposure_refusal(address: Optional[str], signin: bool) -> Optional[str]:
    """Why the app refuses to serve (None when it may): listening beyond loopback without sign-in."""
    if signin or is_loopback(address):
        return None
    where = address or "every network interface"
    return (f"RAGScope is listening on {where} without sign-in, so anyone who reaches this address could read "
            "and change every workspace. It shows nothing until sign-in is turned on: add an [auth] section "
            "(OpenID Connect: redirect_uri, cookie_secret, client_id, client_secret, server_metadata_url) and a "
            "[ragscope.roles] table to .streamlit/secrets.toml, then restart — see docs/deployment.md. For "
            "single-user local use, start it on 127.0.0.1 instead (the default: streamlit run app.py).")
