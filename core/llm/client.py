"""Chat models behind one small protocol, and the OpenAI-compatible implementation.

``ChatModel.complete(messages, *, stage, json_mode=False, max_tokens=None) -> Completion`` is all
the rest of RAGScope needs; ``stream(...)`` is optional (generated answers in the app). Caching and
usage accounting are wrappers (``core.llm.cache``), not flags.

``OpenAIChat`` talks to any OpenAI-compatible server (OpenAI, Ollama, vLLM, LM Studio, llama.cpp)
through the official ``openai`` client with its own bounded retries: exponential backoff with
jitter on timeouts, connection errors, 429 and 5xx, and on malformed bodies. 401/403/404 and
"model not found" fail at once with a message naming the setting to fix. A ``threading.Event``
cancels work between attempts. The API key is handed to the client only: never stored on this
object, logged or written, and scrubbed from error messages.
"""
from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Protocol, Sequence

import openai

from core.errors import LLMError, retry_after
from core.types import Cancelled

log = logging.getLogger("core.llm")

Message = dict[str, str]
STAGES = ("extraction", "gleaning", "summaries", "keywords", "answer")
NO_KEY = "no-key-needed"  # local servers ignore the key; the client insists on one


@dataclass
class Completion:
    """One chat completion: text, token usage, whether it came from the cache, why it stopped."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    finish_reason: str = ""


class ChatModel(Protocol):
    """What RAGScope asks of a chat model."""

    model: str

    def complete(self, messages: Sequence[Message], *, stage: str, json_mode: bool = False,
                 max_tokens: Optional[int] = None) -> Completion:
        ...


class LLMConfigError(LLMError):
    """Retrying cannot help: a setting (URL, model, key) must be fixed."""


class LLMUnavailableError(LLMError):
    """The server kept failing until the retries were used up."""


class LLMCancelled(LLMError, Cancelled):
    """The work was cancelled (the app's Cancel button, Ctrl-C in the CLI) before it finished."""


class ChatStream:
    """An iterator of text pieces; ``completion`` is set once the stream is exhausted."""

    def __init__(self, pieces: Iterator[str], finish: Callable[[str], Completion]) -> None:
        self._pieces = pieces
        self._finish = finish
        self._parts: list[str] = []
        self.completion: Optional[Completion] = None

    def __iter__(self) -> "ChatStream":
        return self

    def __next__(self) -> str:
        try:
            piece = next(self._pieces)
        except StopIteration:
            if self.completion is None:
                self.completion = self._finish("".join(self._parts))
            raise
        self._parts.append(piece)
        return piece


def _estimate_tokens(text: str) -> int:
    from core.tokens import count_tokens

    return count_tokens(text)


def messages_tokens(messages: Sequence[Message]) -> int:
    """Rough prompt size (cl100k) when a server reports no usage."""
    return sum(_estimate_tokens(m.get("content") or "") + 4 for m in messages)


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float = 0.0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class OpenAIChat:
    """A ``ChatModel`` over the official ``openai`` client, with bounded retries and cancellation."""

    def __init__(self, base_url: str, model: str, api_key: Optional[str] = None, *, temperature: float = 0.0,
                 max_tokens: int = 1024, timeout_s: float = 120.0, max_retries: int = 4, backoff_base: float = 0.5,
                 backoff_max: float = 20.0, cancel_event: Optional[threading.Event] = None) -> None:
        if not model:
            raise LLMConfigError("no LLM model is configured — set Settings → LLM model (or --llm-model)")
        self.base_url = (base_url or "").rstrip("/")
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.cancel_event = cancel_event or threading.Event()
        self.attempts = 0  # HTTP attempts made (for tests and diagnostics)
        self.retries = 0
        self._count_lock = threading.Lock()
        self._client = openai.OpenAI(api_key=api_key or os.environ.get("OPENAI_API_KEY") or NO_KEY,
                                     base_url=self.base_url or None, timeout=timeout_s, max_retries=0)

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIChat(base_url={self.base_url!r}, model={self.model!r})"

    # --- public API -----------------------------------------------------------------------
    def cancel(self) -> None:
        """Ask running and future calls to stop (checked between attempts)."""
        self.cancel_event.set()

    def cache_params(self, json_mode: bool = False, max_tokens: Optional[int] = None) -> dict[str, Any]:
        """The request parameters that change an answer (part of the cache key)."""
        return {"model": self.model, "temperature": self.temperature,
                "max_tokens": int(max_tokens or self.max_tokens), "json_mode": bool(json_mode)}

    def complete(self, messages: Sequence[Message], *, stage: str, json_mode: bool = False,
                 max_tokens: Optional[int] = None) -> Completion:
        """One chat completion, retried on transient failures."""
        kwargs = self._request(messages, json_mode, max_tokens)

        def call() -> Completion:
            response = self._client.chat.completions.create(**kwargs)
            try:
                choice = response.choices[0]
                text = choice.message.content or ""
                finish = choice.finish_reason or ""
            except (AttributeError, IndexError, TypeError) as exc:
                raise _Retryable(f"the server sent a response without a choice ({type(exc).__name__})") from exc
            usage = getattr(response, "usage", None)
            prompt = int(getattr(usage, "prompt_tokens", 0) or 0) or messages_tokens(messages)
            completion = int(getattr(usage, "completion_tokens", 0) or 0) or _estimate_tokens(text)
            return Completion(text, prompt, completion, False, str(finish))

        return self._with_retries(call, stage)

    def stream(self, messages: Sequence[Message], *, stage: str, max_tokens: Optional[int] = None) -> ChatStream:
        """Stream a completion's text; retries happen only before the first piece arrives."""
        kwargs = self._request(messages, False, max_tokens) | {"stream": True}
        usage: dict[str, int] = {}

        def open_stream() -> Iterator[Any]:
            events = iter(self._client.chat.completions.create(**kwargs))
            first = next(events, None)  # connection and HTTP errors surface here, inside the retries
            return _chain(first, events)

        events = self._with_retries(open_stream, stage)

        def pieces() -> Iterator[str]:
            try:
                for event in events:
                    if self.cancel_event.is_set():
                        raise LLMCancelled("cancelled while streaming the answer")
                    got = getattr(event, "usage", None)
                    if got is not None:
                        usage["prompt"] = int(getattr(got, "prompt_tokens", 0) or 0)
                        usage["completion"] = int(getattr(got, "completion_tokens", 0) or 0)
                    for choice in getattr(event, "choices", None) or []:
                        delta = getattr(choice, "delta", None)
                        text = getattr(delta, "content", None) if delta is not None else None
                        if text:
                            yield text
            except openai.OpenAIError as exc:
                raise LLMError(self._scrub(f"the answer stream from {self._where()} broke off: {exc}")) from exc

        def finish(text: str) -> Completion:
            return Completion(text, usage.get("prompt") or messages_tokens(messages),
                              usage.get("completion") or _estimate_tokens(text), False, "stop")

        return ChatStream(pieces(), finish)

    def list_models(self) -> list[str]:
        """Model ids the server advertises (one attempt, errors translated)."""
        try:
            return [m.id for m in self._client.models.list()]
        except openai.OpenAIError as exc:
            translated = self._translate(exc)
            if isinstance(translated, _Retryable):
                raise LLMUnavailableError(translated.reason) from exc
            raise translated from exc

    # --- internals ------------------------------------------------------------------------
    def _request(self, messages: Sequence[Message], json_mode: bool, max_tokens: Optional[int]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages],
                                  "temperature": self.temperature, "max_tokens": int(max_tokens or self.max_tokens)}
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        return kwargs

    def _where(self) -> str:
        return self.base_url or "the OpenAI API"

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
        last = ""
        for attempt in range(self.max_retries + 1):
            if self.cancel_event.is_set():
                raise LLMCancelled(f"LLM work cancelled ({stage})")
            self._count(retry=False)
            try:
                return call()
            except _Retryable as exc:
                last, retry_after = exc.reason, exc.retry_after
            except openai.OpenAIError as exc:
                translated = self._translate(exc)
                if not isinstance(translated, _Retryable):
                    raise translated from exc
                last, retry_after = translated.reason, translated.retry_after
            except (json.JSONDecodeError, ValueError, TypeError) as exc:
                last, retry_after = self._scrub(f"the server sent a malformed response ({type(exc).__name__})"), 0.0
            if attempt >= self.max_retries:
                break
            delay = min(self.backoff_max, self.backoff_base * (2 ** attempt)) * random.uniform(0.5, 1.0)
            delay = max(delay, min(retry_after, self.backoff_max))
            self._count(retry=True)
            log.warning("LLM %s call failed (%s); retry %d/%d in %.2fs", stage, last, attempt + 1,
                        self.max_retries, delay)
            if self.cancel_event.wait(delay):
                raise LLMCancelled(f"LLM work cancelled ({stage})")
        raise LLMUnavailableError(f"LLM {stage} call to {self._where()} failed after {self.max_retries + 1} "
                                  f"attempt(s): {last}")

    def _translate(self, exc: Exception) -> Exception:
        """Map an ``openai`` exception to a retryable marker or a user-facing ``LLMError``."""
        where = self._where()
        message = self._scrub(str(getattr(exc, "message", "") or exc))[:300]
        if isinstance(exc, openai.APITimeoutError):
            return _Retryable(f"no response within {self.timeout_s:g}s (Settings → LLM timeout)")
        if isinstance(exc, openai.APIConnectionError):
            cause = type(exc.__cause__ or exc).__name__
            if "Protocol" in cause or "Read" in cause or "Decoding" in cause:
                return _Retryable(f"the response from {where} broke off ({cause})")
            return _Retryable(f"could not reach {where} ({cause})")
        if isinstance(exc, openai.APIResponseValidationError):
            return _Retryable("the server sent a response that is not a chat completion")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status == 429 or status >= 500 or status in (408, 409):
                return _Retryable(f"HTTP {status} from {where}", retry_after(exc))
            lowered = message.lower()
            if status in (401, 403):
                return LLMConfigError(f"the server at {where} refused the API key (HTTP {status}) — set "
                                      "OPENAI_API_KEY or enter the key in Settings → LLM API key")
            if "model" in lowered and ("not found" in lowered or "does not exist" in lowered
                                       or "not exist" in lowered or status == 404):
                return LLMConfigError(f"the server at {where} has no model '{self.model}' — check "
                                      "Settings → LLM model (or --llm-model)")
            if status == 404:
                return LLMConfigError(f"{where} has no chat-completions endpoint (HTTP 404) — check Settings → "
                                      "LLM base URL (OpenAI-compatible servers usually end in /v1)")
            if "context" in lowered and ("length" in lowered or "window" in lowered or "exceed" in lowered):
                return LLMError(f"the prompt is longer than the model's context window ({message}) — lower "
                                "Settings → chunk size or the context token budgets")
            return LLMError(f"the server at {where} rejected the request (HTTP {status}): {message}")
        return LLMError(f"LLM call to {where} failed: {message}")


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    if first is not None:
        yield first
    yield from rest
