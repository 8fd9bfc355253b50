"""Chat models behind one small protocol (``core.llm.protocol``) and the OpenAI-compatible implementation.

``OpenAIChat`` talks to any OpenAI-compatible server (OpenAI, Ollama, vLLM, LM Studio, llama.cpp) through
the official ``openai`` client, with RAGScope's one retry policy (``core.retry``: backoff with jitter,
``Retry-After`` honoured, at most one retry after a timeout, Cancel within a second). 401/403/404 and
"model not found" fail at once naming the setting to fix; a server's error text is never repeated.

The base URL is checked against the operator's allowlist and the key sent is the one
``core.providers.key_for`` decides (an operator key only to an allowed URL), before anything is sent.
The key goes to the ``openai`` client only: never logged or written, and scrubbed from messages.

Replies are read as streams, so the timeout is on inactivity, not on the total time of a long answer; a
call whose stream had produced text is never retried (a server that cuts streams short, as
llama-cpp-python does when another request arrives, is asked without streaming from then on). Prompts
are fitted to the model's context window first (``core.llm.budget``).
"""
from __future__ import annotations

import json
import logging
import threading
from typing import Any, Callable, Iterator, Optional, Sequence

import openai

try:  # the HTTP library the openai SDK uses (httpx2 in openai 3.x, httpx before): its timeouts and errors
    import httpx2 as httpx
except ImportError:  # pragma: no cover - an older openai SDK
    import httpx  # type: ignore[no-redef]
from openai.types.chat import ChatCompletion

from core import providers
from core.errors import LLMError, retry_after
from core.llm import budget
from core.llm.protocol import ChatModel, ChatStream, Completion, Message  # noqa: F401 - re-exported
from core.retry import RetriesExhausted, RetryCancelled, Retryable, RetryPolicy, call_with_retries
from core.types import Cancelled

log = logging.getLogger("core.llm")

STAGES = ("extraction", "gleaning", "summaries", "keywords", "answer")
NO_KEY = "no-key-needed"  # local servers ignore the key; the client insists on one


class LLMConfigError(LLMError):
    """Retrying cannot help: a setting (URL, model, key) must be fixed."""


class LLMUnavailableError(LLMError):
    """The server kept failing until the retries were used up."""


class LLMCancelled(LLMError, Cancelled):
    """The work was cancelled (the app's Cancel button, Ctrl-C in the CLI) before it finished."""


class ContextExceeded(LLMError):
    """The server refused the prompt as longer than its context window (``window``: the size it named)."""

    def __init__(self, message: str, named: tuple[Optional[int], Optional[int]]) -> None:
        super().__init__(message)
        self.window, self.requested = named


def _estimate_tokens(text: str) -> int:
    from core.tokens import count_tokens

    return count_tokens(text)


messages_tokens = budget.messages_tokens  # rough prompt size (cl100k) when a server reports no usage
_WINDOWS: dict[tuple[str, str], Optional[int]] = {}  # (base URL, model) -> discovered window (None: none)
_LEARNED: dict[tuple[str, str], int] = {}  # (base URL, model) -> window a refusal named
_NO_STREAM: set[tuple[str, str]] = set()  # servers that cut streams short: asked without streaming
_WINDOWS_LOCK = threading.Lock()


