"""The PostgreSQL backend: one PostgreSQL database is a workspace's system of record (documents, chunks,
sentences, graph fragments, merged graph, mention graph, summary tree, annotations, LLM cache and
usage, run log, meta); the vectors stay in ChromaDB (embedded in the workspace folder, or a server);
the writer lock is a PostgreSQL session advisory lock.

Selected by a store spec ``postgresql://user:password@host:port/database`` (``--store`` or
``RAGSCOPE_STORE``). Several processes — app instances on other machines, CLIs with other data folders
— that name one database share one index: each reads the last commit, and one writer at a time holds
the advisory lock (PostgreSQL drops it when the holder's session ends, also when the process is
killed, so there is no stale lock to clear). The workspace folder holds settings and, with embedded
ChromaDB, the vectors; never a SQLite file.

The record store is ``core.storage.store.SqlRecordStore`` over a ``PgConnection``: the statements are the
SQLite backend's, rendered by SQLAlchemy's PostgreSQL dialect. The lock queries read PostgreSQL's own
catalogs (``pg_locks``, ``pg_stat_activity``), described here as lightweight Core tables.
"""
from __future__ import annotations

import os
import socket
import threading
import time
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from sqlalchemy import column, func, literal, select, table, true
from sqlalchemy.exc import SQLAlchemyError

from core.errors import WorkspaceBusyError
from core.storage.annotations import SqlAnnotationStore
from core.storage.postgres_connection import PgConnection, StoreConnectionError, connect, connection_string, redacted
from core.storage.postgres_llm_cache import PostgresLLMCache
from core.storage.store import SqlRecordStore
from core.storage.vectors import VectorStore

WRITER_LOCK = (0x52414753, 1)  # ('RAGS', 1): the workspace writer's advisory lock (per database)
_locks = table("pg_locks", column("pid"), column("locktype"), column("granted"), column("classid"), column("objid"),
               column("objsubid"), column("database"))
_activity = table("pg_stat_activity", column("pid"), column("application_name"), column("backend_start"),
                  column("client_addr"))
_databases = table("pg_database", column("oid"), column("datname"))
_HOLDER = (select(_activity.c.pid, _activity.c.application_name, _activity.c.backend_start, _activity.c.client_addr)
           .select_from(_locks.join(_activity, _activity.c.pid == _locks.c.pid))
           .where(_locks.c.locktype == "advisory", _locks.c.granted == true(), _locks.c.classid == WRITER_LOCK[0],
                  _locks.c.objid == WRITER_LOCK[1], _locks.c.objsubid == 2,
                  _locks.c.database == select(_databases.c.oid)
                  .where(_databases.c.datname == func.current_database()).scalar_subquery()))


class PostgresStore(SqlRecordStore):
    """The record store on PostgreSQL. ``writer_check`` runs before each unit of work (the backend's: is
    this process's writer lock still held?)."""

    db: PgConnection

    def __init__(self, dsn: str, application_name: str = "ragscope",
                 writer_check: Optional[Callable[[], None]] = None) -> None:
        self.dsn = dsn
        super().__init__(connect(dsn, application_name))
        self.writer_check = writer_check

    @contextmanager
    def unit_of_work(self) -> Iterator[SqlRecordStore]:
        if self.writer_check is not None:
            self.writer_check()
        with super().unit_of_work() as store:
            yield store

    transaction = unit_of_work


def _acquired(conn: PgConnection) -> bool:
    return bool(conn.sql.execute(select(func.pg_try_advisory_lock(*WRITER_LOCK))).scalar())


def _holder_name() -> str:
    return f"ragscope writer pid={os.getpid()} host={socket.gethostname()}"[:63]


