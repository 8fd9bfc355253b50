"""The SQL dialect shim that lets the SQLite adapter's queries run on PostgreSQL unchanged.

The record store's SQL (``core.storage.store``, ``graph_store``, ``annotations``) is written once, in
the subset both databases agree on. ``PgConnection`` wraps one psycopg connection behind the part of
the ``sqlite3.Connection`` API that SQL uses (``execute``, ``executemany``, ``commit``, ``rollback``,
``in_transaction``, cursors with ``fetchone``/``fetchall``/iteration/``rowcount``) and translates each
statement once (cached):

* ``?`` placeholders become ``%s`` (and a literal ``%`` becomes ``%%``), outside string literals;
* ``INSERT OR REPLACE INTO t …`` becomes ``INSERT INTO t … ON CONFLICT (primary key) DO UPDATE SET``
  every other listed column ``= excluded.column`` and every unlisted one ``= DEFAULT`` (the whole row
  is replaced, as SQLite does); ``INSERT OR IGNORE`` becomes ``… ON CONFLICT DO
  NOTHING``; the table's columns and key come from the shared schema (``postgres_schema.TABLES``);
* in ``ON CONFLICT … DO UPDATE SET a = a + excluded.a`` the bare ``a`` is qualified with the table
  (PostgreSQL calls it ambiguous);
* ``BEGIN IMMEDIATE`` becomes ``BEGIN``.

Transactions behave like Python's sqlite3 module: the connection is in autocommit mode and a
transaction begins implicitly before the first INSERT/UPDATE/DELETE (or explicitly with BEGIN), so a
reader never holds a transaction open and never sees another session's uncommitted rows
(READ COMMITTED). A connection the server dropped (restart) is opened again where no transaction is
lost; inside one it raises ``StoreConnectionError`` (see ``PgConnection``). Parameters are adapted the way sqlite3 stores them: ``bool`` as 0/1, numpy scalars as
Python numbers, and a NUL character (which PostgreSQL text cannot hold) as U+FFFD.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

import psycopg
import psycopg.conninfo
from psycopg import pq

from core.errors import RAGScopeError
from core.storage.postgres_schema import TABLES
from core.types import ServiceUnavailable

CONNECT_TIMEOUT_S = 10  # unless the URL says otherwise (libpq's default is to wait forever)
_DML = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
_INSERT_OR = re.compile(
    r"^\s*INSERT\s+OR\s+(REPLACE|IGNORE)\s+INTO\s+(\w+)\s*(\(([^)]*)\))?\s*(VALUES\b.*|SELECT\b.*)$",
    re.IGNORECASE | re.DOTALL)
_UPDATE_SET = re.compile(r"\bON\s+CONFLICT\s*\(([^)]*)\)\s*DO\s+UPDATE\s+SET\s+(.*)$", re.IGNORECASE | re.DOTALL)
_INSERT_TABLE = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)", re.IGNORECASE)
_BARE_NAME = re.compile(r"(?<![\w.\"'])([A-Za-z_]\w*)\b(?!\s*[.(])")
_KEYWORDS = {"excluded", "and", "or", "not", "null", "case", "when", "then", "else", "end", "is", "in",
             "coalesce", "greatest", "least", "true", "false"}


def _outside_literals(sql: str, change: Any) -> str:
    """Apply ``change`` to the parts of ``sql`` outside single-quoted literals."""
    parts = sql.split("'")
    return "'".join(change(part) if i % 2 == 0 else part for i, part in enumerate(parts))


def _upsert(kind: str, table: str, column_list: Optional[str], tail: str) -> str:
    spec = TABLES.get(table)
    if spec is None:
        raise psycopg.ProgrammingError(f"INSERT OR {kind} into unknown table {table!r}: no primary key known")
    columns, key = spec
    listed = [c.strip() for c in column_list.split(",")] if column_list else list(columns)
    head = f"INSERT INTO {table}({', '.join(listed)}) {tail.rstrip().rstrip(';')}"
    if kind.upper() == "IGNORE" or not key:
        return head + " ON CONFLICT DO NOTHING"
    # REPLACE replaces the whole row: listed columns take the new values, unlisted ones their defaults
    assignments = [f"{c} = excluded.{c}" for c in listed if c not in key]
    assignments += [f"{c} = DEFAULT" for c in columns if c not in key and c not in listed]
    if not assignments:
        return head + f" ON CONFLICT ({', '.join(key)}) DO NOTHING"
    return head + f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET " + ", ".join(assignments)


def _qualify_update(sql: str) -> str:
    """``ON CONFLICT (k) DO UPDATE SET a = a + excluded.a`` → ``… SET a = t.a + excluded.a``."""
    table_match = _INSERT_TABLE.match(sql)
    found = _UPDATE_SET.search(sql)
    if not table_match or not found:
        return sql
    table = table_match.group(1)
    columns = set(TABLES.get(table, ((), ()))[0])

    def qualify(assignment: str) -> str:
        if "=" not in assignment:
            return assignment
        lhs, rhs = assignment.split("=", 1)
        rhs = _BARE_NAME.sub(lambda m: f"{table}.{m.group(1)}"
                             if m.group(1) in columns and m.group(1).lower() not in _KEYWORDS else m.group(1), rhs)
        return f"{lhs}={rhs}"

    assignments = ",".join(qualify(a) for a in found.group(2).split(","))
    return sql[:found.start(2)] + assignments


@lru_cache(maxsize=512)
def translate(sql: str, with_params: bool) -> str:
    """The PostgreSQL text of one statement written for SQLite (see the module docstring)."""
    text = sql.strip()
    if re.match(r"^\s*BEGIN\s+(IMMEDIATE|EXCLUSIVE|DEFERRED)\s*;?\s*$", text, re.IGNORECASE):
        return "BEGIN"
    if re.match(r"^\s*PRAGMA\b", text, re.IGNORECASE):
        raise psycopg.NotSupportedError(f"SQLite PRAGMA on a PostgreSQL store: {text[:60]}")
    found = _INSERT_OR.match(text)
    if found:
        text = _upsert(found.group(1), found.group(2), found.group(4), found.group(5))
    text = _qualify_update(text)
    if with_params:
        text = _outside_literals(text, lambda part: part.replace("%", "%%").replace("?", "%s"))
    return text


def adapt(value: Any) -> Any:
    """One parameter as sqlite3 would have stored it."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    item = getattr(value, "item", None)  # numpy scalars
    if item is not None and not isinstance(value, (bytes, bytearray, memoryview)) and getattr(value, "shape", None) == ():
        return item()
    return value


