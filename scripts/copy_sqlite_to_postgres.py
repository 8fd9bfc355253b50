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

from core.storage.postgres_connection import connect  # noqa: E402
from core.storage.postgres_schema import TABLES  # noqa: E402
from core.storage.sqlite_backend import DB_FILE  # noqa: E402

SKIP = {"ragscope_schema"}  # PostgreSQL's own migration record


def copy(folder: Path, dsn: str) -> dict[str, int]:
    """Copy every table of ``folder``'s SQLite file into ``dsn``; returns the rows copied per table."""
    source = sqlite3.connect(f"file:{folder / DB_FILE}?mode=ro", uri=True)
    target = connect(dsn, "ragscope copy")
    counts: dict[str, int] = {}
    try:
        if target.execute("SELECT count(*) FROM documents").fetchone()[0]:
            raise SystemExit(f"the PostgreSQL store {dsn} already holds documents: copy into an empty one")
        target.execute("BEGIN")
        for table, (columns, _key) in TABLES.items():
            if table in SKIP:
                continue
            rows = source.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
            target.execute(f"DELETE FROM {table}")  # the rows a fresh store starts with (meta: schema_version)
            target.executemany(f"INSERT INTO {table}({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                               rows)
            counts[table] = len(rows)
        if "run_log" in TABLES:  # the identity column continues after the copied ids
            target.execute("SELECT setval(pg_get_serial_sequence('run_log', 'id'), "
                           "(SELECT coalesce(max(id), 0) + 1 FROM run_log), false)")
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
