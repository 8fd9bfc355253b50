"""Embeddings from an OpenAI-compatible ``/embeddings`` endpoint (Infinity, Text Embeddings Inference,
vLLM, Ollama, OpenAI), for moving the embedding work off the indexing machine.

``RemoteEmbedder`` is an ``Embedder`` (``embed(texts)`` → unit vectors) that also offers
``submit(texts)``: the texts are cut into requests of ``batch_size`` and up to ``concurrency``
requests are in flight at once on a small thread pool, so the caller (the indexing pipeline) can go on
extracting the next batch while the server embeds. Requests go through the official ``openai`` client
with RAGScope's one retry policy (``core.retry``, shared with the chat model): backoff with jitter on
timeouts, connection errors, 429 and 5xx, ``Retry-After`` honoured, and waits that ``cancel()`` (or a
caller's cancel event) ends within a second. The base URL is checked against the operator's allowlist
and the key is the one ``core.providers.key_for`` decides before anything is sent; ``for_key(key)``
gives a view of the same embedder that sends another caller's own key (one browser session's key is
never used for another's). A server's error text is never repeated in a message. Errors name the URL:

* ``EmbeddingUnavailableError`` — the server kept failing (down, overloaded) until the retries were used
  up. It is a ``core.types.ServiceUnavailable``: indexing stops and the batch's documents stay pending.
* ``EmbeddingConfigError`` — retrying cannot help: wrong URL (404), refused key, unknown model, or
  vectors of the wrong dimension. Also a resumable stop: every document would fail the same way.
* ``EmbeddingRequestError`` — the server rejected one request (HTTP 400/422): a document failure.

``stats`` counts requests, texts, bytes sent and received, time spent waiting for results and the
(start, end) of every request, from which the benchmark derives requests in flight over time.
The API key goes to the ``openai`` client only: never logged or written.
"""
from __future__ import annotations

import copy
import hashlib
import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np
import openai

from core import providers
from core.embeddings import _normalise, chunk_pieces, embed_chunk_windows, split_windows
from core.errors import EmbeddingServerError, retry_after
from core.retry import RetriesExhausted, RetryCancelled, Retryable, RetryPolicy, call_with_retries
from core.types import Cancelled, ServiceUnavailable

log = logging.getLogger("core.embeddings")
NO_KEY = "no-key-needed"  # local servers ignore the key; the client insists on one


class EmbeddingRequestError(EmbeddingServerError):
    """The server rejected one request (HTTP 400/422): the texts of that request are the problem."""


class EmbeddingConfigError(EmbeddingServerError, ServiceUnavailable):
    """Retrying cannot help: the URL, model, key or dimension must be fixed."""


class EmbeddingUnavailableError(EmbeddingServerError, ServiceUnavailable):
    """The server kept failing (down, overloaded) until the retries were used up."""


@dataclass
class EmbeddingStats:
    """Client-side cost of the remote embedder (thread-safe counters)."""

    requests: int = 0
    retries: int = 0
    texts: int = 0
    request_bytes: int = 0
    response_bytes: int = 0
    wait_s: float = 0.0  # time callers spent blocked waiting for vectors
    spans: list[tuple[float, float]] = field(default_factory=list)  # (start, end) of each attempt, perf_counter
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, started: float, ended: float, texts: int, sent: int, received: int) -> None:
        with self._lock:
            self.requests += 1
            self.texts += texts
            self.request_bytes += sent
            self.response_bytes += received
            self.spans.append((started, ended))

    def add(self, name: str, value: float) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + value)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"requests": self.requests, "retries": self.retries, "texts": self.texts,
                    "request_bytes": self.request_bytes, "response_bytes": self.response_bytes,
                    "wait_s": round(self.wait_s, 3),
                    "request_s": round(sum(b - a for a, b in self.spans), 3)}


