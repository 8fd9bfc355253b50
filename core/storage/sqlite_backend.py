"""The SQLite backend: the workspace folder's ``ragscope.sqlite3`` (system of record, WAL), ChromaDB
vectors (embedded in ``chroma/`` or a server) and the file writer lock (``core.storage.locking``)."""
from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Optional

from sqlalchemy.exc import OperationalError

from core.storage import locking, schema
from core.storage.annotations import SqlAnnotationStore
from core.storage.llm_cache import SqliteLLMCache
from core.storage.sqlite_connection import SqliteConnection, connect, sqlite_engine
from core.storage.store import SqlRecordStore
from core.storage.vectors import VectorStore

DB_FILE = "ragscope.sqlite3"


class SqliteStore(SqlRecordStore):
    """The record store on the SQLite file ``path`` (its own connection, schema created on first open).

    Meta rows are read once and then served from memory for as long as the database is unchanged:
    ``Workspace.views`` checks the ``generation`` row on every use (a dozen times per question), which
    would otherwise cost a statement each. The check that nothing changed is SQLite's own —
    ``PRAGMA data_version`` moves when another connection commits, ``total_changes`` when this one
    writes — asked of the driver directly (a few microseconds); inside a transaction every read goes
    to the database."""

    db: SqliteConnection

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        super().__init__(connect(self.path))
        self._meta: dict[str, Optional[str]] = {}
        self._meta_seen: tuple[int, int] = (-1, -1)

    def _read_meta(self, key: str) -> Optional[str]:
        driver = self.db.driver
        if driver.in_transaction:
            return super()._read_meta(key)
        seen = (int(driver.execute("PRAGMA data_version").fetchone()[0]), driver.total_changes)
        if seen != self._meta_seen:
            self._meta, self._meta_seen = {}, seen
        if key not in self._meta:
            self._meta[key] = super()._read_meta(key)
        return self._meta[key]

    @property
    def conn(self) -> sqlite3.Connection:
        """The ``sqlite3`` connection under the store (for tests and tools that read the file directly)."""
        return self.db.driver


class SqliteBackend:
    """Ports of one workspace folder."""

    name = "sqlite"

    def __init__(self, folder: Path, settings: Any) -> None:
        self.folder = Path(folder)
        self.settings = settings
        self.engine = sqlite_engine(self.database)  # kept while the backend lives: one statement cache

    @property
    def database(self) -> Path:
        return self.folder / DB_FILE

    def open_records(self) -> SqliteStore:
        return SqliteStore(self.database)

    def open_vectors(self, namespace: str) -> VectorStore:
        return VectorStore(self.folder / "chroma", namespace, self.settings.chroma_url)

    def open_llm_cache(self) -> SqliteLLMCache:
        return SqliteLLMCache(self.database)

    def open_annotations(self) -> SqlAnnotationStore:
        """Annotations on a private connection per call (never the writer's, never inside its batch)."""
        return SqlAnnotationStore(lambda: SqliteConnection(self.engine),
                                  lambda conn: schema.create_or_upgrade(conn.sql, schema.ANNOTATION_TABLES),
                                  (OperationalError,))

    def writer_lock(self, wait: bool, timeout_s: float) -> AbstractContextManager[None]:
        return locking.hold_writer_lock(self.folder, self.folder.name, wait, timeout_s)

    def writer_active(self) -> bool:
        return locking.writer_active(self.folder)

    def clear_stale_lock(self) -> bool:
        return locking.clear_stale_marker(self.folder)

    def describe(self) -> str:
        """What Settings shows (read-only): where the records are."""
        return f"the SQLite file {DB_FILE} in the workspace folder"
