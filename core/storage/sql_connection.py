"""One connection to a workspace's SQL database (SQLite or PostgreSQL) with the transaction rules every
SQL adapter relies on: the record store, the LLM cache, the annotations and the import writes.

The driver runs in autocommit mode and transactions are explicit, so a reader never holds one open
(with SQLite's WAL each read sees the last commit; on PostgreSQL no session sits idle in a transaction)
and never sees another connection's uncommitted rows:

* ``begin(immediate=True)`` opens a unit of work; ``commit()`` / ``rollback()`` end it;
* a write (an ``INSERT`` / ``UPDATE`` / ``DELETE`` statement) outside one opens a transaction first, as
  Python's sqlite3 module always did, which ``commit()`` ends (single bookkeeping writes); when that
  write fails, its transaction is rolled back at once;
* ``in_transaction`` is the driver's own state.

How a transaction begins is each backend's (``SqliteConnection`` in ``core.storage.sqlite_backend`` takes
SQLite's write lock at once with ``BEGIN IMMEDIATE``; ``PgConnection`` in ``core.storage.postgres_connection``
also opens a dropped connection again where no transaction is lost). Statements are SQLAlchemy Core
constructs, compiled once per engine and dialect (SQLAlchemy's statement cache).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence, TypeVar, Unpack

from sqlalchemy import Connection, CursorResult, Engine, Row
from sqlalchemy.sql.base import Executable

T = TypeVar("T")
Params = Optional[Mapping[str, Any]]
Rows = CursorResult[Unpack[tuple[Any, ...]]]  # rows of any width


class SqlConnection:
    """A SQLAlchemy ``Connection`` (driver in autocommit) with explicit transactions."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name  # "sqlite" | "postgresql": picks each dialect's own upsert
        self.sql: Connection = self._connect()

    # --- what a backend gives --------------------------------------------------------------------
    def _connect(self) -> Connection:
        return self.engine.connect()

    def _begin_sql(self, immediate: bool) -> str:
        """The statement that opens a transaction (both databases know plain ``BEGIN``)."""
        return "BEGIN"

    @property
    def in_transaction(self) -> bool:
        raise NotImplementedError

    def _run(self, action: Callable[[], T]) -> T:
        """Run one statement (a backend may retry it on a new connection)."""
        return action()

    # --- statements ------------------------------------------------------------------------------
    def execute(self, statement: Executable, params: Params = None) -> Rows:
        """Run one statement; a write outside a transaction opens one (see the module docstring)."""
        if getattr(statement, "is_dml", False) and not self.in_transaction:
            return self._run(lambda: self._write_alone(statement, params))
        return self._run(lambda: self.sql.execute(statement, params))

    def rows(self, statement: Executable, params: Params = None) -> Sequence[Row[Unpack[tuple[Any, ...]]]]:
        """Every row of a query, fetched at once (iterating a result fetches row by row: slower)."""
        return self.execute(statement, params).all()

    def scalars(self, statement: Executable, params: Params = None) -> list[Any]:
        """The first column of every row of a query, fetched at once."""
        return list(self.execute(statement, params).scalars().all())

    def execute_many(self, statement: Executable, rows: Sequence[Mapping[str, Any]]) -> None:
        """Run a write once per row (the driver's ``executemany``); nothing when there are no rows."""
        if not rows:
            return
        batch = list(rows)
        if not self.in_transaction:
            self._run(lambda: self._write_alone(statement, batch))
        else:
            self._run(lambda: self.sql.execute(statement, batch))

    def _write_alone(self, statement: Executable, params: Any) -> Rows:
        self.sql.exec_driver_sql(self._begin_sql(False))
        try:
            return self.sql.execute(statement, params)
        except BaseException:
            if self.in_transaction:  # the write that opened the transaction leaves none behind
                self.sql.rollback()
            raise

    # --- transactions ----------------------------------------------------------------------------
    def begin(self, immediate: bool = True) -> None:
        """Open a transaction (``immediate``: take the database's write lock now, where it has one)."""
        self._run(lambda: self.sql.exec_driver_sql(self._begin_sql(immediate)))

    def commit(self) -> None:
        if self.in_transaction:
            self._run(self.sql.commit)

    def rollback(self) -> None:
        if self.in_transaction:
            self.sql.rollback()

    def close(self) -> None:
        self.sql.close()
