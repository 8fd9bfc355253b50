"""Connections to a PostgreSQL store through SQLAlchemy (driver: psycopg): the store spec as a libpq URL,
the URL without its password (for messages), ``PgConnection`` (a ``SqlConnection`` that opens a dropped
connection again where no transaction is lost) and ``connect`` — a connection whose database has the
current schema, or an error that says what to check.

A connection the server dropped (a restart, a network cut) is opened again for a statement outside a
transaction — a read, a ``BEGIN``, the first write of an implicit transaction. Inside one, the loss
raises ``StoreConnectionError`` and the connection refuses every statement until ``rollback()``: the
server has rolled the transaction back, and the rest of the caller's unit of work must not go out on
its own on a new connection.

``migrate(conn)`` creates or upgrades the schema (``core.storage.schema``) under a transaction-scoped
advisory lock (two processes opening a new database at once do not race) and records each applied
version in the ``ragscope_schema`` table; the ``meta`` row ``schema_version`` is kept as SQLite keeps it.
"""
from __future__ import annotations

import threading
import time
import weakref
from typing import Callable, Optional, TypeVar
from urllib.parse import urlsplit, urlunsplit

import psycopg
import psycopg.conninfo
from psycopg import pq
from sqlalchemy import Column, Engine, Integer, MetaData, Table, create_engine, func, inspect, select
from sqlalchemy.dialects.postgresql import DOUBLE_PRECISION
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from core.errors import CorruptWorkspaceError, RAGScopeError
from core.storage import schema
from core.storage.sql_connection import SqlConnection
from core.storage.upserts import upsert
from core.types import ServiceUnavailable

T = TypeVar("T")
CONNECT_TIMEOUT_S = 10  # unless the URL says otherwise (libpq's default is to wait forever)
SCHEMA_LOCK = (0x52414753, 0)  # ('RAGS', 0): serialises schema creation across processes
versions = Table("ragscope_schema", MetaData(),
                 Column("version", Integer, primary_key=True, autoincrement=False),
                 Column("applied_at", DOUBLE_PRECISION, nullable=False))


class StoreConnectionError(RAGScopeError, ServiceUnavailable):
    """The PostgreSQL server cannot be reached, or dropped the connection inside a unit of work (a server
    restart, a network cut). The server rolled that unit of work back: nothing of it was written. Indexing
    stops as on a lost embeddings server (the batch's documents stay pending: run it again to resume)."""


def connection_string(spec: str) -> str:
    """The libpq connection string of a store spec (``postgresql+psycopg://`` and ``postgres://`` accepted)."""
    scheme, rest = spec.strip().split("://", 1)
    return "postgresql://" + rest if scheme.split("+", 1)[0].lower() in ("postgresql", "postgres") else spec


def redacted(spec: str) -> str:
    """The spec without its password (for messages, logs and the Settings page)."""
    parts = urlsplit(connection_string(spec))
    if parts.password is None:
        return urlunsplit(parts)
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _where(dsn: str) -> str:
    """host:port/database of a DSN (never its password)."""
    given = psycopg.conninfo.conninfo_to_dict(dsn)
    return f"{given.get('host') or 'localhost'}:{given.get('port') or 5432}/{given.get('dbname') or ''}"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(getattr(exc, "orig", None) or exc).split()) or type(exc).__name__


_engines: "weakref.WeakValueDictionary[tuple[str, str], Engine]" = weakref.WeakValueDictionary()
_engines_lock = threading.Lock()


def postgres_engine(dsn: str, application_name: str = "ragscope") -> Engine:
    """The engine of one store and client name: a new psycopg connection (autocommit) per ``connect()``,
    never pooled, with libpq reading the DSN itself (``~/.pgpass``, ``PG*`` variables, URL parameters)."""
    key = (dsn, application_name)
    with _engines_lock:
        engine = _engines.get(key)
        if engine is None:
            timeout = psycopg.conninfo.conninfo_to_dict(dsn).get("connect_timeout", CONNECT_TIMEOUT_S)  # the URL's own wins

            def open_driver() -> psycopg.Connection:
                return psycopg.connect(dsn, autocommit=True, application_name=application_name,
                                       connect_timeout=int(timeout or CONNECT_TIMEOUT_S))

            engine = create_engine("postgresql+psycopg://", creator=open_driver, poolclass=NullPool,
                                   isolation_level="AUTOCOMMIT")
            _engines[key] = engine
    return engine


