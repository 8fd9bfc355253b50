"""Storage backends by name.

A backend turns a workspace folder and its settings into the ports of ``core.storage.ports``: a
record store per reader/writer (``open_records``: a new connection or session each call), the
vector index, the LLM cache store, the annotation store, and the writer lock. ``"sqlite"`` (the
SQLite file + embedded or server ChromaDB of ``core.storage.sqlite_backend``) is registered here;
another backend registers its factory with ``register_backend`` and is chosen by name or by a URL
whose scheme is that name (``postgresql://…`` → ``"postgresql"``). ``docs/storage.md`` walks through adding one.
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Callable, Protocol

from core.errors import SettingsError
from core.storage.ports import AnnotationStore, LLMCacheStore, RecordStore, VectorIndex

DEFAULT_BACKEND = "sqlite"
_ALIASES = {"postgres": "postgresql", "sqlite3": "sqlite"}


class StorageBackend(Protocol):
    """What a workspace needs from a backend."""

    name: str

    def open_records(self) -> RecordStore:
        """A new record store (its own connection: one per thread, one for the writer)."""

    def open_vectors(self, namespace: str) -> VectorIndex: ...

    def open_llm_cache(self) -> LLMCacheStore: ...

    def open_annotations(self) -> AnnotationStore:
        """The analyst annotations (private connections: never inside the writer's unit of work)."""

    def writer_lock(self, wait: bool, timeout_s: float) -> AbstractContextManager[None]:
        """Exclusive writer access; raises ``core.errors.WorkspaceBusyError`` when held elsewhere."""

    def writer_active(self) -> bool: ...

    def clear_stale_lock(self) -> bool: ...

    def describe(self) -> str:
        """Where the records are, for people (no password): Settings shows it read-only."""


BackendFactory = Callable[[Path, Any, str], StorageBackend]  # (folder, settings, spec) -> backend
_BACKENDS: dict[str, BackendFactory] = {}


def register_backend(name: str, factory: BackendFactory) -> None:
    """Make ``name`` selectable (a later registration of the same name replaces the earlier one)."""
    _BACKENDS[name] = factory


def backend_names() -> list[str]:
    return sorted(_BACKENDS)


def backend_name(spec: str) -> str:
    """The backend a store spec selects: ``""`` → sqlite, ``name`` or ``name://…`` → name."""
    spec = (spec or "").strip()
    name = spec.split("://", 1)[0].split("+", 1)[0].lower() if spec else DEFAULT_BACKEND
    return _ALIASES.get(name, name)


def open_backend(spec: str, folder: Path, settings: Any) -> StorageBackend:
    """The backend of ``spec`` for ``folder``; a clear error names the registered ones otherwise."""
    name = backend_name(spec)
    factory = _BACKENDS.get(name)
    if factory is None:
        raise SettingsError(f"no storage backend named '{name}' (from store {spec!r}); registered: "
                            f"{', '.join(backend_names())}")
    return factory(folder, settings, spec)


def _sqlite(folder: Path, settings: Any, spec: str) -> StorageBackend:
    from core.storage.sqlite_backend import SqliteBackend

    return SqliteBackend(folder, settings)


register_backend("sqlite", _sqlite)


def _postgresql(folder: Path, settings: Any, spec: str) -> StorageBackend:
    from core.storage.postgres_backend import PostgresBackend  # psycopg is imported only when selected

    return PostgresBackend(folder, settings, spec)


register_backend("postgresql", _postgresql)
