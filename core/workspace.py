"""A workspace: one folder holding the SQLite system of record, the ChromaDB vectors and settings.

Readers open it freely (SQLite WAL); writers take the workspace lock first (one writer at a time;
a lock left by a dead process is released by the OS). Graph views are loaded lazily from SQLite
and cached until the workspace's ``generation`` (bumped by every write) changes.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

import networkx as nx
from filelock import FileLock, Timeout

from core.embeddings import Embedder, local_embedder
from core.errors import EmbedderMismatchError, WorkspaceBusyError
from core.config import default_workspace, load_settings
from core.settings import Settings, save_settings
from core.storage import graph_store
from core.storage.store import Store
from core.storage.vectors import VectorStore

DB_FILE = "ragscope.sqlite3"
LOCK_FILE = "write.lock"
LOCK_INFO = "write.lock.json"


def new_namespace(name: str) -> str:
    """A fresh prefix for a workspace's Chroma collections (unique per workspace, also on a shared server)."""
    return "ws_" + re.sub(r"[^A-Za-z0-9]", "_", name)[:40] + "_" + os.urandom(3).hex()


def embedder_identity(settings: Settings) -> str:
    """The name recorded in a workspace for the configured embedder (known without loading it)."""
    if settings.embedder == "openai":
        return f"openai:{settings.embedding_model}"
    return "all-MiniLM-L6-v2"


def mismatch_message(name: str, recorded: str, wanted: str) -> str:
    """Why a workspace refuses an embedder, how to select its own again, and how to re-embed it."""
    if recorded.startswith("openai:"):
        back = (f"point at a server with that model again (--embedding-base-url URL --embedding-model "
                f"{recorded[len('openai:'):]}, RAGSCOPE_EMBEDDING_BASE_URL/_MODEL or Settings → embeddings)")
    elif recorded == "all-MiniLM-L6-v2":
        back = ("select the local MiniLM again (Settings → embedder = local-minilm; no --embedding-* flags or "
                "RAGSCOPE_EMBEDDING_* variables)")
    else:
        back = f"open it with the embedder '{recorded}' again"
    return (f"workspace '{name}' was indexed with the embedder '{recorded}' but the settings select '{wanted}'. "
            f"Vectors of different embedders cannot be mixed: {back}, or re-embed every vector with the new "
            f"embedder: python -m core repair --reembed --workspace PATH (with the same embedder flags)")


