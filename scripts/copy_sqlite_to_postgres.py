"""Copy a SQLite workspace's records, table by table and row for row, into an empty PostgreSQL store.

    python scripts/copy_sqlite_to_postgres.py WORKSPACE_FOLDER postgresql://USER@HOST:PORT/DB

The workspace folder keeps its ChromaDB vectors (the namespace is copied with the ``meta`` rows), so
``--workspace WORKSPACE_FOLDER --store postgresql://…`` then opens the same index with PostgreSQL as
its system of record: the same records, the same vectors. It is how the dev_musique_full eval compares
the two backends' retrieval over one index without indexing it twice (``docs/storage.md``). The target
database must hold no documents; the copy is one transaction (all of it, or nothing).
"""
from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import delete, func, insert, select  # noqa: E402

from core.storage import schema  # noqa: E402
from core.storage.postgres_connection import connect  # noqa: E402
from core.storage.sqlite_backend import DB_FILE  # noqa: E402


def copy(folder: Path, dsn: str) -> dict[str, int]:
    """Copy every table of ``folder``'s SQLite file into ``dsn``; returns the rows copied per table."""
    source = sqlite3.connect(f"file:{folder / DB_FILE}?mode=ro", uri=True)
    target = connect(dsn, "ragscope copy")
    counts: dict[str, int] = {}
    try:
        if target.execute(select(func.count()).select_from(schema.documents)).scalar_one():
            raise SystemExit(f"the PostgreSQL store {dsn} already holds documents: copy into an empty one")
        target.begin()
        for table in schema.metadata.sorted_tables:
            columns = [column.name for column in table.columns]
            rows = source.execute(f"SELECT {', '.join(columns)} FROM {table.name}").fetchall()
            target.execute(delete(table))  # the rows a fresh store starts with (meta: schema_version)
            target.execute_many(insert(table), [dict(zip(columns, row)) for row in rows])
            counts[table.name] = len(rows)
        log_id = schema.run_log.c.id  # the identity column continues after the copied ids
        target.execute(select(func.setval(func.pg_get_serial_sequence(schema.run_log.name, log_id.name),
                                          select(func.coalesce(func.max(log_id), 0) + 1).scalar_subquery(), False)))
        target.commit()
    except BaseException:
        target.rollback()
        raise
    finally:
        target.close()
        source.close()
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("store", help="postgresql://USER[:PASSWORD]@HOST:PORT/DATABASE (an empty store)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    counts = copy(args.workspace, args.store)
    print(f"copied {sum(counts.values())} rows in {time.perf_counter() - started:.1f}s: "
          + ", ".join(f"{t} {n}" for t, n in counts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
