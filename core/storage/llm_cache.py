"""The SQLite ``LLMCacheStore``: the ``llm_cache`` and ``llm_usage`` tables of the workspace file,
written through a private connection (never the pipeline's, so a cache write can neither commit
nor join a batch's unit of work). While another writer holds the database, writes wait in memory
and go out with a later write or ``flush()``. The statements (SQLAlchemy Core) and the queue are
shared with the PostgreSQL cache (``core.storage.postgres_llm_cache``).

``cache_store(source)`` turns what callers hold (a store, a SQLite connection, a path, None, or a
ready ``LLMCacheStore``) into a cache store.
"""
from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional

from sqlalchemy import bindparam, delete, select
from sqlalchemy.exc import OperationalError

from core.storage import schema as s
from core.storage.ports import LLMCacheStore
from core.storage.records import CachedReply
from core.storage.sql_connection import SqlConnection
from core.storage.sqlite_connection import SqliteConnection, sqlite_engine
from core.storage.upserts import replace_row, upsert

_GET = select(s.llm_cache.c.response, s.llm_cache.c.prompt_tokens, s.llm_cache.c.completion_tokens).where(
    s.llm_cache.c.key == bindparam("key"))
_USAGE_COUNTERS = ("calls", "cached", "prompt_tokens", "completion_tokens", "seconds")
Write = Callable[[SqlConnection], Any]


class QueuedCacheWrites:
    """What both backends' cache stores share: replies and usage rows queue in memory and go out in one
    transaction with ``flush()`` (a put flushes at once); while the database cannot take them
    (``retry_later`` errors, or ``_begin`` says not now) they stay queued for a later flush.

    A backend provides ``_connection()`` (the private ``SqlConnection`` to read and write on; None: there
    is no database and nothing is kept) and ``_abandon()`` (after a failure: roll back, or drop the
    connection)."""

    retry_later: tuple[type[BaseException], ...] = ()

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.pending: list[Write] = []

    def _connection(self) -> Optional[SqlConnection]:
        raise NotImplementedError

    def _abandon(self) -> None:
        raise NotImplementedError

    def _read_failed(self) -> None:
        """After a failed lookup (a miss): nothing to undo unless the backend says so."""

    def get(self, key: str) -> Optional[CachedReply]:
        with self.lock:
            try:
                conn = self._connection()
                row = conn.execute(_GET, {"key": key}).first() if conn is not None else None
            except self.retry_later:  # the database is busy or gone: a miss
                self._read_failed()
                return None
        return CachedReply(row[0], int(row[1]), int(row[2])) if row else None

    def put(self, key: str, reply: CachedReply) -> None:
        row = {"key": key, "response": reply.text, "prompt_tokens": reply.prompt_tokens,
               "completion_tokens": reply.completion_tokens, "created_at": time.time()}
        with self.lock:
            self.pending.append(lambda conn: conn.execute(replace_row(conn.dialect, s.llm_cache), row))
            self.flush()

    def drop_keys_before(self, prefix: str) -> None:
        """Delete the cached replies whose key sorts before ``prefix`` (an older key format)."""
        statement = delete(s.llm_cache).where(s.llm_cache.c.key < prefix)
        with self.lock:
            self.pending.append(lambda conn: conn.execute(statement))
            self.flush()

    def add_usage(self, stage: str, calls: int, cached: int, prompt_tokens: int, completion_tokens: int,
                  seconds: float) -> None:
        row = {"stage": stage, "calls": int(calls), "cached": int(cached), "prompt_tokens": int(prompt_tokens),
               "completion_tokens": int(completion_tokens), "seconds": float(seconds)}
        with self.lock:
            self.pending.append(lambda conn: conn.execute(upsert(conn.dialect, s.llm_usage, added=_USAGE_COUNTERS),
                                                          row))

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
                conn.begin(immediate=False)
                for write in self.pending:
                    write(conn)
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
    """Serialised cache and usage writes on a private connection that waits 50 ms at most for the
    database; writes are deferred while another writer holds the file. Given no database file (None,
    or an in-memory database's connection) it keeps nothing."""

    retry_later = (OperationalError,)

    def __init__(self, source: "sqlite3.Connection | Path | str | None") -> None:
        super().__init__()
        path = ""
        if isinstance(source, sqlite3.Connection):
            path = next((r[2] for r in source.execute("PRAGMA database_list").fetchall() if r[1] == "main"), "")
        elif source is not None:
            path = str(source)
        self.conn: Optional[SqlConnection] = SqliteConnection(sqlite_engine(Path(path), 0.05, journal=False)) if path else None

    def _connection(self) -> Optional[SqlConnection]:
        return self.conn

    def _abandon(self) -> None:
        if self.conn is not None:
            self.conn.rollback()

    def close(self) -> None:
        with self.lock:
            if self.conn is not None:
                self.conn.close()
                self.conn = None


def cache_store(source: Any) -> LLMCacheStore:
    """An ``LLMCacheStore`` for ``source``: a ready cache store, a workspace store, a SQLite connection,
    a database path, or None (a cache that keeps nothing)."""
    if source is not None and hasattr(source, "get") and hasattr(source, "put") and hasattr(source, "flush"):
        return source
    conn = getattr(source, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        return SqliteLLMCache(conn)
    return SqliteLLMCache(source)
