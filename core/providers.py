"""Providers belong to the operator: which base URLs RAGScope may call, and which key goes where.

The *operator* (whoever starts the server) lists the allowed provider base URLs and their keys in the
server's environment or Streamlit secrets, read at start-up (``configure(env, secrets, local_mode)``;
until then the process environment is read on first use):

* ``RAGSCOPE_ALLOWED_LLM_URLS`` / ``RAGSCOPE_ALLOWED_EMBEDDING_URLS`` — comma-separated base URLs. An
  entry may name the variable (or secret) holding its key after a space: ``http://gpu:8000/v1 VLLM_KEY``.
  ``RAGSCOPE_LLM_BASE_URL`` / ``RAGSCOPE_EMBEDDING_BASE_URL`` (the operator's chosen server) are allowed
  too. With no list at all, only the OpenAI API (``https://api.openai.com/v1``) is allowed.
* Keys: the entry's own variable, else ``RAGSCOPE_LLM_API_KEY`` / ``RAGSCOPE_EMBEDDING_API_KEY``, else
  ``OPENAI_API_KEY``.

Rules (``key_for``, called by the HTTP clients ``core.llm.client`` and ``core.remote_embeddings``
before anything is sent, so the judge, the CLI and the connection test are all covered):

1. A URL that is not http(s) with a host is refused with a message (never a network error).
2. An operator key is only ever sent to an allowed URL (compared as scheme + host + port + path prefix
   on segment boundaries, after normalisation). A key handed in that equals an operator key counts as
   the operator's, wherever it came from.
3. With sign-in on (``local_mode=False``) a URL off the allowlist is refused outright
   (``ProviderNotAllowedError``). In local mode (sign-in off) any http(s) URL may be used with the
   user's own key (typed in the session) or with none.
"""
from __future__ import annotations

import posixpath
import threading
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Optional
from urllib.parse import urlsplit

from core.errors import ProviderNotAllowedError

Kind = Literal["llm", "embeddings"]
KINDS: tuple[str, ...] = ("llm", "embeddings")
OPENAI_API = "https://api.openai.com/v1"
_LIST_VARS = {"llm": "RAGSCOPE_ALLOWED_LLM_URLS", "embeddings": "RAGSCOPE_ALLOWED_EMBEDDING_URLS"}
_CHOSEN_VARS = {"llm": "RAGSCOPE_LLM_BASE_URL", "embeddings": "RAGSCOPE_EMBEDDING_BASE_URL"}
_KEY_VARS = {"llm": "RAGSCOPE_LLM_API_KEY", "embeddings": "RAGSCOPE_EMBEDDING_API_KEY"}
_WHAT = {"llm": "LLM", "embeddings": "embeddings"}


@dataclass(frozen=True)
class Target:
    """A base URL in normal form: lower-case scheme and host, explicit port, normalised path."""

    scheme: str
    host: str
    port: int
    path: str  # "" or "/a/b" (no trailing slash)

    @property
    def url(self) -> str:
        default = {"http": 80, "https": 443}[self.scheme]
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port == default else f":{self.port}"
        return f"{self.scheme}://{host}{port}{self.path}"

    def within(self, allowed: "Target") -> bool:
        """Same scheme, host and port, and the path is the allowed path or below it."""
        if (self.scheme, self.host, self.port) != (allowed.scheme, allowed.host, allowed.port):
            return False
        return not allowed.path or self.path == allowed.path or self.path.startswith(allowed.path + "/")


@dataclass(frozen=True)
class Provider:
    """One allowed base URL; ``key_name`` is where its key comes from ("" = none configured)."""

    kind: str
    target: Target
    key_name: str = ""

    @property
    def url(self) -> str:
        return self.target.url


@dataclass
class ProviderPolicy:
    """The operator's allowlist and keys; ``local_mode`` = sign-in is off (a single local user)."""

    providers: list[Provider] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)  # key name -> secret value
    local_mode: bool = True

    def allowed(self, kind: str) -> list[Provider]:
        return [p for p in self.providers if p.kind == kind]

    def match(self, target: Target, kind: str) -> Optional[Provider]:
        """The allowed entry ``target`` falls under (the longest path wins), or None."""
        hits = [p for p in self.allowed(kind) if target.within(p.target)]
        return max(hits, key=lambda p: len(p.target.path)) if hits else None

    def operator_keys(self) -> set[str]:
        return {v for v in self.keys.values() if v}

    def key_of(self, provider: Provider) -> Optional[str]:
        names = [provider.key_name] if provider.key_name else []
        names += [_KEY_VARS[provider.kind], "OPENAI_API_KEY"]
        return next((self.keys[n] for n in names if self.keys.get(n)), None)


def parse_base_url(url: str, kind: str = "llm") -> Target:
    """``url`` in normal form; an empty URL is the OpenAI API. Raises ``ProviderNotAllowedError`` for
    anything that is not an http(s) URL with a host (the message says how to write one)."""
    text = (url or "").strip() or OPENAI_API
    what = _WHAT.get(kind, kind)
    example = "http://HOST:PORT/v1" if kind == "llm" else "http://HOST:PORT (or …/v1)"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ProviderNotAllowedError(f"the {what} base URL {text!r} is not a valid URL ({exc}): write it as "
                                      f"{example}") from None
    scheme = (parts.scheme or "").lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ProviderNotAllowedError(f"the {what} base URL {text!r} is not an http(s) URL: write it as {example}")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ProviderNotAllowedError(f"the {what} base URL {text!r} carries a user name, query or fragment: a base "
                                      f"URL is only {example}")
    path = posixpath.normpath(parts.path) if parts.path not in ("", "/") else ""
    path = "" if path in (".", "/") else path.rstrip("/")
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    return Target(scheme, parts.hostname.lower().rstrip("."), port or (443 if scheme == "https" else 80), path)