class Workspace:
    """Open (or create) the workspace folder ``path``."""

    def __init__(self, path: Path | str | None = None, settings: Optional[Settings] = None,
                 embedder: Optional[Embedder] = None, api_key: Optional[str] = None,
                 check_embedder: bool = True) -> None:
        self.path = Path(path if path is not None else default_workspace()).resolve()
        self.path.mkdir(parents=True, exist_ok=True)
        self.settings = settings if settings is not None else load_settings(self.path)
        self.api_key = api_key  # kept in memory only, never written
        self.store = Store(self.path / DB_FILE)
        self._embedder = embedder
        self._vectors: Optional[VectorStore] = None
        self._open_lock = threading.RLock()
        self._cache: dict[str, Any] = {}
        self._cache_generation = -1
        if check_embedder:  # False only for `repair --reembed`, which replaces the vectors
            self._check_embedder_name()

    # --- identity / settings ----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.path.name

    def save_settings(self, settings: Settings) -> None:
        self.settings = settings
        save_settings(self.path, settings)

    def _check_embedder_name(self) -> None:
        recorded = self.store.get_meta("embedder_name")
        wanted = self._embedder.name if self._embedder is not None else embedder_identity(self.settings)
        if recorded and recorded != wanted:
            raise EmbedderMismatchError(mismatch_message(self.name, recorded, wanted))

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            if self.settings.embedder == "openai":
                from core.remote_embeddings import remote_embedder

                recorded = self.store.get_meta("embedder_dim")
                self._embedder = remote_embedder(self.settings, self.api_key,
                                                 expected_dim=int(recorded) if recorded else None)
            else:
                self._embedder = local_embedder(self.settings.embedding_batch_size)
        for_key = getattr(self._embedder, "for_key", None)  # a server client: send this caller's key only
        return for_key(self.api_key) if for_key is not None else self._embedder

    @property
    def loaded_embedder(self) -> Optional[Embedder]:
        """The embedder if it was already built (None: nothing needed it yet); never loads it."""
        return self._embedder

    def record_embedder(self) -> None:
        """Record the embedder on first write; refuse a dimension mismatch."""
        embedder = self.embedder
        dim = self.store.get_meta("embedder_dim")
        if dim and int(dim) != embedder.dim:
            raise EmbedderMismatchError(
                f"workspace '{self.name}' holds {dim}-d vectors but the embedder '{embedder.name}' gives "
                f"{embedder.dim}-d vectors; select the embedder it was built with, or re-embed it: "
                f"python -m core repair --reembed --workspace PATH")
        if not dim:
            self.store.set_meta("embedder_name", embedder.name)
            self.store.set_meta("embedder_dim", str(embedder.dim))
            self.store.conn.commit()

    @property
    def vectors(self) -> VectorStore:
        with self._open_lock:  # several retrieval threads may ask for the client at once
            return self._open_vectors()

    def _open_vectors(self) -> VectorStore:
        if self._vectors is None:
            namespace = self.store.get_meta("namespace")
            if not namespace:
                namespace = new_namespace(self.name)
                self.store.set_meta("namespace", namespace)
                self.store.conn.commit()
            self._vectors = VectorStore(self.path / "chroma", namespace, self.settings.chroma_url)
        return self._vectors

    def reopen_vectors(self) -> None:
        """Open the vector store afresh on next use (and drop the generation-cached views): an
        embedded ChromaDB store opened earlier does not see vectors another process added since."""
        with self._open_lock:
            old, self._vectors = self._vectors, None
            self._cache.clear()
            self._cache_generation = -1
        if old is not None:
            old.forget_embedded_system()

    def writer_active(self) -> bool:
        """True while some process holds the write lock (its info file exists)."""
        return (self.path / LOCK_INFO).exists()

    def use_namespace(self, namespace: str) -> None:
        """Point the vectors at another set of collections (``core.indexing.reembed`` fills new ones, then switches)."""
        with self._open_lock:
            self._vectors = VectorStore(self.path / "chroma", namespace, self.settings.chroma_url)

    # --- locking ---------------------------------------------------------------------------
    @contextmanager
    def writer(self, wait: bool = False, timeout_s: float = 3600.0) -> Iterator[None]:
        """Hold the workspace write lock; raise WorkspaceBusyError (or wait) when another writer holds it."""
        lock = FileLock(str(self.path / LOCK_FILE))
        try:
            lock.acquire(timeout=timeout_s if wait else 0)
        except Timeout:
            raise WorkspaceBusyError(self._busy_message()) from None
        info = self.path / LOCK_INFO
        try:
            info.write_text(json.dumps({"pid": os.getpid(), "since": time.time()}), encoding="utf-8")
            yield
        finally:
            info.unlink(missing_ok=True)
            lock.release()

    def _busy_message(self) -> str:
        try:
            info = json.loads((self.path / LOCK_INFO).read_text(encoding="utf-8"))
            since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info["since"]))
            return f"workspace busy (pid {info['pid']}, since {since}): another indexing run is writing to '{self.name}'"
        except (OSError, ValueError, KeyError):
            return f"workspace busy: another process is writing to '{self.name}'"

    # --- generation-cached views -------------------------------------------------------------
    def generation(self) -> int:
        return int(self.store.get_meta("generation", "0"))

    def bump_generation(self) -> None:
        self.store.set_meta("generation", str(self.generation() + 1))

    def _cached(self, key: str, build):
        generation = self.generation()
        if generation != self._cache_generation:
            self._cache.clear()
            self._cache_generation = generation
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def knowledge_graph(self) -> nx.Graph:
        return self._cached("kg", lambda: graph_store.load_knowledge_graph(self.store.conn))

    def mention_graph(self) -> nx.Graph:
        return self._cached("mg", lambda: graph_store.load_mention_graph(self.store.conn))

    def mention_index(self) -> dict[str, dict[str, int]]:
        return self._cached("mi", lambda: graph_store.load_mention_index(self.store.conn))

    def chunk_order(self) -> dict[str, int]:
        return self._cached("order", lambda: {cid: i for i, cid in enumerate(self.store.all_chunk_ids())})

    def doc_names(self) -> dict[str, str]:
        return self._cached("names", lambda: {d.doc_id: d.name for d in self.store.documents()})

    def entity_vectors(self) -> Any:
        """Entity vectors in memory with ``row_of_key`` (entity key → row), cached per generation."""
        def build() -> Any:
            matrix = self.vectors.matrix("entities")
            matrix.row_of_key = matrix.by_meta("key")
            return matrix
        return self._cached("entity_vectors", build)

    def relation_vectors(self) -> Any:
        """Relation vectors in memory with ``row_of_pair`` ((source key, target key) → row)."""
        def build() -> Any:
            matrix = self.vectors.matrix("relations")
            matrix.row_of_pair = matrix.by_meta("source", "target")
            return matrix
        return self._cached("relation_vectors", build)

    def chunk_vectors(self) -> Any:
        """Chunk vectors in memory (row by chunk id), cached per generation."""
        return self._cached("chunk_vectors", lambda: self.vectors.matrix("chunks"))

    def vector_matrix(self, collection: str) -> Any:
        """The in-memory vectors of one collection ("chunks", "entities", "relations", "tree"), cached per
        generation (the same matrices entity linking and chunk ranking use)."""
        if collection == "entities":
            return self.entity_vectors()
        if collection == "relations":
            return self.relation_vectors()
        if collection == "chunks":
            return self.chunk_vectors()
        return self._cached(f"{collection}_vectors", lambda: self.vectors.matrix(collection))

    def tree_index(self) -> dict[str, Any]:
        return self._cached("tree", lambda: {n.node_id: n for n in self.store.tree_nodes()})

    # --- reports ----------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        s = self.store
        counts = s.status_counts()
        return {
            "workspace": str(self.path),
            "documents": s.count("documents"),
            "processed": int(counts.get("processed", 0)),
            "failed": int(counts.get("failed", 0)),
            "pending": int(counts.get("pending", 0)) + int(counts.get("processing", 0)),
            "chunks": s.count("chunks"),
            "entities": s.count("entities"),
            "relations": s.count("relations"),
            "mention_nodes": s.mention_node_count(),
            "mention_edges": s.count("mention_edges"),
            "tree_nodes": s.count("tree_nodes"),
            "tokens": s.total_tokens(),
            "embedder": self.embedder_info(),
            "extractor": s.get_meta("extractor") or "spacy",
            "dropped_records": sum(r["dropped"] for r in self.dropped_records().values()),
            "llm_usage": self.llm_usage(),
        }

    def embedder_info(self) -> dict[str, Any]:
        """The workspace's embedder (recorded at the first write, else the configured one) without loading it:
        kind ('local-minilm', 'openai' or 'custom'), model, dimension (None before the first write), base_url."""
        name = self.store.get_meta("embedder_name") or embedder_identity(self.settings)
        dim = self.store.get_meta("embedder_dim")
        kind = "openai" if name.startswith("openai:") else "local-minilm" if name == "all-MiniLM-L6-v2" else "custom"
        return {"kind": kind, "model": name.split(":", 1)[1] if kind == "openai" else name,
                "dimension": int(dim) if dim else None,
                "base_url": self.settings.embedding_base_url if kind == "openai" else ""}

    def dropped_records(self) -> dict[str, dict[str, Any]]:
        """Per indexed document, what the extraction parser dropped at its last indexing: ``dropped``
        (count), ``reasons`` {reason: count}, a few ``examples``, ``extractor`` and ``chunks``."""
        latest: dict[str, dict[str, Any]] = {}
        for detail in self.store.log_details("extraction_dropped"):
            try:
                record = json.loads(detail)
                latest[str(record["doc_id"])] = record
            except (ValueError, KeyError, TypeError):
                continue
        live = {d.doc_id for d in self.store.documents("processed")}
        return {doc_id: record for doc_id, record in latest.items() if doc_id in live}

    def llm_usage(self) -> dict[str, dict[str, float]]:
        rows = self.store.llm_usage_rows()
        return {r[0]: {"calls": r[1], "cached": r[2], "prompt_tokens": r[3], "completion_tokens": r[4],
                       "seconds": round(r[5], 3)} for r in rows}

    def documents_table(self) -> list[dict[str, Any]]:
        chunk_counts, entity_counts = self.store.chunks_per_document(), self.store.entities_per_document()
        dropped = self.dropped_records()
        return [
            {"doc_id": d.doc_id, "name": d.name, "status": d.status, "chunks": int(chunk_counts.get(d.doc_id, 0)),
             "entities": int(entity_counts.get(d.doc_id, 0)),
             "dropped": int(dropped[d.doc_id]["dropped"]) if d.doc_id in dropped else 0,
             "tokens": d.tokens, "error": d.error,
             "seconds": round(d.elapsed_s, 2), "updated_at": d.updated_at}
            for d in self.store.documents()
        ]

    def close(self) -> None:
        if getattr(self._embedder, "remote", False):  # a server client of this workspace: its request threads
            self._embedder.close()
        self.store.close()
