"""The PostgreSQL ``LLMCacheStore``: the ``llm_cache`` and ``llm_usage`` tables of the store's database,
written through a connection of its own (never the pipeline's, so a cache write neither commits nor
joins a batch's unit of work, and is kept even when the batch is rolled back).

PostgreSQL has no database-wide write lock, so writes go out at once; while the server cannot be
reached they wait in memory and go out with a later write or ``flush()``.
"""
from __future__ import annotations

import threading
import time
from typing import Optional

import psycopg

from core.errors import CorruptWorkspaceError
from core.storage.llm_cache import _GET, _PUT, _USAGE  # the SQLite cache's statements, shared
from core.storage.postgres_connection import connect
from core.storage.postgres_dialect import PgConnection
from core.storage.ports import CachedReply


class PostgresLLMCache:
    """Cache lookups and writes, and usage rows, on a private connection (opened on first use)."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.lock = threading.RLock()
        self.pending: list[tuple[str, tuple]] = []
        self._conn: Optional[PgConnection] = None

    def _connection(self) -> PgConnection:
        if self._conn is None:
            self._conn = connect(self.dsn, "ragscope llm cache")
        return self._conn

    def get(self, key: str) -> Optional[CachedReply]:
        with self.lock:
            try:
                row = self._connection().execute(_GET, (key,)).fetchone()
            except (psycopg.Error, CorruptWorkspaceError):  # the server is gone: a miss
                self._drop()
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
        """Write what is pending in one transaction; False (keeping it) when the server cannot be reached."""
        with self.lock:
            if not self.pending:
                return True
            try:
                conn = self._connection()
                conn.execute("BEGIN")
                for sql, params in self.pending:
                    conn.execute(sql, params)
                conn.commit()
            except (psycopg.Error, OSError, CorruptWorkspaceError):
                self._drop()
                return False
            except Exception:
                self._drop()
                raise
            self.pending.clear()
            return True

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:
                pass

    def close(self) -> None:
        self.flush()
        with self.lock:
            self._drop()