def _flatten(source: Optional[Mapping[str, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in (source or {}).items():
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            out[str(name)] = str(value)
    return out


def policy_from(env: Optional[Mapping[str, Any]] = None, secrets: Optional[Mapping[str, Any]] = None,
                local_mode: bool = True) -> ProviderPolicy:
    """Build the policy from the environment and the secrets (a secret wins over a variable of the
    same name). Raises ``ProviderNotAllowedError`` when an allowlist entry is not an http(s) URL."""
    values = _flatten(env) | _flatten(secrets)
    providers: list[Provider] = []
    for kind in KINDS:
        listed = values.get(_LIST_VARS[kind], "")
        entries = [e.strip() for e in listed.split(",") if e.strip()]
        chosen = values.get(_CHOSEN_VARS[kind], "").strip()
        if chosen:
            entries.append(chosen)
        if not listed.strip():
            entries.append(OPENAI_API)
        for entry in entries:
            url, _, key_name = entry.partition(" ")
            providers.append(Provider(kind, parse_base_url(url, kind), key_name.strip()))
    keys = {name: value for name, value in values.items() if value and (
        name in _KEY_VARS.values() or name == "OPENAI_API_KEY" or any(p.key_name == name for p in providers))}
    return ProviderPolicy(providers, keys, bool(local_mode))


_LOCK = threading.Lock()
_POLICY: dict[str, ProviderPolicy] = {}


def configure(env: Optional[Mapping[str, Any]] = None, secrets: Optional[Mapping[str, Any]] = None,
              local_mode: bool = True) -> ProviderPolicy:
    """Install the operator's policy for this process (the app calls it at start-up with
    ``os.environ``, ``st.secrets`` and whether sign-in is off). ``env=None`` reads ``os.environ``."""
    import os

    built = policy_from(os.environ if env is None else env, secrets, local_mode)
    with _LOCK:
        _POLICY["current"] = built
    return built


def policy() -> ProviderPolicy:
    """The installed policy; on first use without ``configure``, the process environment in local mode."""
    with _LOCK:
        current = _POLICY.get("current")
    return current if current is not None else configure()


def reset() -> None:
    """Forget the installed policy (tests; the next ``policy()`` reads the environment again)."""
    with _LOCK:
        _POLICY.pop("current", None)


def allowed_providers(kind: Optional[str] = None) -> list[Provider]:
    """The operator's allowed providers (of one kind, or all), in the order configured."""
    current = policy()
    return [p for p in current.providers if kind is None or p.kind == kind]


def is_allowed(url: str, kind: str) -> bool:
    """True when ``url`` is an http(s) URL on (or below) an allowed entry of ``kind``."""
    try:
        return policy().match(parse_base_url(url, kind), kind) is not None
    except ProviderNotAllowedError:
        return False


def check_base_url(url: str, kind: str) -> None:
    """Raise ``ProviderNotAllowedError`` for a URL that is not http(s), or (sign-in on) not allowed.

    In local mode (sign-in off) any http(s) URL passes: the user may call their own server with their
    own key; the operator's key still only goes to allowed URLs (``key_for``)."""
    if kind not in KINDS:
        raise ValueError(f"unknown provider kind {kind!r}: use one of {', '.join(KINDS)}")
    target = parse_base_url(url, kind)
    current = policy()
    if current.local_mode or current.match(target, kind) is not None:
        return
    choices = ", ".join(p.url for p in current.allowed(kind)) or "none"
    raise ProviderNotAllowedError(
        f"the {_WHAT[kind]} base URL {target.url} is not one the operator allowed (allowed: {choices}); the "
        f"operator adds URLs to {_LIST_VARS[kind]} in the server's environment or secrets")


def key_for(url: str, kind: str, supplied: Optional[str] = None) -> Optional[str]:
    """The API key to send to ``url`` (None: send none). ``supplied`` is the caller's key (the user's
    own, typed in the session); a supplied key equal to an operator key is treated as the operator's.
    Raises as ``check_base_url`` does."""
    check_base_url(url, kind)
    current = policy()
    entry = current.match(parse_base_url(url, kind), kind)
    if supplied and supplied not in current.operator_keys():
        return supplied  # the user's own key: theirs to send where they like
    return current.key_of(entry) if entry is not None else None


def normalised_url(url: str, kind: str = "llm") -> str:
    """``url`` in normal form (what the clients call and what the LLM cache key records)."""
    return parse_base_url(url, kind).url


def withheld_key_hint(url: str, kind: str, supplied: Optional[str]) -> str:
    """When an operator key exists but was not sent to ``url`` (off the allowlist), the sentence that
    says so (for a 401 message); "" otherwise."""
    current = policy()
    try:
        entry = current.match(parse_base_url(url, kind), kind)
    except ProviderNotAllowedError:
        return ""
    if entry is not None or (supplied and supplied not in current.operator_keys()) or not current.operator_keys():
        return ""
    return (f" The operator's key is only sent to allowed URLs and {normalised_url(url, kind)} is not one: add "
            f"it to {_LIST_VARS[kind]}, or enter your own key in this session.")
