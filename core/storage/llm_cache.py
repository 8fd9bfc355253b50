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


class QueuedCacheWrites:
    """What both backends' cache stores share: replies and usage rows queue in memory and go out in one
    transaction with ``flush()`` (a put flushes at once); while the database cannot take them
    (``retry_later`` errors, or ``_begin`` says not now) they stay queued for a later flush.

    A backend provides ``_connection()`` (the private connection to read and write on; None: there is
    no database and nothing is kept), ``_begin(conn)`` (open the transaction; False: not now) and
    ``_abandon()`` (after a failure: roll back, or drop the connection)."""

    retry_later: tuple[type[BaseException], ...] = ()

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.pending: list[tuple[str, tuple]] = []

    def _connection(self) -> Optional[Any]:
        raise NotImplementedError

    def _begin(self, conn: Any) -> bool:
        raise NotImplementedError

    def _abandon(self) -> None:
        raise NotImplementedError

    def _read_failed(self) -> None:
        """After a failed lookup (a miss): nothing to undo unless the backend says so."""

    def get(self, key: str) -> Optional[CachedReply]:
        with self.lock:
            try:
                conn = self._connection()
                row = conn.execute(_GET, (key,)).fetchone() if conn is not None else None
            except self.retry_later:  # the database is busy or gone: a miss
                self._read_failed()
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
        """Write what is pending in one transaction; False (keeping it) while the database cannot take it."""
        with self.lock:
            if not self.pending:
                return True
            try:
                conn = self._connection()
                if conn is None:  # no database: a cache that keeps nothing
                    self.pending.clear()
                    return True
                if not self._begin(conn):
                    return False
                for sql, params in self.pending:
                    conn.execute(sql, params)
                conn.commit()
            except self.retry_later:
                self._abandon()
                return False
            except BaseException:
                self._abandon()
                raise
            self.pending.clear()
            return True


class SqliteLLMCache(QueuedCacheWrites):
    """Serialised cache and usage writes on a private connection; deferred while the file is locked.

    Given an in-memory database's connection (no file to open again) it uses that connection and
    writes nothing while the connection is inside a transaction of its own."""

    retry_later = (sqlite3.OperationalError,)

    def __init__(self, source: "sqlite3.Connection | Path | str | None") -> None:
        super().__init__()
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

    def _connection(self) -> Optional[sqlite3.Connection]:
        return self.conn

    def _begin(self, conn: sqlite3.Connection) -> bool:
        if self.shared and conn.in_transaction:  # the owner's own transaction: never joined
            return False
        conn.execute("BEGIN")
        return True

    def _abandon(self) -> None:
        if self.conn is not None and self.conn.in_transaction:
            self.conn.rollback()


def cache_store(source: Any) -> LLMCacheStore:
    """An ``LLMCacheStore`` for ``source``: a ready cache store, a workspace store, a SQLite connection,
    a database path, or None (a cache that keeps nothing)."""
    if source is not None and hasattr(source, "get") and hasattr(source, "put") and hasattr(source, "flush"):
        return source
    conn = getattr(source, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        return SqliteLLMCache(conn)
    return SqliteLLMCache(source)