def _params(params: Any) -> Optional[Sequence[Any]]:
    if params is None:
        return None
    return [adapt(v) for v in params]


class PgCursor:
    """The sqlite3 cursor surface over a psycopg cursor."""

    def __init__(self, cursor: psycopg.Cursor) -> None:
        self._cursor = cursor

    @property
    def rowcount(self) -> int:
        return int(self._cursor.rowcount)

    def fetchone(self) -> Optional[tuple]:
        return self._cursor.fetchone() if self._cursor.description is not None else None

    def fetchall(self) -> list[tuple]:
        return self._cursor.fetchall() if self._cursor.description is not None else []

    def __iter__(self) -> Iterator[tuple]:
        if self._cursor.description is None:
            return iter(())
        return iter(self._cursor.fetchall())


class StoreConnectionError(RAGScopeError, ServiceUnavailable):
    """The PostgreSQL server cannot be reached, or dropped the connection inside a unit of work (a server
    restart, a network cut). The server rolled that unit of work back: nothing of it was written. Indexing
    stops as on a lost embeddings server (the batch's documents stay pending: run it again to resume)."""


def _where(dsn: str) -> str:
    """host:port/database of a DSN (never its password)."""
    given = psycopg.conninfo.conninfo_to_dict(dsn)
    return f"{given.get('host') or 'localhost'}:{given.get('port') or 5432}/{given.get('dbname') or ''}"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


