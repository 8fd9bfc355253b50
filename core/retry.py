"""The one HTTP retry policy of RAGScope's provider clients (the LLM and the embeddings server).

``call_with_retries(attempt, policy, cancel, describe)`` runs ``attempt()`` under ``tenacity``:

* an attempt that raises ``Retryable`` is retried, at most ``policy.max_retries`` times, after an
  exponential backoff with jitter (``backoff_base · 2^n · U(0.5, 1)``, capped at ``backoff_max``),
  never shorter than the server's ``Retry-After`` (also capped);
* a ``Retryable`` marked ``timeout`` is retried at most once (``policy.max_timeout_retries``): a
  server too slow for the timeout is as slow the second time;
* the wait is a ``threading.Event`` wait sliced into short steps, so a cancellation (any of the
  ``cancel`` events) ends it within ``CANCEL_POLL_S`` and raises ``RetryCancelled`` — no plain sleep;
* any other exception propagates at once; when the retries are used up, ``RetriesExhausted`` carries
  the last reason and the number of attempts.
"""
from __future__ import annotations

import logging
import random
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, TypeVar

import tenacity

from core.types import Cancelled

T = TypeVar("T")
CANCEL_POLL_S = 0.2
log = logging.getLogger("core.retry")


class Retryable(Exception):
    """A transient failure: ``reason`` for the user, the server's ``retry_after`` seconds, ``timeout``."""

    def __init__(self, reason: str, retry_after: float = 0.0, timeout: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.timeout = timeout


class RetriesExhausted(Exception):
    """Every attempt failed transiently; the client turns it into its own user-facing error."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


class RetryCancelled(Cancelled):
    """A cancellation arrived before or between attempts."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry (the clients build it from their settings)."""

    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    max_timeout_retries: int = 1

    def delay(self, retry_number: int, retry_after: float = 0.0) -> float:
        """Seconds to wait before retry ``retry_number`` (1-based)."""
        backoff = min(self.backoff_max, self.backoff_base * (2 ** (retry_number - 1))) * random.uniform(0.5, 1.0)
        return max(backoff, min(max(retry_after, 0.0), self.backoff_max))


def _cancelled(events: Iterable[Optional[threading.Event]]) -> bool:
    return any(e is not None and e.is_set() for e in events)


def wait_or_cancel(seconds: float, events: Iterable[Optional[threading.Event]]) -> bool:
    """Wait ``seconds`` unless one of ``events`` is set first; True when cancelled."""
    watched = [e for e in events if e is not None]
    if not watched:
        watched = [threading.Event()]
    deadline = seconds
    while deadline > 0:
        if _cancelled(watched):
            return True
        step = min(CANCEL_POLL_S, deadline)
        if watched[0].wait(step):
            return True
        deadline -= step
    return _cancelled(watched)


def call_with_retries(attempt: Callable[[], T], policy: RetryPolicy,
                      cancel: Iterable[Optional[threading.Event]] = (), describe: str = "request",
                      on_retry: Optional[Callable[[Retryable, float], None]] = None) -> T:
    """``attempt()`` retried on ``Retryable`` as the module docstring says."""
    events = [e for e in cancel if e is not None]
    timeouts = {"seen": 0}

    def wait(state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        after = exc.retry_after if isinstance(exc, Retryable) else 0.0
        return policy.delay(state.attempt_number, after)

    def stop(state: tenacity.RetryCallState) -> bool:
        return timeouts["seen"] > policy.max_timeout_retries or state.attempt_number > policy.max_retries

    def sleep(seconds: float) -> None:
        if wait_or_cancel(seconds, events):
            raise RetryCancelled(f"{describe} cancelled while waiting to retry")

    def before_sleep(state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        seconds = state.next_action.sleep if state.next_action else 0.0
        if isinstance(exc, Retryable):
            log.warning("%s failed (%s); retry %d/%d in %.2fs", describe, exc.reason, state.attempt_number,
                        policy.max_retries, seconds)
            if on_retry is not None:
                on_retry(exc, seconds)

    def guarded() -> T:
        if _cancelled(events):
            raise RetryCancelled(f"{describe} cancelled")
        try:
            return attempt()
        except Retryable as exc:
            timeouts["seen"] += 1 if exc.timeout else 0
            raise

    retrying = tenacity.Retrying(retry=tenacity.retry_if_exception_type(Retryable), stop=stop, wait=wait,
                                 sleep=sleep, before_sleep=before_sleep, reraise=False)
    try:
        return retrying(guarded)
    except tenacity.RetryError as exc:
        last: Any = exc.last_attempt.exception()
        reason = last.reason if isinstance(last, Retryable) else str(last)
        raise RetriesExhausted(reason, exc.last_attempt.attempt_number) from last
