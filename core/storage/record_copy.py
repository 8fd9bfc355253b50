"""Copy every record of one SQL record store into another, across backends (a PostgreSQL workspace's
records into a SQLite file): the tables of ``core.storage.schema``, row by row as SQLAlchemy reads them,
in foreign-key order, in one unit of work of the target (its old rows of those tables replaced). The
LLM cache and its usage counters are left out: they are not part of the index. Used by
``core.editing.impact`` to evaluate a PostgreSQL workspace "before" some edits without touching it.
"""
from __future__ import annotations

from sqlalchemy import delete, insert, select

from core.storage.schema import metadata
from core.storage.store import SqlRecordStore

BATCH = 2000
SKIPPED = frozenset({"llm_cache", "llm_usage"})


def copy_records(source: SqlRecordStore, target: SqlRecordStore) -> dict[str, int]:
    """Replace ``target``'s rows of every schema table (but ``SKIPPED``) with ``source``'s; rows per table."""
    counts: dict[str, int] = {}
    tables = [t for t in metadata.sorted_tables if t.name not in SKIPPED]
    with target.unit_of_work():
        for table in reversed(tables):
            target.db.execute(delete(table))
        for table in tables:
            rows = [dict(row._mapping) for row in source.db.rows(select(table))]
            for start in range(0, len(rows), BATCH):
                target.db.execute_many(insert(table), rows[start:start + BATCH])
            counts[table.name] = len(rows)
    return counts
