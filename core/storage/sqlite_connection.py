"""Connections to a workspace's SQLite file through SQLAlchemy: the engine (one new ``sqlite3`` connection
per ``connect()``, never pooled, so each record store owns its connection as before), the pragmas every
connection gets (WAL journal, ``synchronous=NORMAL``, the busy timeout), ``BEGIN IMMEDIATE`` for a unit
of work (the write lock is taken at once, so two writers never deadlock half-way), and the schema
created or upgraded on first open.

The SQLite-only statements here (the pragmas, ``BEGIN IMMEDIATE``) are SQLite's own and never run on
another database.
"""
from __future__ import annotations

import sqlite3
import threading
import weakref
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool
from sqlalchemy.sql.base import Executable

from core.errors import CorruptWorkspaceError
from core.storage import schema
from core.storage.sql_connection import Params, Rows, SqlConnection
from core.storage.upserts import replace_row

_engines: "weakref.WeakValueDictionary[tuple[str, float, bool], Engine]" = weakref.WeakValueDictionary()
_engines_lock = threading.Lock()


def _set_pragmas(dbapi_connection: Any, busy_ms: int, journal: bool) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
        if journal:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


def sqlite_engine(path: Path, timeout_s: float = 30.0, journal: bool = True) -> Engine:
    """The engine of the SQLite file ``path`` (shared while anything uses it: one statement cache);
    ``timeout_s`` is how long a statement waits for another writer's lock; ``journal``: each connection
    also sets WAL mode and ``synchronous=NORMAL`` (the LLM cache's connection leaves them as they are)."""
    key = (str(Path(path).resolve()), float(timeout_s), journal)
    with _engines_lock:
        engine = _engines.get(key)
        if engine is None:
            database = key[0]

            def open_driver() -> sqlite3.Connection:
                driver = sqlite3.connect(database, timeout=timeout_s, check_same_thread=False)
                _set_pragmas(driver, int(timeout_s * 1000), journal)
                return driver

            engine = create_engine("sqlite://", poolclass=NullPool, isolation_level="AUTOCOMMIT", creator=open_driver)
            _engines[key] = engine
    return engine


class SqliteConnection(SqlConnection):
    """A connection to the SQLite file: the driver (``sqlite3``) in autocommit mode, explicit BEGINs."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self.driver: sqlite3.Connection = self.sql.connection.dbapi_connection  # type: ignore[assignment]

    def _begin_sql(self, immediate: bool) -> str:
        return "BEGIN IMMEDIATE" if immediate else "BEGIN"

    def execute(self, statement: Executable, params: Params = None) -> Rows:
        """As ``SqlConnection.execute``, with no retry wrapper (a SQLite file never drops the connection)."""
        if statement.is_dml and not self.driver.in_transaction:
            return self._write_alone(statement, params)
        return self.sql.execute(statement, params)

    @property
    def in_transaction(self) -> bool:
        return self.driver.in_transaction


def _schema_ready(conn: SqliteConnection) -> bool:
    """True when the schema of this version exists (checked with a read, which WAL never blocks)."""
    try:
        value = conn.execute(select(schema.meta.c.value).where(schema.meta.c.key == "schema_version")).scalar()
    except DBAPIError:  # no meta table yet: a new database
        return False
    return value is not None and int(value) >= schema.SCHEMA_VERSION


def create_or_upgrade(conn: SqliteConnection) -> None:
    """Create or upgrade the schema in one unit of work and record its version (SQLite's write lock
    keeps two processes from doing it at once)."""
    conn.begin(immediate=True)
    try:
        schema.create_or_upgrade(conn.sql)
        conn.execute(replace_row("sqlite", schema.meta), {"key": "schema_version",
                                                          "value": str(schema.SCHEMA_VERSION)})
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def connect(path: Path) -> SqliteConnection:
    """Open the workspace database in WAL mode and make sure the schema exists; a damaged file is a
    ``CorruptWorkspaceError`` that says what to do."""
    try:
        conn = SqliteConnection(sqlite_engine(path))
    except DBAPIError as exc:
        raise _damaged(path, exc) from exc
    try:
        if not _schema_ready(conn):  # writing the schema would wait for (and block on) an active writer
            create_or_upgrade(conn)
        conn.execute(select(schema.documents.c.doc_id).limit(1)).first()
    except DBAPIError as exc:
        conn.close()
        raise _damaged(path, exc) from exc
    return conn


def _damaged(path: Path, exc: DBAPIError) -> CorruptWorkspaceError:
    return CorruptWorkspaceError(
        f"the workspace database {path} is damaged or not a RAGScope database ({exc.orig}). "
        "Move the workspace folder aside and re-index the documents into a new workspace.")