class OpenAIChat:
    """A ``ChatModel`` over the official ``openai`` client, with bounded retries and cancellation."""

    def __init__(self, base_url: str, model: str, api_key: Optional[str] = None, *, temperature: float = 0.0,
                 max_tokens: int = 1024, timeout_s: float = 120.0, max_retries: int = 4, backoff_base: float = 0.5,
                 backoff_max: float = 20.0, cancel_event: Optional[threading.Event] = None,
                 context_tokens: int = 0) -> None:
        if not model:
            raise LLMConfigError("no LLM model is configured — set Settings → LLM model (or --llm-model)")
        key = providers.key_for(base_url, "llm", api_key)  # raises for a URL the operator did not allow
        self.base_url = providers.normalised_url(base_url, "llm")
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.context_tokens = int(context_tokens or 0)
        self.cancel_event = cancel_event or threading.Event()
        self.attempts = 0  # HTTP attempts made (for tests and diagnostics)
        self.retries = 0
        self._count_lock = threading.Lock()
        self._key_hint = providers.withheld_key_hint(base_url, "llm", api_key)
        self._client = openai.OpenAI(api_key=key or NO_KEY, base_url=self.base_url, max_retries=0,
                                     timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)))

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIChat(base_url={self.base_url!r}, model={self.model!r})"

    # --- public API -----------------------------------------------------------------------
    def cancel(self) -> None:
        """Ask running and future calls to stop (checked between attempts and while streaming)."""
        self.cancel_event.set()

    def cache_params(self, json_mode: bool = False, max_tokens: Optional[int] = None) -> dict[str, Any]:
        """The request parameters that change an answer (part of the cache key), the server included."""
        return {"base_url": self.base_url, "model": self.model, "temperature": self.temperature,
                "max_tokens": int(max_tokens or self.max_tokens), "json_mode": bool(json_mode)}

    def context_window(self) -> Optional[int]:
        """The model's context in (cl100k) tokens: the setting, else what the server reports; lowered by
        what a refusal taught (``budget.learned_window``); None when nothing is known."""
        where = (self.base_url, self.model)
        with _WINDOWS_LOCK:
            known = where in _WINDOWS
            reported, learned = _WINDOWS.get(where), _LEARNED.get(where)
        if self.context_tokens:
            return min(self.context_tokens, learned or self.context_tokens)
        if not known:
            with httpx.Client(timeout=5.0, follow_redirects=False) as http:
                reported = budget.discover_context(http, self.base_url, self.model, self._auth_header())
            with _WINDOWS_LOCK:
                _WINDOWS[where] = reported
        found = [w for w in (reported, learned) if w]
        return min(found) if found else None

    def fit(self, messages: Sequence[Message], max_tokens: Optional[int] = None) -> tuple[list[Message], int]:
        """(messages, max_tokens) as they will be sent: fitted to the context window."""
        return budget.fit_messages(messages, self.context_window(), int(max_tokens or self.max_tokens))

    def prompt_room(self, max_tokens: Optional[int] = None) -> Optional[int]:
        """Prompt tokens that fit next to a reply of ``max_tokens`` (None: the window is unknown)."""
        return budget.prompt_room(self.context_window(), int(max_tokens or self.max_tokens))

    def complete(self, messages: Sequence[Message], *, stage: str, json_mode: bool = False,
                 max_tokens: Optional[int] = None) -> Completion:
        """One chat completion (read as a stream), retried on transient failures, fitted to the window."""
        for refit in (False, True):
            fitted, limit = self.fit(messages, max_tokens)
            kwargs = self._request(fitted, json_mode, limit) | {"stream": True,
                                                                 "stream_options": {"include_usage": True}}
            try:
                return self._with_retries(lambda: self._read_completion(kwargs, fitted), stage)
            except ContextExceeded as exc:
                if refit or not self._learn_window(budget.learned_window(exc.window, exc.requested,
                                                                         messages_tokens(fitted) + limit)):
                    raise
        raise AssertionError("unreachable")

    def stream(self, messages: Sequence[Message], *, stage: str, max_tokens: Optional[int] = None) -> ChatStream:
        """Stream a completion's text; retries happen only before the first piece arrives."""
        fitted, limit = self.fit(messages, max_tokens)
        kwargs = self._request(fitted, False, limit) | {"stream": True, "stream_options": {"include_usage": True}}
        usage: dict[str, int] = {}

        def open_stream() -> Iterator[Any]:
            events = iter(self._client.chat.completions.create(**kwargs))
            first = self._next_event(events, produced=0)  # connection and HTTP errors surface inside the retries
            return _chain(first, events)

        events = self._with_retries(open_stream, stage)

        def pieces() -> Iterator[str]:
            produced = 0
            while True:
                event = self._next_event(events, produced)
                if event is None:
                    return
                if self.cancel_event.is_set():
                    raise LLMCancelled("cancelled while streaming the answer")
                _read_usage(event, usage)
                for text, _finish in _deltas(event):
                    if text:
                        produced += 1
                        yield text

        def finish(text: str) -> Completion:
            return Completion(text, usage.get("prompt") or messages_tokens(fitted),
                              usage.get("completion") or _estimate_tokens(text), False, "stop")

        return ChatStream(pieces(), finish)

    def list_models(self) -> list[str]:
        """Model ids the server advertises (one attempt, errors translated)."""
        try:
            return [m.id for m in self._client.models.list()]
        except openai.OpenAIError as exc:
            translated = self._translate(exc)
            if isinstance(translated, Retryable):
                raise LLMUnavailableError(translated.reason) from exc
            raise translated from exc

    # --- internals ------------------------------------------------------------------------
    def _request(self, messages: Sequence[Message], json_mode: bool, max_tokens: Optional[int]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages],
                                  "temperature": self.temperature, "max_tokens": int(max_tokens or self.max_tokens)}
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        return kwargs

    def _auth_header(self) -> dict[str, str]:
        key = getattr(self._client, "api_key", "") or ""
        return {"Authorization": f"Bearer {key}"} if key and key != NO_KEY else {}

    def _learn_window(self, guess: int) -> bool:
        """Remember the window a refusal taught (``budget.learned_window``); True when it is smaller than
        the one the refused prompt was fitted to, so that fitting again can help."""
        current = self.context_window()
        if current is not None and guess >= current:
            return False
        with _WINDOWS_LOCK:
            _LEARNED[(self.base_url, self.model)] = guess
        return True

    def _read_completion(self, kwargs: dict[str, Any], fitted: Sequence[Message]) -> Completion:
        """One attempt: send the request, read the reply's stream (or a plain JSON reply) to its end."""
        with _WINDOWS_LOCK:
            plain = (self.base_url, self.model) in _NO_STREAM
        if plain:
            return self._unstreamed(kwargs, fitted)
        raw = self._client.chat.completions.with_raw_response.create(**kwargs)
        http = raw.http_response
        if "json" in (http.headers.get("content-type") or "").lower():  # the server answered without streaming
            try:
                body = http.read()
            except httpx.TimeoutException as exc:
                raise Retryable(f"no data for {self.timeout_s:g}s (Settings → LLM timeout)", timeout=True) from exc
            except httpx.TransportError as exc:
                raise Retryable(f"the response from {self.base_url} broke off ({type(exc).__name__})") from exc
            return self._plain_completion(body, fitted)
        events = iter(raw.parse())
        try:
            first = self._next_event(events, produced=0)
        except Retryable as exc:
            if exc.timeout:
                raise
            first = None
        if first is None:  # a stream that ended or broke before any event: llama-cpp-python's way of failing
            http.close()  # (a prompt too long, say), so ask once without streaming, which reports the error
            return self._unstreamed(kwargs, fitted)
        events = _chain(first, events)
        parts: list[str] = []
        finish: str = ""
        usage: dict[str, int] = {}
        while True:
            event = self._next_event(events, produced=len(parts))
            if event is None:
                break  # (a cancel lets a call in flight finish: its reply is cached for the resume)
            _read_usage(event, usage)
            for text, reason in _deltas(event):
                parts.append(text) if text else None
                finish = reason or finish
        if not finish:  # ended without a finish reason: cut short by the server (llama-cpp-python interrupts a
            http.close()  # stream when another request arrives): from now on this server is asked without
            with _WINDOWS_LOCK:  # streaming, which it does not interrupt
                _NO_STREAM.add((self.base_url, self.model))
            return self._unstreamed(kwargs, fitted)
        text = "".join(parts)
        return Completion(text, usage.get("prompt") or messages_tokens(fitted),
                          usage.get("completion") or _estimate_tokens(text), False, finish)

    def _unstreamed(self, kwargs: dict[str, Any], fitted: Sequence[Message]) -> Completion:
        plain = {k: v for k, v in kwargs.items() if k not in ("stream", "stream_options")}
        try:
            raw = self._client.chat.completions.with_raw_response.create(**plain)
        except openai.APIConnectionError:  # the broken stream's pooled connection: a new one is opened
            raw = self._client.chat.completions.with_raw_response.create(**plain)
        return self._plain_completion(raw.http_response.read(), fitted)

    def _plain_completion(self, body: bytes, fitted: Sequence[Message]) -> Completion:
        response = ChatCompletion.model_validate_json(body)  # ValueError on a malformed body: retried
        try:
            choice = response.choices[0]
            text, finish = choice.message.content or "", choice.finish_reason or ""
        except (AttributeError, IndexError, TypeError) as exc:
            raise Retryable(f"the server sent a response without a choice ({type(exc).__name__})") from exc
        usage = response.usage
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0) or messages_tokens(fitted)
        completion = int(getattr(usage, "completion_tokens", 0) or 0) or _estimate_tokens(text)
        return Completion(text, prompt, completion, False, str(finish))

    def _next_event(self, events: Iterator[Any], produced: int) -> Any:
        """The next stream event (None at the end). A timeout or a broken connection before any text
        is retryable; after text it ends the call with a message (a half answer is never retried)."""
        try:
            return next(events, None)
        except (httpx.TimeoutException, openai.APITimeoutError) as exc:
            reason = f"no data for {self.timeout_s:g}s (Settings → LLM timeout)"
            if produced:
                raise LLMError(f"the reply from {self.base_url} stopped: {reason} after {produced} piece(s) of "
                               "text; not retried") from exc
            raise Retryable(reason, timeout=True) from exc
        except (httpx.TransportError, openai.APIConnectionError) as exc:
            reason = f"the response from {self.base_url} broke off ({type(exc).__name__})"
            if produced:
                raise LLMError(f"{reason} after {produced} piece(s) of text; not retried") from exc
            raise Retryable(reason) from exc
        except openai.APIError as exc:  # an error event inside the stream
            if produced:
                raise LLMError(f"the reply from {self.base_url} ended with an error after {produced} piece(s) "
                               "of text; not retried") from exc
            raise self._translate(exc) from exc

    def _scrub(self, text: str) -> str:
        key = getattr(self._client, "api_key", "") or ""
        return text.replace(key, "***") if len(key) >= 4 and key != NO_KEY else text

    def _count(self, retry: bool) -> None:
        with self._count_lock:
            if retry:
                self.retries += 1
            else:
                self.attempts += 1

    def _with_retries(self, call: Callable[[], Any], stage: str) -> Any:
        def attempt() -> Any:
            self._count(retry=False)
            try:
                return call()
            except openai.OpenAIError as exc:
                translated = self._translate(exc)
                raise translated from exc
            except (json.JSONDecodeError, ValueError, TypeError) as exc:
                raise Retryable(f"the server sent a malformed response ({type(exc).__name__})") from exc

        policy = RetryPolicy(self.max_retries, self.backoff_base, self.backoff_max)
        try:
            return call_with_retries(attempt, policy, [self.cancel_event], f"LLM {stage} call",
                                     lambda _exc, _s: self._count(retry=True))
        except RetryCancelled as exc:
            raise LLMCancelled(f"LLM work cancelled ({stage})") from exc
        except RetriesExhausted as exc:
            raise LLMUnavailableError(f"LLM {stage} call to {self.base_url} failed after {exc.attempts} "
                                      f"attempt(s): {exc.reason}") from exc

    def _translate(self, exc: Exception) -> Exception:
        """Map an ``openai`` exception to ``Retryable`` or a user-facing ``LLMError``. The server's own
        error text is read to classify, never repeated (it is logged at debug level only)."""
        where = self.base_url
        detail = self._scrub(str(getattr(exc, "message", "") or exc))[:500]
        log.debug("LLM error from %s: %s", where, detail)
        if isinstance(exc, openai.APITimeoutError):
            return Retryable(f"no response within {self.timeout_s:g}s (Settings → LLM timeout)", timeout=True)
        if isinstance(exc, openai.APIConnectionError):
            cause = type(exc.__cause__ or exc).__name__
            if "Protocol" in cause or "Read" in cause or "Decoding" in cause:
                return Retryable(f"the response from {where} broke off ({cause})")
            return Retryable(f"could not reach {where} ({cause})")
        if isinstance(exc, openai.APIResponseValidationError):
            return Retryable("the server sent a response that is not a chat completion")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status == 429 or status >= 500 or status in (408, 409):
                return Retryable(f"HTTP {status} from {where}", retry_after(exc))
            lowered = detail.lower()
            if status in (401, 403):
                return LLMConfigError(f"the server at {where} refused the API key (HTTP {status}) — set "
                                      "OPENAI_API_KEY or enter the key in Settings → LLM API key." + self._key_hint)
            if "context" in lowered and ("length" in lowered or "window" in lowered or "exceed" in lowered):
                return ContextExceeded(f"the server at {where} refused the prompt as longer than the model's "
                                       f"context window (HTTP {status}) — set Settings → LLM context tokens, or lower "
                                       "the chunk size or the context token budgets", budget.learn_from_error(detail))
            if "model" in lowered and ("not found" in lowered or "does not exist" in lowered
                                       or "not exist" in lowered or status == 404):
                return LLMConfigError(f"the server at {where} has no model '{self.model}' — check "
                                      "Settings → LLM model (or --llm-model)")
            if status == 404:
                return LLMConfigError(f"{where} has no chat-completions endpoint (HTTP 404) — check Settings → "
                                      "LLM base URL (OpenAI-compatible servers usually end in /v1)")
            return LLMError(f"the server at {where} rejected the request (HTTP {status})")
        return LLMError(f"LLM call to {where} failed ({type(exc).__name__})")


def _read_usage(event: Any, usage: dict[str, int]) -> None:
    got = getattr(event, "usage", None)
    if got is not None:
        usage["prompt"] = int(getattr(got, "prompt_tokens", 0) or 0)
        usage["completion"] = int(getattr(got, "completion_tokens", 0) or 0)


def _deltas(event: Any) -> Iterator[tuple[str, str]]:
    """(text, finish reason) of each choice of a stream event."""
    for choice in getattr(event, "choices", None) or []:
        delta = getattr(choice, "delta", None)
        text = (getattr(delta, "content", None) if delta is not None else None) or ""
        yield text, str(getattr(choice, "finish_reason", "") or "")

def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    if first is not None:
        yield first
    yield from rest