class PgConnection(SqlConnection):
    """A connection to the store that is opened again after the server dropped it (see the module
    docstring); ``reconnects`` counts how often."""

    def __init__(self, dsn: str, application_name: str = "ragscope") -> None:
        self.dsn = dsn
        self._lost = False  # the connection broke inside a transaction: refuse until rollback()
        self.reconnects = 0
        super().__init__(postgres_engine(dsn, application_name))

    def _driver(self) -> Optional[psycopg.Connection]:
        if self.sql.invalidated or self.sql.closed:
            return None
        raw = self.sql.connection.dbapi_connection
        return None if raw is None or raw.broken or raw.closed else raw  # type: ignore[return-value]

    @property
    def in_transaction(self) -> bool:
        if self._lost:
            return True
        raw = self._driver()
        return raw is not None and raw.info.transaction_status != pq.TransactionStatus.IDLE

    def _dropped(self, exc: DBAPIError) -> bool:
        return bool(exc.connection_invalidated or self.sql.invalidated)

    def _run(self, action: Callable[[], T], committing: bool = False) -> T:
        if self._lost:
            raise StoreConnectionError(f"the connection to the PostgreSQL store {_where(self.dsn)} was lost inside "
                                       "this unit of work: roll it back before writing again")
        outside = not self.in_transaction
        try:
            return action()
        except DBAPIError as exc:
            if not self._dropped(exc):
                raise
            if outside:  # nothing of a transaction is lost: the same statement on a new connection
                return self._again(action)
            self._lost = True
            outcome = ("whether the commit reached the server is unknown: read the store before retrying"
                       if committing else "the server rolled the unit of work back: nothing of it was written")
            raise StoreConnectionError(f"the connection to the PostgreSQL store {_where(self.dsn)} was lost during a "
                                       f"write ({_one_line(exc)}); {outcome}. Run it again "
                                       "(indexing resumes where it stopped)") from None

    def _again(self, action: Callable[[], T]) -> T:
        self.sql.rollback()  # forget the dropped connection's transaction: the next statement connects again
        try:
            result = action()
        except DBAPIError as exc:
            if not self._dropped(exc):
                raise
            self.sql.rollback()
            raise StoreConnectionError(
                f"the PostgreSQL store {_where(self.dsn)} cannot be reached ({_one_line(exc)}); check that the "
                "server runs (it may be restarting: try again in a moment)") from None
        self.reconnects += 1
        return result

    def commit(self) -> None:
        if self.in_transaction:
            self._run(self.sql.commit, committing=True)

    def rollback(self) -> None:
        """Abandon the transaction (after a lost connection: the server already did; the next statement
        connects again)."""
        self._lost = False
        if self.sql.invalidated:
            self.sql.rollback()
            return
        try:
            self.sql.rollback()
        except DBAPIError as exc:
            if not self._dropped(exc):
                raise
            self.sql.rollback()


def applied_version(conn: PgConnection) -> int:
    """The highest schema version recorded in the database (0: none yet)."""
    if not inspect(conn.sql).has_table(versions.name):
        return 0
    return int(conn.execute(select(func.coalesce(func.max(versions.c.version), 0))).scalar_one())


def migrate(conn: PgConnection) -> int:
    """Create or upgrade the schema; returns the version the database is at. Cheap when nothing is to do
    (one read)."""
    current = applied_version(conn)
    if current >= schema.SCHEMA_VERSION:
        return current
    conn.begin()
    try:
        conn.execute(select(func.pg_advisory_xact_lock(*SCHEMA_LOCK)))
        versions.create(conn.sql, checkfirst=True)
        if applied_version(conn) < schema.SCHEMA_VERSION:
            schema.create_or_upgrade(conn.sql)
            conn.execute(pg_insert(versions).on_conflict_do_nothing(),
                         {"version": schema.SCHEMA_VERSION, "applied_at": time.time()})
            conn.execute(upsert("postgresql", schema.meta, replaced=("value",)),
                         {"key": "schema_version", "value": str(schema.SCHEMA_VERSION)})
    except BaseException:
        conn.rollback()
        raise
    conn.commit()
    return schema.SCHEMA_VERSION


def connect(dsn: str, application_name: str = "ragscope") -> PgConnection:
    """A connection to the store's database, schema created or migrated; a clear error when it cannot."""
    try:
        conn = PgConnection(dsn, application_name)
    except DBAPIError as exc:
        raise CorruptWorkspaceError(
            f"cannot connect to the PostgreSQL store {redacted(dsn)}: {str(exc.orig).strip()}. Check that the "
            "server runs and the URL (host, port, database, user, password) is right; for a test server "
            "run scripts/start-postgres.sh") from None
    try:
        migrate(conn)
    except DBAPIError as exc:
        conn.close()
        raise CorruptWorkspaceError(f"the PostgreSQL store {redacted(dsn)} cannot hold a RAGScope workspace "
                                    f"(creating its schema failed: {str(exc.orig).strip()})") from None
    return conn

