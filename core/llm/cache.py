"""Wrappers around a ``ChatModel``: a response cache and per-stage usage accounting.

* ``CachedChat(inner, cache)`` — answers from the workspace's LLM cache when the same server (base
  URL), model, messages and parameters were asked before (sha256 key); a hit makes no call. The
  messages keyed are the ones sent: fitted to the context window by the client first. Keys carry the
  prefix ``v2:``; rows of the earlier format (keyed without the base URL, so a reply cannot be traced
  to the server that gave it) are dropped when a workspace's cache is first opened.
* ``UsageCounter(inner, cache)`` — per stage (extraction, gleaning, summaries, keywords, answer):
  calls, cache hits, prompt/completion tokens and wall time, kept in memory and added to the
  stored usage rows.

``cache`` is an ``LLMCacheStore`` (``core.storage.ports``; the SQLite one writes through its own
connection, never the pipeline's, and defers writes while another writer holds the database), or
anything ``core.storage.llm_cache.cache_store`` accepts (a workspace store or connection, None).
The API key is not part of anything stored here.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import defaultdict
from typing import Any, Optional, Sequence

from core.llm.client import ChatStream, Completion, Message
from core.storage.llm_cache import cache_store
from core.storage.records import CachedReply

USAGE_FIELDS = ("calls", "cached", "prompt_tokens", "completion_tokens", "seconds")
KEY_PREFIX = "v2:"  # v1 keys (before the base URL was part of the key) are dropped, not migrated


def cache_key(model: str, messages: Sequence[Message], params: dict[str, Any]) -> str:
    """``v2:`` + sha256 over the model, the full messages and the parameters that change the answer
    (the client's ``cache_params``, which name the server's base URL)."""
    payload = json.dumps({"model": model, "messages": [dict(m) for m in messages], "params": params},
                         sort_keys=True, ensure_ascii=False)
    return KEY_PREFIX + hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _drop_v1_rows(sink: Any) -> None:
    """Delete the rows keyed before the base URL was part of the key (every such key is a bare hex
    digest, which sorts before ``v2:``: an index range, cheap when there is none left)."""
    drop = getattr(sink, "drop_keys_before", None)
    if drop is not None:
        drop(KEY_PREFIX)  # kept pending (written by a later call) while another writer holds the database


class CachedChat:
    """A ``ChatModel`` that answers repeated requests from the workspace's ``llm_cache``."""

    def __init__(self, inner: Any, cache: Any) -> None:
        self.inner = inner
        self.model: str = inner.model
        self._sink = cache_store(cache)
        _drop_v1_rows(self._sink)
        self._memory: dict[str, Completion] = {}
        self.hits = 0
        self.misses = 0

    def __getattr__(self, name: str) -> Any:  # cancel(), cancel_event, base_url, attempts, ...
        return getattr(self.inner, name)

    def key_for(self, messages: Sequence[Message], json_mode: bool = False, max_tokens: Optional[int] = None) -> str:
        """The cache key of a request: the messages as the client will send them (fitted to the context
        window), the reply budget after fitting and the client's parameters (base URL included)."""
        fit = getattr(self.inner, "fit", None)
        if fit is not None:
            fitted, limit = fit(messages, max_tokens)
            messages, max_tokens = fitted, limit
        params_of = getattr(self.inner, "cache_params", None)
        params = params_of(json_mode, max_tokens) if params_of else {"json_mode": json_mode, "max_tokens": max_tokens}
        return cache_key(self.model, messages, params)

    _key = key_for

    def lookup(self, key: str) -> Optional[Completion]:
        if key in self._memory:
            hit = self._memory[key]
            return Completion(hit.text, hit.prompt_tokens, hit.completion_tokens, True, hit.finish_reason)
        row = self._sink.get(key)
        if row is None:
            return None
        return Completion(row.text, row.prompt_tokens, row.completion_tokens, True, "cached")

    def store(self, key: str, completion: Completion) -> None:
        self._memory[key] = completion
        self._sink.put(key, CachedReply(completion.text, completion.prompt_tokens, completion.completion_tokens))

    def complete(self, messages: Sequence[Message], *, stage: str, json_mode: bool = False,
                 max_tokens: Optional[int] = None) -> Completion:
        key = self._key(messages, json_mode, max_tokens)
        hit = self.lookup(key)
        if hit is not None:
            self.hits += 1
            return hit
        self.misses += 1
        completion = self.inner.complete(messages, stage=stage, json_mode=json_mode, max_tokens=max_tokens)
        self.store(key, completion)
        return completion

    def stream(self, messages: Sequence[Message], *, stage: str, max_tokens: Optional[int] = None) -> ChatStream:
        key = self._key(messages, False, max_tokens)
        hit = self.lookup(key)
        if hit is not None:
            self.hits += 1
            return ChatStream(iter([hit.text] if hit.text else []), lambda _text: hit)
        self.misses += 1
        inner = self.inner.stream(messages, stage=stage, max_tokens=max_tokens)

        def pieces():
            yield from inner

        def finish(_text: str) -> Completion:
            completion = inner.completion or Completion(_text)
            self.store(key, completion)
            return completion

        return ChatStream(pieces(), finish)

    def flush(self) -> bool:
        done = self._sink.flush()
        inner_flush = getattr(self.inner, "flush", None)
        return (inner_flush() if inner_flush else True) and done


