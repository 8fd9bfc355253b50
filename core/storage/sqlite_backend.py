"""The SQLite backend: the workspace folder's ``ragscope.sqlite3`` (system of record, WAL), ChromaDB
vectors (embedded in ``chroma/`` or a server) and the file writer lock (``core.storage.locking``)."""
from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from core.storage import locking
from core.storage.annotations import SqlAnnotationStore
from core.storage.llm_cache import SqliteLLMCache
from core.storage.schema import ANNOTATION_SCHEMA
from core.storage.store import Store
from core.storage.vectors import VectorStore

DB_FILE = "ragscope.sqlite3"


class SqliteBackend:
    """Ports of one workspace folder."""

    name = "sqlite"

    def __init__(self, folder: Path, settings: Any) -> None:
        self.folder = Path(folder)
        self.settings = settings

    @property
    def database(self) -> Path:
        return self.folder / DB_FILE

    def open_records(self) -> Store:
        return Store(self.database)

    def open_vectors(self, namespace: str) -> VectorStore:
        return VectorStore(self.folder / "chroma", namespace, self.settings.chroma_url)

    def open_llm_cache(self) -> SqliteLLMCache:
        return SqliteLLMCache(self.database)

    def open_annotations(self) -> SqlAnnotationStore:
        """Annotations on a private connection per call (never the writer's, never inside its batch)."""
        return SqlAnnotationStore(self._private_connection, lambda conn: conn.executescript(ANNOTATION_SCHEMA),
                                  (sqlite3.OperationalError,))

    def _private_connection(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.database), timeout=30)
        conn.execute("PRAGMA busy_timeout=30000")
        return conn

    def writer_lock(self, wait: bool, timeout_s: float) -> AbstractContextManager[None]:
        return locking.hold_writer_lock(self.folder, self.folder.name, wait, timeout_s)

    def writer_active(self) -> bool:
        return locking.writer_active(self.folder)

    def clear_stale_lock(self) -> bool:
        return locking.clear_stale_marker(self.folder)

    def describe(self) -> str:
        """What Settings shows (read-only): where the records are."""
        return f"the SQLite file {DB_FILE} in the workspace folder"