class PendingVectors:
    """Vectors being embedded: ``result()`` blocks until every request has answered."""

    def __init__(self, futures: list[Future], dim: int, stats: EmbeddingStats,
                 finish: Callable[[np.ndarray], np.ndarray] = lambda v: v,
                 stop: Optional[threading.Event] = None) -> None:
        self._futures = futures
        self._stop = stop
        self._dim = dim
        self._stats = stats
        self._finish = finish

    def result(self) -> np.ndarray:
        started = time.perf_counter()
        try:
            parts = [f.result() for f in self._futures]
        except BaseException:
            self.cancel()  # requests not yet sent are dropped: the caller stops here
            raise
        finally:
            self._stats.add("wait_s", time.perf_counter() - started)
        vectors = np.concatenate(parts) if parts else np.zeros((0, self._dim), dtype=np.float32)
        return self._finish(vectors)

    def cancel(self) -> None:
        """Drop the requests not yet sent and wake the ones waiting to be retried (they stop)."""
        if self._stop is not None:
            self._stop.set()
        for f in self._futures:
            f.cancel()


class EmbeddingCancelled(EmbeddingServerError, Cancelled):
    """The embedder was cancelled (or closed) while a request waited to be retried."""


class RemoteEmbedder:
    """An ``Embedder`` over an OpenAI-compatible embeddings endpoint, several requests in flight."""

    remote = True  # the pipeline overlaps extraction with embedding for remote embedders

    def __init__(self, base_url: str, model: str, api_key: Optional[str] = None, *, batch_size: int = 32,
                 concurrency: int = 4, timeout_s: float = 60.0, max_retries: int = 4, backoff_base: float = 0.5,
                 backoff_max: float = 20.0, expected_dim: Optional[int] = None) -> None:
        if not model:
            raise EmbeddingConfigError("no embedding model is named: pass --embedding-model, set "
                                       "RAGSCOPE_EMBEDDING_MODEL or Settings → embedding model")
        key = providers.key_for(base_url, "embeddings", api_key)  # raises for a URL the operator did not allow
        self.base_url = providers.normalised_url(base_url, "embeddings")
        self.model = model
        self.name = f"openai:{model}"
        self.batch_size = max(1, int(batch_size))
        self.concurrency = max(1, int(concurrency))
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.stats = EmbeddingStats()
        self.served_model = ""
        self.cancel_event = threading.Event()
        self._views: dict[str, "RemoteEmbedder"] = {}
        self._views_lock = threading.Lock()
        self._key_hint = providers.withheld_key_hint(base_url, "embeddings", api_key)
        self._client = openai.OpenAI(api_key=key or NO_KEY, base_url=self.base_url, timeout=timeout_s, max_retries=0)
        self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="ragscope-embed")
        self.dim = 0
        probe = self._request(["dimension probe"])
        self.dim = int(probe.shape[1])
        if expected_dim and self.dim != int(expected_dim):
            raise EmbeddingConfigError(
                f"the embeddings server at {self.where} returns {self.dim}-d vectors for model '{model}', but "
                f"{expected_dim}-d vectors were expected; serve the model the workspace was built with, or "
                f"re-embed the workspace (python -m core repair --reembed ...)")

    def __repr__(self) -> str:  # never shows the key
        return f"RemoteEmbedder(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def where(self) -> str:
        return self.base_url

    def for_key(self, api_key: Optional[str]) -> "RemoteEmbedder":
        """This embedder (same server, pool, dimension and stats) sending the key ``key_for`` decides for
        ``api_key`` — a caller's own key, or the operator's for an allowed URL. Views are kept per key
        hash, so each caller's requests carry that caller's key only."""
        key = providers.key_for(self.base_url, "embeddings", api_key) or NO_KEY
        if key == self._client.api_key:
            return self
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
        with self._views_lock:
            view = self._views.get(digest)
            if view is None:
                view = copy.copy(self)
                view._client = self._client.with_options(api_key=key)
                view._views = {}
                view._key_hint = providers.withheld_key_hint(self.base_url, "embeddings", api_key)
                self._views[digest] = view
        return view

    def cancel(self) -> None:
        """Stop waiting to retry: requests still waiting raise ``EmbeddingCancelled``."""
        self.cancel_event.set()

    # --- the Embedder protocol ----------------------------------------------------------------
    def embed(self, texts: Sequence[str], cancel: Optional[threading.Event] = None) -> np.ndarray:
        """Embed texts to an (n, dim) array of unit vectors (requests run concurrently)."""
        return self.submit(texts, cancel=cancel).result()

    def submit(self, texts: Sequence[str], finish: Callable[[np.ndarray], np.ndarray] = lambda v: v,
               cancel: Optional[threading.Event] = None) -> PendingVectors:
        """Start embedding ``texts`` (one request per ``batch_size`` texts) and return at once; setting
        ``cancel`` (or calling ``cancel()``) ends waits between retries."""
        cleaned = [t if t and t.strip() else " " for t in texts]
        stop = threading.Event()
        futures = [self._pool.submit(self._request, cleaned[i: i + self.batch_size], cancel, stop)
                   for i in range(0, len(cleaned), self.batch_size)]
        return PendingVectors(futures, self.dim, self.stats, finish, stop)

    def close(self) -> None:
        self.cancel_event.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._client.close()

    # --- one request, retried ---------------------------------------------------------------------
    def _request(self, batch: list[str], cancel: Optional[threading.Event] = None,
                 stop: Optional[threading.Event] = None) -> np.ndarray:
        def attempt() -> np.ndarray:
            started = time.perf_counter()
            try:
                return self._attempt(batch, started)
            except openai.OpenAIError as exc:
                failure: Exception = self._translate(exc)
            except (ValueError, TypeError) as exc:  # a body that is not an embeddings response
                failure = Retryable(f"the server sent a malformed response ({type(exc).__name__})")
            if isinstance(failure, Retryable):
                self.stats.record(started, time.perf_counter(), 0, 0, 0)
            raise failure

        policy = RetryPolicy(self.max_retries, self.backoff_base, self.backoff_max)
        try:
            return call_with_retries(attempt, policy, [self.cancel_event, cancel, stop],
                                     f"embeddings request to {self.where}",
                                     lambda _exc, _s: self.stats.add("retries", 1))
        except RetryCancelled as exc:
            raise EmbeddingCancelled(f"embeddings requests to {self.where} were cancelled") from exc
        except RetriesExhausted as exc:
            raise EmbeddingUnavailableError(
                f"the embeddings server at {self.where} failed {exc.attempts} time(s) in a row: {exc.reason}. Start "
                f"it (or fix --embedding-base-url / RAGSCOPE_EMBEDDING_BASE_URL / Settings → embedding base URL) and "
                f"run the command again: documents not yet indexed stay pending") from exc

    def _attempt(self, batch: list[str], started: float) -> np.ndarray:
        raw = self._client.embeddings.with_raw_response.create(model=self.model, input=batch)
        response = raw.parse()
        http = raw.http_response
        items = sorted(response.data or [], key=lambda d: d.index)
        if len(items) != len(batch):
            raise Retryable(f"the server sent {len(items)} vectors for {len(batch)} texts")
        vectors = np.asarray([item.embedding for item in items], dtype=np.float32)
        if vectors.ndim != 2 or not np.isfinite(vectors).all():
            raise Retryable("the server sent vectors that are not finite numbers")
        if self.dim and vectors.shape[1] != self.dim:
            raise EmbeddingConfigError(
                f"the embeddings server at {self.where} switched from {self.dim}-d to {vectors.shape[1]}-d vectors "
                f"for model '{self.model}' (was another model loaded?); indexing stopped, nothing was mixed")
        if not self.served_model:
            self.served_model = str(getattr(response, "model", "") or "")
            if self.served_model and self.served_model != self.model:
                log.warning("the embeddings server at %s answered model '%s' for '%s'", self.where,
                            self.served_model, self.model)
        self.stats.record(started, time.perf_counter(), len(batch), len(http.request.content or b""),
                          len(http.content or b""))
        return _normalise(vectors)

    def _translate(self, exc: Exception) -> Exception:
        """Map an ``openai`` exception to a retryable marker or a user-facing error naming the URL."""
        where = self.where
        message = str(getattr(exc, "message", "") or exc)[:500]
        log.debug("embeddings error from %s: %s", where, message)  # classified, never repeated to the user
        if isinstance(exc, openai.APITimeoutError):
            return Retryable(f"no response within {self.timeout_s:g}s", timeout=True)
        if isinstance(exc, openai.APIConnectionError):
            return Retryable(f"could not reach {where} ({type(exc.__cause__ or exc).__name__})")
        if isinstance(exc, openai.APIResponseValidationError):
            return Retryable("the server sent a response that is not an embeddings list")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status == 429 or status >= 500 or status in (408, 409):
                return Retryable(f"HTTP {status} from {where}", retry_after(exc))
            lowered = message.lower()
            if status in (401, 403):
                return EmbeddingConfigError(f"the embeddings server at {where} refused the API key (HTTP {status}) "
                                            "— set OPENAI_API_KEY or RAGSCOPE_EMBEDDING_API_KEY." + self._key_hint)
            if "model" in lowered and ("not found" in lowered or "does not exist" in lowered or status == 404):
                return EmbeddingConfigError(f"the embeddings server at {where} has no model '{self.model}' — check "
                                            "--embedding-model / RAGSCOPE_EMBEDDING_MODEL / Settings → embedding model")
            if status == 404:
                return EmbeddingConfigError(
                    f"{where} has no /embeddings endpoint (HTTP 404) — check the embedding base URL (Infinity "
                    "serves at the root, e.g. http://HOST:7997; OpenAI, vLLM and Ollama end in /v1)")
            return EmbeddingRequestError(f"the embeddings server at {where} rejected a request (HTTP {status})")
        return EmbeddingServerError(f"embeddings request to {where} failed ({type(exc).__name__})")