class UsageCounter:
    """A ``ChatModel`` wrapper counting calls, cache hits, tokens and seconds per stage."""

    def __init__(self, inner: Any, cache: Any = None) -> None:
        self.inner = inner
        self.model: str = inner.model
        self._lock = threading.Lock()
        self.totals: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(USAGE_FIELDS, 0))
        self._unsaved: dict[str, dict[str, float]] = {}
        self._sink = cache_store(cache)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _add(self, stage: str, completion: Completion, seconds: float) -> None:
        delta = {"calls": 0 if completion.cached else 1, "cached": 1 if completion.cached else 0,
                 "prompt_tokens": 0 if completion.cached else completion.prompt_tokens,
                 "completion_tokens": 0 if completion.cached else completion.completion_tokens,
                 "seconds": seconds}
        with self._lock:
            for name, value in delta.items():
                self.totals[stage][name] += value
                self._unsaved.setdefault(stage, dict.fromkeys(USAGE_FIELDS, 0))[name] += value
        self.flush_usage()

    def complete(self, messages: Sequence[Message], *, stage: str, json_mode: bool = False,
                 max_tokens: Optional[int] = None) -> Completion:
        started = time.perf_counter()
        completion = self.inner.complete(messages, stage=stage, json_mode=json_mode, max_tokens=max_tokens)
        self._add(stage, completion, time.perf_counter() - started)
        return completion

    def stream(self, messages: Sequence[Message], *, stage: str, max_tokens: Optional[int] = None) -> ChatStream:
        started = time.perf_counter()
        inner = self.inner.stream(messages, stage=stage, max_tokens=max_tokens)

        def pieces():
            yield from inner

        def finish(text: str) -> Completion:
            completion = inner.completion or Completion(text)
            self._add(stage, completion, time.perf_counter() - started)
            return completion

        return ChatStream(pieces(), finish)

    def snapshot(self) -> dict[str, dict[str, float]]:
        """A copy of the in-memory totals per stage."""
        with self._lock:
            return {stage: dict(values) for stage, values in self.totals.items()}

    def flush_usage(self) -> bool:
        with self._lock:
            unsaved, self._unsaved = self._unsaved, {}
        for stage, d in unsaved.items():
            self._sink.add_usage(stage, int(d["calls"]), int(d["cached"]), int(d["prompt_tokens"]),
                                 int(d["completion_tokens"]), float(d["seconds"]))
        return self._sink.flush()

    def flush(self) -> bool:
        """Write pending usage rows and cache entries; False while the database is busy."""
        done = self.flush_usage()
        inner_flush = getattr(self.inner, "flush", None)
        return (inner_flush() if inner_flush else True) and done
