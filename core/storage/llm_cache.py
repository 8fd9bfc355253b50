"""The SQLite ``LLMCacheStore``: the ``llm_cache`` and ``llm_usage`` tables of the workspace file,
written through a private connection (never the pipeline's, so a cache write can neither commit
nor join a batch's unit of work). While another writer holds the database, writes wait in memory
and go out with a later write or ``flush()``.

``cache_store(source)`` turns what callers hold (a store, a connection, a path, None, or a ready
``LLMCacheStore``) into a cache store.
"""
from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Optional

from core.storage.ports import CachedReply, LLMCacheStore

_GET = "SELECT response, prompt_tokens, completion_tokens FROM llm_cache WHERE key=?"
_PUT = ("INSERT OR REPLACE INTO llm_cache(key, response, prompt_tokens, completion_tokens, created_at) "
        "VALUES (?, ?, ?, ?, ?)")
_USAGE = ("INSERT INTO llm_usage(stage, calls, cached, prompt_tokens, completion_tokens, seconds) "
          "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(stage) DO UPDATE SET calls = calls + excluded.calls, "
          "cached = cached + excluded.cached, prompt_tokens = prompt_tokens + excluded.prompt_tokens, "
          "completion_tokens = completion_tokens + excluded.completion_tokens, seconds = seconds + excluded.seconds")


class SqliteLLMCache:
    """Serialised cache and usage writes on a private connection; deferred while the file is locked.

    Given an in-memory database's connection (no file to open again) it uses that connection and
    writes nothing while the connection is inside a transaction of its own."""

    def __init__(self, source: "sqlite3.Connection | Path | str | None") -> None:
        self.lock = threading.RLock()
        self.pending: list[tuple[str, tuple]] = []
        self.conn: Optional[sqlite3.Connection] = None
        self.shared = True
        path = ""
        if isinstance(source, sqlite3.Connection):
            self.conn = source
            path = next((r[2] for r in source.execute("PRAGMA database_list").fetchall() if r[1] == "main"), "")
        elif source is not None:
            path = str(source)
        if path:
            self.conn = sqlite3.connect(path, timeout=0.05, check_same_thread=False)
            self.conn.execute("PRAGMA busy_timeout=50")
            self.shared = False

    def get(self, key: str) -> Optional[CachedReply]:
        if self.conn is None:
            return None
        with self.lock:
            try:
                row = self.conn.execute(_GET, (key,)).fetchone()
            except sqlite3.OperationalError:
                return None
        return CachedReply(row[0], int(row[1]), int(row[2])) if row else None

    def put(self, key: str, reply: CachedReply) -> None:
        with self.lock:
            self.pending.append((_PUT, (key, reply.text, reply.prompt_tokens, reply.completion_tokens, time.time())))
            self.flush()

    def drop_keys_before(self, prefix: str) -> None:
        """Delete the cached replies whose key sorts before ``prefix`` (an older key format)."""
        with self.lock:
            self.pending.append(("DELETE FROM llm_cache WHERE key < ?", (prefix,)))
            self.flush()

    def add_usage(self, stage: str, calls: int, cached: int, prompt_tokens: int, completion_tokens: int,
                  seconds: float) -> None:
        with self.lock:
            self.pending.append((_USAGE, (stage, int(calls), int(cached), int(prompt_tokens), int(completion_tokens),
                                          float(seconds))))

    def flush(self) -> bool:
        with self.lock:
            if self.conn is None:
                self.pending.clear()
                return True
            if not self.pending:
                return True
            if self.shared and self.conn.in_transaction:
                return False
            try:
                for sql, params in self.pending:
                    self.conn.execute(sql, params)
                self.conn.commit()
            except sqlite3.OperationalError:
                if self.conn.in_transaction:
                    self.conn.rollback()
                return False
            self.pending.clear()
            return True


def cache_store(source: Any) -> LLMCacheStore:
    """An ``LLMCacheStore`` for ``source``: a ready cache store, a workspace store, a SQLite connection,
    a database path, or None (a cache that keeps nothing)."""
    if source is not None and hasattr(source, "get") and hasattr(source, "put") and hasattr(source, "flush"):
        return source
    conn = getattr(source, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        return SqliteLLMCache(conn)
    return SqliteLLMCache(source)
