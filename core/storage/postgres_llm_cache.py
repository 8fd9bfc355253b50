"""The PostgreSQL ``LLMCacheStore``: the ``llm_cache`` and ``llm_usage`` tables of the store's database,
written through a connection of its own (never the pipeline's, so a cache write neither commits nor
joins a batch's unit of work, and is kept even when the batch is rolled back).

PostgreSQL has no database-wide write lock, so writes go out at once; while the server cannot be
reached they wait in memory and go out with a later write or ``flush()`` (``QueuedCacheWrites``).
"""
from __future__ import annotations

from typing import Optional

from sqlalchemy.exc import SQLAlchemyError

from core.errors import CorruptWorkspaceError
from core.storage.llm_cache import QueuedCacheWrites  # the queue, the statements and the flush, shared
from core.storage.postgres_connection import PgConnection, StoreConnectionError, connect


class PostgresLLMCache(QueuedCacheWrites):
    """Cache lookups and writes, and usage rows, on a private connection (opened on first use)."""

    retry_later = (SQLAlchemyError, OSError, CorruptWorkspaceError, StoreConnectionError)

    def __init__(self, dsn: str) -> None:
        super().__init__()
        self.dsn = dsn
        self._conn: Optional[PgConnection] = None

    def _connection(self) -> PgConnection:
        if self._conn is None:
            self._conn = connect(self.dsn, "ragscope llm cache")
        return self._conn

    def _abandon(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except SQLAlchemyError:
                pass

    _read_failed = _abandon

    def close(self) -> None:
        self.flush()
        with self.lock:
            self._abandon()
