"""Inserts that meet an existing primary key, built with each dialect's own insert construct
(``sqlalchemy.dialects.sqlite.insert`` / ``sqlalchemy.dialects.postgresql.insert``); one statement object
per dialect and table, so SQLAlchemy compiles each once.

* ``replace_row`` replaces the whole row. On SQLite it is SQLite's own ``INSERT OR REPLACE`` (delete the
  old row, insert the new one), which RAGScope has always used there: the new row takes a new rowid, and
  SQLite returns the rows of an unordered scan in rowid order, so keeping REPLACE keeps every such read in
  the order existing workspaces were built with. On PostgreSQL it is ``ON CONFLICT (key) DO UPDATE`` of
  every other column from ``excluded`` (a column the caller leaves out takes its default, as in a REPLACE).
* ``upsert`` updates the given columns of an existing row from ``excluded`` and adds the ``added``
  columns to the stored values (counters), with ``ON CONFLICT … DO UPDATE`` on both databases.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Union

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite

Insert = Union[sqlite.Insert, postgresql.Insert]


def dialect_insert(dialect: str, table: Table) -> Insert:
    """The dialect's own INSERT construct for ``table`` ("sqlite" or "postgresql")."""
    if dialect == "sqlite":
        return sqlite.insert(table)
    if dialect == "postgresql":
        return postgresql.insert(table)
    raise ValueError(f"no upsert for the SQL dialect {dialect!r}")


@lru_cache(maxsize=None)
def replace_row(dialect: str, table: Table) -> Insert:
    """INSERT that replaces the row with the same primary key (see the module docstring)."""
    if dialect == "sqlite":
        return sqlite.insert(table).prefix_with("OR REPLACE")
    statement = dialect_insert(dialect, table)
    keys = [column.name for column in table.primary_key]
    return statement.on_conflict_do_update(
        index_elements=keys,
        set_={column.name: statement.excluded[column.name] for column in table.columns if column.name not in keys})


@lru_cache(maxsize=None)
def upsert(dialect: str, table: Table, replaced: tuple[str, ...] = (), added: tuple[str, ...] = ()) -> Insert:
    """INSERT … ON CONFLICT (primary key) DO UPDATE: ``replaced`` columns take the new values, ``added``
    columns become the stored value plus the new one."""
    statement = dialect_insert(dialect, table)
    changes: dict[str, Any] = {name: statement.excluded[name] for name in replaced}
    changes.update({name: table.c[name] + statement.excluded[name] for name in added})
    return statement.on_conflict_do_update(index_elements=[column.name for column in table.primary_key],
                                           set_=changes)