def remote_embedder(settings: Any, api_key: Optional[str] = None, expected_dim: Optional[int] = None
                    ) -> RemoteEmbedder:
    """The embeddings server of ``settings`` (``embedding_base_url``, ``embedding_model``, batch size,
    concurrency, timeout, retries); ``expected_dim`` = the dimension the workspace already holds."""
    from core.config import check_embedding_server

    check_embedding_server(settings)
    return RemoteEmbedder(settings.embedding_base_url, settings.embedding_model, api_key,
                          batch_size=settings.embedding_batch_size, concurrency=settings.embedding_concurrency,
                          timeout_s=settings.embedding_timeout_s, max_retries=settings.embedding_max_retries,
                          expected_dim=expected_dim)


class _Deferred:
    """``PendingVectors``' interface for a local embedder: the work happens in ``result()``."""

    def __init__(self, compute: Callable[[], Any]) -> None:
        self._compute = compute

    def result(self) -> Any:
        return self._compute()

    def cancel(self) -> None:
        """Nothing was started."""


def submit_chunk_texts(embedder: Any, texts: Sequence[str], windows: bool = True,
                       cancel: Optional[threading.Event] = None) -> "PendingVectors | _Deferred":
    """Start embedding chunk texts (window by window, as ``core.embeddings.embed_chunk_windows``); the
    returned object's ``result()`` gives each chunk's window vectors. A remote embedder sends the
    requests now; a local one embeds when ``result()`` is called, at the same point as before."""
    submit = getattr(embedder, "submit", None)
    if submit is None or not texts:
        return _Deferred(lambda: embed_chunk_windows(embedder, texts, windows))
    pieces = chunk_pieces(texts, windows)
    return submit([w for ws in pieces for w in ws], lambda vectors: split_windows(pieces, vectors),
                  **({"cancel": cancel} if cancel is not None else {}))


def test_embedding_server(settings: Any, api_key: Optional[str] = None) -> tuple[bool, str]:
    """Check that the configured embeddings server answers: (ok, message for the user)."""
    try:
        started = time.perf_counter()
        probe = remote_embedder(settings.with_overrides({"embedding_max_retries": 0}), api_key)
    except (EmbeddingServerError, ValueError) as exc:  # ValueError: also a URL the operator did not allow
        return False, str(exc)
    seconds = time.perf_counter() - started
    probe.close()
    served = f" (served as '{probe.served_model}')" if probe.served_model and probe.served_model != probe.model else ""
    return True, (f"connected to {probe.where}: model '{probe.model}'{served} returned {probe.dim}-d vectors "
                  f"in {seconds:.2f}s")