class PostgresBackend:
    """The ports of one workspace whose records live in a PostgreSQL database."""

    name = "postgresql"

    def __init__(self, folder: Path, settings: Any, spec: str) -> None:
        self.folder = Path(folder)
        self.settings = settings
        self.dsn = connection_string(spec)
        self.display = redacted(spec)
        self._probe: Optional[PgConnection] = None
        self._probe_lock = threading.Lock()
        self._lock_conn: Optional[PgConnection] = None  # the session holding the writer lock, while held

    def open_records(self) -> PostgresStore:
        return PostgresStore(self.dsn, writer_check=self.check_writer_lock)

    def check_writer_lock(self) -> None:
        """While this process holds the writer lock: raise ``StoreConnectionError`` when the server dropped
        the lock's session (a restart ends every session, and the lock with it; another writer may hold
        it now), so that no unit of work goes out unlocked. Nothing to check when no lock is held."""
        conn = self._lock_conn
        if conn is None:
            return
        try:
            conn.sql.execute(select(literal(1)))  # this session, never a new one: a new one holds no lock
        except SQLAlchemyError:
            raise StoreConnectionError(
                f"the PostgreSQL store {self.display} dropped this writer's session (the server restarted?) "
                "and with it the writer lock: this run stops before writing anything more. Start it again "
                "to resume where it stopped") from None

    def open_vectors(self, namespace: str) -> VectorStore:
        return VectorStore(self.folder / "chroma", namespace, self.settings.chroma_url)

    def open_llm_cache(self) -> PostgresLLMCache:
        return PostgresLLMCache(self.dsn)

    def open_annotations(self) -> SqlAnnotationStore:
        """Annotations on a private connection per call (the schema is migrated when it connects)."""
        return SqlAnnotationStore(lambda: connect(self.dsn, "ragscope annotations"))

    # --- the writer lock ---------------------------------------------------------------------
    def writer_lock(self, wait: bool = False, timeout_s: float = 3600.0) -> AbstractContextManager[None]:
        return self._hold(wait, timeout_s)

    @contextmanager
    def _hold(self, wait: bool, timeout_s: float) -> Iterator[None]:
        conn = connect(self.dsn, _holder_name())
        try:
            deadline = time.monotonic() + (timeout_s if wait else 0.0)
            while not _acquired(conn):
                if time.monotonic() >= deadline:
                    raise WorkspaceBusyError(self.busy_message(conn))
                time.sleep(0.25)
            self._lock_conn = conn
            try:
                yield
            finally:
                self._lock_conn = None
                try:
                    conn.sql.execute(select(func.pg_advisory_unlock(*WRITER_LOCK)))
                except SQLAlchemyError:
                    pass  # the session is gone, and the lock with it
        finally:
            conn.close()

    def holder(self, conn: Optional[PgConnection] = None) -> Optional[dict[str, Any]]:
        """Who holds the writer lock (server pid, application name, since, client address), None when free."""
        if conn is not None:
            row = conn.execute(_HOLDER).first()
        else:
            with self._probe_lock:  # one probe connection, reused (the app asks on every rerun)
                if self._probe is None:
                    self._probe = connect(self.dsn, "ragscope lock probe")
                row = self._probe.execute(_HOLDER).first()
        if row is None:
            return None
        return {"server_pid": row[0], "application": row[1], "since": row[2], "client": str(row[3] or "local")}

    def busy_message(self, conn: Optional[PgConnection] = None) -> str:
        info = self.holder(conn)
        if info is None:
            return f"workspace busy: another process is writing to the PostgreSQL store {self.display}"
        since = info["since"].strftime("%Y-%m-%d %H:%M:%S %Z") if info["since"] else "?"
        return (f"workspace busy ({info['application'] or 'a client'} from {info['client']}, connected since "
                f"{since}): another indexing run is writing to the PostgreSQL store {self.display}")

    def writer_active(self) -> bool:
        return self.holder() is not None

    def clear_stale_lock(self) -> bool:
        """Nothing to clear: PostgreSQL releases a dead session's advisory lock itself."""
        return False

    def close(self) -> None:
        """Close the lock probe's connection (record stores are closed by the workspace)."""
        with self._probe_lock:
            if self._probe is not None:
                self._probe.close()
                self._probe = None

    def describe(self) -> str:
        """What Settings shows (read-only): the store without its password."""
        return f"the PostgreSQL database {self.display}"


def _factory(folder: Path, settings: Any, spec: str) -> PostgresBackend:
    return PostgresBackend(folder, settings, spec)
