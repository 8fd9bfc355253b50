"""Prompts that fit the model's context window.

* ``discover_context(http, base_url, model)`` — the window the server reports: vLLM's ``max_model_len``
  in ``/v1/models``, the llama.cpp server's ``/props`` (``default_generation_settings.n_ctx``); None when
  it reports none (then the ``llm_context_tokens`` setting applies, or what a refusal taught us).
* ``learn_from_error(message)`` / ``learned_window`` — the window named in a "maximum context length
  is 4096" refusal, rescaled to cl100k by the server's own count of the refused request.
* ``fit_messages(messages, window, max_tokens)`` — (messages, max_tokens) that fit: the reply budget is
  lowered first (never below a quarter of the room, or ``MIN_REPLY_TOKENS``), then the longest message
  is trimmed in its middle
  (its start and its end — where the instructions and the question are — are kept) with a visible
  marker saying how much was left out. Token counts are cl100k estimates, so a margin is kept free.
"""
from __future__ import annotations

import logging
import re
from typing import Any, Optional, Sequence
from urllib.parse import urlsplit, urlunsplit

from core.tokens import count_tokens, decode, encode

log = logging.getLogger("core.llm")
Message = dict[str, str]
MIN_REPLY_TOKENS = 64
PER_MESSAGE_TOKENS = 4
TAIL_SHARE = 0.3  # of a trimmed message's kept tokens, the share kept from its end
MARKER = "\n[… {n:,} tokens left out here to fit the model's {window} context …]\n"
_REQUESTED = re.compile(r"requested(?: tokens)?\W{0,3}(\d{2,8})", re.I)
_CONTEXT_ERROR = re.compile(r"(?:context(?: length| window| size)?|n_ctx)\D{0,40}?(\d{3,7})", re.I)


def margin(window: int) -> int:
    """Tokens kept free: the server's tokenizer is not cl100k (small models count up to ~1/8 more)."""
    return max(32, window // 8)


def _root(base_url: str) -> str:
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[:-3]
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _positive(value: Any) -> Optional[int]:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def discover_context(http: Any, base_url: str, model: str, headers: Optional[dict[str, str]] = None,
                     timeout_s: float = 5.0) -> Optional[int]:
    """The context window the server at ``base_url`` reports for ``model``, or None.

    ``http`` is an ``httpx.Client``; ``headers`` (the key) go to ``base_url``'s own ``/models`` only —
    ``/props`` sits at the server's root, outside the base URL, and is asked without them."""
    try:
        response = http.get(base_url.rstrip("/") + "/models", headers=headers or {}, timeout=timeout_s)
        if response.status_code == 200:
            listed = response.json().get("data") or []
            for item in listed:
                if isinstance(item, dict) and (item.get("id") == model or len(listed) == 1):
                    found = _positive(item.get("max_model_len") or item.get("context_length"))
                    if found:
                        return found
    except Exception as exc:  # noqa: BLE001 - discovery is best effort; the setting applies
        log.debug("context discovery via /models failed: %s", type(exc).__name__)
    try:
        response = http.get(_root(base_url) + "/props", timeout=timeout_s)
        if response.status_code == 200:
            data = response.json()
            settings = data.get("default_generation_settings") or {}
            found = _positive(settings.get("n_ctx") if isinstance(settings, dict) else None) or _positive(
                data.get("n_ctx"))
            if found:
                return found
    except Exception as exc:  # noqa: BLE001
        log.debug("context discovery via /props failed: %s", type(exc).__name__)
    return None


def learn_from_error(message: str) -> tuple[Optional[int], Optional[int]]:
    """(context size, tokens requested) named in a server's refusal of a too-long prompt (None: not named),
    e.g. "Requested tokens (5016) exceed context window of 4096" (llama.cpp) or "maximum context length
    is 4096 tokens. However, you requested 5016 tokens" (OpenAI, vLLM)."""
    numbers = [int(m.group(1)) for m in _CONTEXT_ERROR.finditer(message or "")]
    asked = [int(m.group(1)) for m in _REQUESTED.finditer(message or "")]
    return (min(numbers) if numbers else None), (max(asked) if asked else None)


def learned_window(named: Optional[int], requested: Optional[int], estimated: int) -> int:
    """The window in this module's (cl100k) token units after a refusal: the named window scaled by how
    our estimate of the refused request compares with the server's own count (its tokenizer differs),
    or, when the server named nothing, three quarters of the estimate."""
    if named and requested and estimated:
        return max(1, min(named, int(named * estimated / requested)))
    return named or max(1, int(estimated * 0.75))


def messages_tokens(messages: Sequence[Message]) -> int:
    """Estimated prompt size (cl100k) of ``messages``."""
    return sum(count_tokens(m.get("content") or "") + PER_MESSAGE_TOKENS for m in messages)


def trim_middle(text: str, keep_tokens: int, window: Optional[int] = None) -> str:
    """``text`` cut to about ``keep_tokens`` tokens: its start and its end, with the marker between."""
    tokens = encode(text)
    if len(tokens) <= keep_tokens:
        return text
    size = f"{window:,}-token" if window else "token"
    keep = max(0, keep_tokens - count_tokens(MARKER.format(n=len(tokens), window=size)))
    tail = int(keep * TAIL_SHARE)
    head = keep - tail
    left_out = len(tokens) - head - tail
    end = decode(tokens[len(tokens) - tail:]) if tail else ""
    return decode(tokens[:head]) + MARKER.format(n=left_out, window=size) + end


def share_room(texts: Sequence[str], room: int) -> list[str]:
    """``texts`` trimmed (``trim_middle``) so that together they use at most ``room`` tokens, each
    getting an equal share and a short one's unused share going to the others (order-independent)."""
    sizes = [count_tokens(t) for t in texts]
    if sum(sizes) <= room:
        return list(texts)
    limits = [0] * len(texts)
    # a few tokens per text kept free: a cut text joined to its neighbours can tokenise a little longer
    left, open_ = max(0, room - 4 * len(texts)), sorted(range(len(texts)), key=lambda i: sizes[i])
    while open_:
        share = left // len(open_)
        i = open_.pop(0)
        limits[i] = min(sizes[i], share)
        left -= limits[i]
    return [trim_middle(t, limit) for t, limit in zip(texts, limits)]


def fit_messages(messages: Sequence[Message], window: Optional[int], max_tokens: int
                 ) -> tuple[list[Message], int]:
    """(messages, max_tokens) fitting ``window`` (unchanged when the window is unknown or they fit)."""
    fitted = [dict(m) for m in messages]
    if not window:
        return fitted, max_tokens
    room = window - margin(window)
    prompt = messages_tokens(fitted)
    if prompt + max_tokens <= room:
        return fitted, max_tokens
    floor = min(max_tokens, max(MIN_REPLY_TOKENS, room // 4))  # the reply keeps up to a quarter of the room
    reply = max(floor, min(max_tokens, room - prompt))
    over = prompt + reply - room
    if over <= 0:
        return fitted, reply
    longest = max(range(len(fitted)), key=lambda i: len(fitted[i].get("content") or ""))
    content = fitted[longest].get("content") or ""
    size = count_tokens(content)
    fitted[longest]["content"] = trim_middle(content, max(0, size - over), window)
    log.info("prompt of %d tokens trimmed by about %d to fit a %d-token context", prompt, over, window)
    return fitted, reply


def prompt_room(window: Optional[int], max_tokens: int) -> Optional[int]:
    """Tokens a prompt may use next to a ``max_tokens`` reply in ``window`` (None: unknown)."""
    if not window:
        return None
    return max(0, window - margin(window) - max_tokens)