class PgConnection:
    """A psycopg connection that reads like a ``sqlite3.Connection`` to the shared SQL.

    When the server drops the connection (it restarted) a statement outside a transaction — a read, a
    ``BEGIN``, the first write of an implicit transaction — runs again on a new connection. Inside a
    transaction the loss raises ``StoreConnectionError`` and the connection refuses every statement
    until ``rollback()``: the server has rolled the transaction back, and the rest of the caller's unit
    of work must not go out on its own on a new connection."""

    def __init__(self, dsn: str, application_name: str = "ragscope") -> None:
        self.dsn = dsn
        self.application_name = application_name
        self._lost = False  # the connection broke inside a transaction: refuse until rollback()
        self.reconnects = 0
        self.raw = self._open()

    def _open(self) -> psycopg.Connection:
        given = psycopg.conninfo.conninfo_to_dict(self.dsn)
        timeout = given.get("connect_timeout", CONNECT_TIMEOUT_S)  # the URL's own wins
        return psycopg.connect(self.dsn, autocommit=True, application_name=self.application_name,
                               connect_timeout=int(timeout or CONNECT_TIMEOUT_S))

    def _dropped(self) -> bool:
        return bool(self.raw.broken or self.raw.closed)

    def _reconnect(self) -> None:
        try:
            fresh = self._open()
        except psycopg.OperationalError as exc:
            raise StoreConnectionError(
                f"the PostgreSQL store {_where(self.dsn)} cannot be reached ({_one_line(exc)}); check that the "
                "server runs (it may be restarting: try again in a moment)") from None
        try:
            self.raw.close()
        except psycopg.Error:
            pass
        self.raw = fresh
        self.reconnects += 1

    @property
    def in_transaction(self) -> bool:
        if self._lost:
            return True
        if self._dropped():
            return False
        return self.raw.info.transaction_status != pq.TransactionStatus.IDLE

    def _begin_if_writing(self, sql: str) -> bool:
        """Open a transaction before a write outside one (as sqlite3 does); True when it did."""
        if _DML.match(sql) and not self.in_transaction:
            self.raw.execute("BEGIN")
            return True
        return False

    def _attempt(self, text: str, run: Callable[[psycopg.Cursor], Any]) -> PgCursor:
        began = self._begin_if_writing(text)
        cursor = self.raw.cursor()
        try:
            run(cursor)
        except psycopg.Error:
            if began and not self._dropped():  # a statement that opened its own transaction leaves none behind
                self.raw.execute("ROLLBACK")
            raise
        return PgCursor(cursor)

    def _run(self, text: str, run: Callable[[psycopg.Cursor], Any]) -> PgCursor:
        if self._lost:
            raise StoreConnectionError(f"the connection to the PostgreSQL store {_where(self.dsn)} was lost inside "
                                       "this unit of work: roll it back before writing again")
        if self._dropped():
            self._reconnect()
        outside = not self.in_transaction
        try:
            return self._attempt(text, run)
        except psycopg.OperationalError as exc:
            if not self._dropped():
                raise
            if outside:  # nothing of a transaction is lost: the same statement on a new connection
                self._reconnect()
                return self._attempt(text, run)
            self._lost = True
            outcome = ("whether the commit reached the server is unknown: read the store before retrying"
                       if text == "COMMIT" else "the server rolled the unit of work back: nothing of it was written")
            raise StoreConnectionError(f"the connection to the PostgreSQL store {_where(self.dsn)} was lost during a "
                                       f"write ({_one_line(exc)}); {outcome}. Run it again "
                                       "(indexing resumes where it stopped)") from None

    def execute(self, sql: str, params: Any = None) -> PgCursor:
        text = translate(sql, params is not None)
        args = _params(params)
        return self._run(text, lambda cursor: cursor.execute(text, args))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> PgCursor:
        batch = [_params(r) or [] for r in rows]
        if not batch:
            return PgCursor(self.raw.cursor())
        text = translate(sql, True)
        return self._run(text, lambda cursor: cursor.executemany(text, batch))

    def executescript(self, script: str) -> None:
        """Run ``;``-separated DDL (idempotent statements only; no literals containing ``;``)."""
        for statement in (s.strip() for s in script.split(";")):
            if statement:
                self.execute(statement)

    def commit(self) -> None:
        if self.in_transaction:
            self._run("COMMIT", lambda cursor: cursor.execute("COMMIT"))

    def rollback(self) -> None:
        """Abandon the transaction (after a lost connection: the server already did; the next statement
        connects again)."""
        self._lost = False
        if self._dropped() or self.raw.info.transaction_status == pq.TransactionStatus.IDLE:
            return
        try:
            self.raw.execute("ROLLBACK")
        except psycopg.OperationalError:
            if not self._dropped():
                raise

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> "PgConnection":
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        if kind is None:
            self.commit()
        else:
            self.rollback()
