"""The SQLite backend: the workspace folder's ``ragscope.sqlite3`` (system of record, WAL), ChromaDB
vectors (embedded in ``chroma/`` or a server) and the file writer lock (``core.storage.locking``)."""
from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from core.storage import locking
from core.storage.llm_cache import SqliteLLMCache
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

    def writer_lock(self, wait: bool, timeout_s: float) -> AbstractContextManager[None]:
        return locking.hold_writer_lock(self.folder, self.folder.name, wait, timeout_s)

    def writer_active(self) -> bool:
        return locking.writer_active(self.folder)

    def clear_stale_lock(self) -> bool:
        return locking.clear_stale_marker(self.folder)
