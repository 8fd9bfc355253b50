"""A workspace: a folder, its settings, the writer lock, the generation and the storage ports.

The ports come from a backend of ``core.storage.registry`` (``RAGSCOPE_STORE``; default "sqlite":
the SQLite system of record and the ChromaDB vectors in the folder). Every thread gets its own
record store (``Workspace.records``), so a reader never sees a writer's uncommitted or rolled-back
unit of work: with SQLite's WAL each read sees the last commit. Writers take the workspace lock
first (one writer at a time; a lock left by a dead process is released by the OS and its stale
marker cleared). Read views (``Workspace.views``: graph, vectors, orders, tree) are built lazily
per ``generation``, which every commit and every rollback of the index moves.
"""
from __future__ import annotations

import json
import os
import re
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional, cast

import networkx as nx

from core.config import default_workspace, load_settings
from core.cancellable import call_cancellable
from core.embeddings import Embedder, local_embedder
from core.onnx_embeddings import INT8_NAME
from core.errors import EmbedderMismatchError
from core.settings import Settings, save_settings
from core.storage.locking import LOCK_FILE, LOCK_INFO  # noqa: F401 - re-exported (tests, tools)
from core.storage.ports import AnnotationStore, LLMCacheStore, RecordStore, VectorIndex
from core.storage.registry import open_backend
from core.storage.sqlite_backend import DB_FILE  # noqa: F401 - re-exported
from core.storage.records import TreeNode
from core.storage.views import WorkspaceViews


def new_namespace(name: str) -> str:
    """A fresh prefix for a workspace's Chroma collections (unique per workspace, also on a shared server)."""
    return "ws_" + re.sub(r"[^A-Za-z0-9]", "_", name)[:40] + "_" + os.urandom(3).hex()


def embedder_identity(settings: Settings) -> str:
    """The name recorded in a workspace for the configured embedder (known without loading it)."""
    if settings.embedder == "openai":
        return f"openai:{settings.embedding_model}"
    if settings.embedder == "local-minilm-int8":
        return INT8_NAME
    return "all-MiniLM-L6-v2"


def local_kind(name: str) -> str:
    """The ``embedder`` setting that builds the local model recorded as ``name`` ('' if none does)."""
    return {"all-MiniLM-L6-v2": "local-minilm", INT8_NAME: "local-minilm-int8"}.get(name, "")


def follows_recorded(settings: Settings, recorded: str) -> bool:
    """Does a workspace that recorded the local model ``recorded`` use it instead of the settings' embedder?
    Yes when both are local models and ``embedder`` was not chosen (the default, or a settings file without
    it): a workspace built by the torch model before int8 became the default keeps it, with no refusal and
    no silent switch. A chosen one (a flag, the Settings page, a file naming it) is checked, and refused when
    it differs (``python -m core repair --reembed`` converts)."""
    return (bool(local_kind(recorded)) and settings.embedder != "openai"
            and "embedder" not in settings.model_fields_set)


def mismatch_message(name: str, recorded: str, wanted: str) -> str:
    """Why a workspace refuses an embedder, how to select its own again, and how to re-embed it."""
    if recorded.startswith("openai:"):
        back = (f"point at a server with that model again (--embedding-base-url URL --embedding-model "
                f"{recorded[len('openai:'):]}, RAGSCOPE_EMBEDDING_BASE_URL/_MODEL or Settings → embeddings)")
    elif local_kind(recorded):
        back = (f"select it again (Settings → embedder = {local_kind(recorded)}, or --embedder "
                f"{local_kind(recorded)}; no --embedding-* flags or RAGSCOPE_EMBEDDING_* variables)")
    else:
        back = f"open it with the embedder '{recorded}' again"
    return (f"workspace '{name}' was indexed with the embedder '{recorded}' but the settings select '{wanted}'. "
            f"Vectors of different embedders cannot be mixed: {back}, or re-embed every vector with the new "
            f"embedder: python -m core repair --reembed --workspace PATH (with the same embedder flags)")


class Workspace:
    """Open (or create) the workspace folder ``path``."""

    def __init__(self, path: Path | str | None = None, settings: Optional[Settings] = None,
                 embedder: Optional[Embedder] = None, api_key: Optional[str] = None,
                 check_embedder: bool = True, store: Optional[str] = None) -> None:
        self.path = Path(path if path is not None else default_workspace()).resolve()
        self.path.mkdir(parents=True, exist_ok=True)
        self.settings = settings if settings is not None else load_settings(self.path)
        self.api_key = api_key  # kept in memory only, never written
        self.backend = open_backend(store if store is not None else os.environ.get("RAGSCOPE_STORE", ""),
                                    self.path, self.settings)
        self._open_lock = threading.RLock()
        self._local = threading.local()  # this thread's record store and pinned views (one_generation)
        self._records: list[tuple[threading.Thread, RecordStore]] = []  # every thread's, to close them
        self.backend.clear_stale_lock()
        self._embedder = embedder
        self._vectors: Optional[VectorIndex] = None
        self._views: Optional[WorkspaceViews] = None
        self._annotations: Optional[AnnotationStore] = None
        self.records  # open (and create) the database now: a damaged file fails here
        if check_embedder:  # False only for `repair --reembed`, which replaces the vectors
            self._check_embedder_name()

    # --- identity / settings ----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.path.name

    def save_settings(self, settings: Settings) -> None:
        self.settings = settings
        save_settings(self.path, settings)

    # --- the record store of this thread -------------------------------------------------------
    @property
    def records(self) -> RecordStore:
        """This thread's record store (its own connection: it sees its own unit of work and, outside
        one, the last commit; never another thread's uncommitted writes)."""
        records = getattr(self._local, "records", None)
        if records is None:
            with self._open_lock:
                ended = [(t, r) for t, r in self._records if not t.is_alive()]
                for _, old in ended:  # threads that ended (Streamlit runs a thread per rerun)
                    old.close()
                self._records = [(t, r) for t, r in self._records if t.is_alive()]
                records = self._local.records = self.backend.open_records()
                self._records.append((threading.current_thread(), records))
        return records

    @property
    def store(self) -> RecordStore:
        """The older name of ``records`` (kept for ``ui``/``pages`` until they go through ``core.api``)."""
        return self.records

    def open_llm_cache(self) -> LLMCacheStore:
        """A cache store for the LLM wrappers (``core.llm.cache``), on its own connection."""
        return self.backend.open_llm_cache()

    @property
    def annotations(self) -> AnnotationStore:
        """The analyst annotations (their own short-lived connections: never in a unit of work)."""
        if self._annotations is None:
            self._annotations = self.backend.open_annotations()
        return self._annotations

    def _check_embedder_name(self) -> None:
        recorded = self.records.get_meta("embedder_name")
        if recorded and self._embedder is None and follows_recorded(self.settings, recorded):
            self.settings = self.settings.with_overrides({"embedder": local_kind(recorded)})
        wanted = self._embedder.name if self._embedder is not None else embedder_identity(self.settings)
        if recorded and recorded != wanted:
            raise EmbedderMismatchError(mismatch_message(self.name, recorded, wanted))

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            if self.settings.embedder == "openai":
                from core.remote_embeddings import remote_embedder

                recorded = self.records.get_meta("embedder_dim")
                self._embedder = remote_embedder(self.settings, self.api_key,
                                                 expected_dim=int(recorded) if recorded else None)
            else:  # a local model: an indexing run's Cancel is honoured while it loads (core.cancellable)
                self._embedder = call_cancellable(self._load_local_embedder, "loading the embedding model")
        for_key = getattr(self._embedder, "for_key", None)  # a server client: send this caller's key only
        return for_key(self.api_key) if for_key is not None else self._embedder

    def _load_local_embedder(self) -> Embedder:
        if self.settings.embedder == "local-minilm-int8":
            from core.onnx_embeddings import int8_embedder

            return int8_embedder(self.settings.embedding_batch_size)
        return local_embedder(self.settings.embedding_batch_size)

    @property
    def loaded_embedder(self) -> Optional[Embedder]:
        """The embedder if it was already built (None: nothing needed it yet); never loads it."""
        return self._embedder

    def record_embedder(self) -> None:
        """Record the embedder on first write; refuse a dimension mismatch."""
        embedder = self.embedder
        records = self.records
        dim = records.get_meta("embedder_dim")
        if dim and int(dim) != embedder.dim:
            raise EmbedderMismatchError(
                f"workspace '{self.name}' holds {dim}-d vectors but the embedder '{embedder.name}' gives "
                f"{embedder.dim}-d vectors; select the embedder it was built with, or re-embed it: "
                f"python -m core repair --reembed --workspace PATH")
        if not dim:
            records.set_meta("embedder_name", embedder.name)
            records.set_meta("embedder_dim", str(embedder.dim))
            records.commit()

    @property
    def vectors(self) -> VectorIndex:
        with self._open_lock:  # several retrieval threads may ask for the client at once
            return self._open_vectors()

    def _open_vectors(self) -> VectorIndex:
        if self._vectors is None:
            records = self.records
            namespace = records.get_meta("namespace")
            if not namespace:
                namespace = new_namespace(self.name)
                records.set_meta("namespace", namespace)
                records.commit()
            self._vectors = self.backend.open_vectors(namespace)
        return self._vectors

    def reopen_vectors(self) -> None:
        """Open the vector store afresh on next use (and drop the views): an embedded ChromaDB
        store opened earlier does not see vectors another process added since."""
        with self._open_lock:
            old, self._vectors = self._vectors, None
            self._views = None
        if old is not None:
            old.forget_embedded_system()

    def store_description(self) -> str:
        """Which store holds this workspace (backend, where; no password) and where its vectors are."""
        vectors = (f"a ChromaDB server at {self.settings.chroma_url}" if self.settings.chroma_url
                   else "ChromaDB in the workspace folder")
        return f"{self.backend.name}: {self.backend.describe()}; vectors: {vectors}"

    def writer_active(self) -> bool:
        """True while a live process holds the write lock (a dead holder's marker is cleared)."""
        return self.backend.writer_active()

    def use_namespace(self, namespace: str) -> None:
        """Point the vectors at another set of collections (``core.indexing.reembed`` fills new ones, then switches)."""
        with self._open_lock:
            self._vectors = self.backend.open_vectors(namespace)
            self._views = None

    # --- locking ---------------------------------------------------------------------------
    @contextmanager
    def writer(self, wait: bool = False, timeout_s: float = 3600.0) -> Iterator[None]:
        """Hold the workspace write lock; raise WorkspaceBusyError (or wait) when another writer holds it.
        A marker left by a dead holder (same host, process gone) is cleared, not believed."""
        self.backend.clear_stale_lock()
        with self.backend.writer_lock(wait, timeout_s):
            yield

    # --- generation and views ---------------------------------------------------------------
    def generation(self) -> int:
        return int(self.records.get_meta("generation", "0"))

    def bump_generation(self) -> None:
        self.records.set_meta("generation", str(self.generation() + 1))

    @property
    def views(self) -> WorkspaceViews:
        """The read views of the generation this thread sees. Inside a unit of work (the writer,
        before its commit) they are private to the call and never cached. Inside ``one_generation``
        they are the views that block pinned (no read of the generation)."""
        records = self.records
        pinned = getattr(self._local, "views", None)
        if pinned is not None and not records.in_unit_of_work():
            return pinned
        generation = int(records.get_meta("generation", "0"))
        if records.in_unit_of_work():
            return WorkspaceViews(generation, lambda: records, lambda: self.vectors, self)
        views = self._views
        if views is None or views.generation != generation:
            with self._open_lock:
                views = self._views
                if views is None or views.generation != generation:
                    views = self._views = WorkspaceViews(generation, lambda: self.records, lambda: self.vectors, self)
        return views

    @contextmanager
    def one_generation(self) -> Iterator[WorkspaceViews]:
        """Pin this thread's read views for the block: the generation is read once on entry and every
        ``views`` inside returns that generation's views (one question reads one generation, however many
        times its parts ask; a commit by another session is seen from the next block on). A nested block
        keeps the outer pin; a unit of work, when one is open, keeps its private views."""
        if getattr(self._local, "views", None) is not None or self.records.in_unit_of_work():
            yield self.views
            return
        views = self._local.views = self.views
        try:
            yield views
        finally:
            self._local.views = None

    def knowledge_graph(self) -> nx.Graph:
        """The merged graph as networkx, for layouts and exports (retrieval reads ``views.graph``)."""
        return self.views.graph.networkx()

    def mention_graph(self) -> nx.Graph:
        return self.views.mention_graph

    def mention_index(self) -> dict[str, dict[str, int]]:
        return self.views.mention_index

    def chunk_order(self) -> dict[str, int]:
        return self.views.chunk_order

    def doc_names(self) -> dict[str, str]:
        return self.views.doc_names

    def tree_index(self) -> dict[str, TreeNode]:
        return self.views.tree_index

    # --- reports ----------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        s = self.records
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
        kind ('local-minilm', 'local-minilm-int8', 'openai' or 'custom'), model, dimension (None before the
        first write), base_url."""
        name = self.records.get_meta("embedder_name") or embedder_identity(self.settings)
        dim = self.records.get_meta("embedder_dim")
        kind = "openai" if name.startswith("openai:") else local_kind(name) or "custom"
        return {"kind": kind, "model": name.split(":", 1)[1] if kind == "openai" else name,
                "dimension": int(dim) if dim else None,
                "base_url": self.settings.embedding_base_url if kind == "openai" else ""}

    def dropped_records(self) -> dict[str, dict[str, Any]]:
        """Per indexed document, what the extraction parser dropped at its last indexing: ``dropped``
        (count), ``reasons`` {reason: count}, a few ``examples``, ``extractor`` and ``chunks``."""
        latest: dict[str, dict[str, Any]] = {}
        for detail in self.records.log_details("extraction_dropped"):
            try:
                record = json.loads(detail)
                latest[str(record["doc_id"])] = record
            except (ValueError, KeyError, TypeError):
                continue
        live = {d.doc_id for d in self.records.documents("processed")}
        return {doc_id: record for doc_id, record in latest.items() if doc_id in live}

    def llm_usage(self) -> dict[str, dict[str, float]]:
        rows = self.records.llm_usage_rows()
        return {r[0]: {"calls": r[1], "cached": r[2], "prompt_tokens": r[3], "completion_tokens": r[4],
                       "seconds": round(r[5], 3)} for r in rows}

    def documents_table(self) -> list[dict[str, Any]]:
        chunk_counts, entity_counts = self.records.chunks_per_document(), self.records.entities_per_document()
        dropped = self.dropped_records()
        return [
            {"doc_id": d.doc_id, "name": d.name, "status": d.status, "chunks": int(chunk_counts.get(d.doc_id, 0)),
             "entities": int(entity_counts.get(d.doc_id, 0)),
             "dropped": int(dropped[d.doc_id]["dropped"]) if d.doc_id in dropped else 0,
             "tokens": d.tokens, "error": d.error,
             "seconds": round(d.elapsed_s, 2), "updated_at": d.updated_at}
            for d in self.records.documents()
        ]

    def close(self) -> None:
        if getattr(self._embedder, "remote", False):  # a server client of this workspace: its request threads
            cast(Any, self._embedder).close()
        with self._open_lock:
            stores, self._records = [r for _, r in self._records], []
            self._local = threading.local()
        for records in stores:
            records.close()
        close_backend = getattr(self.backend, "close", None)  # a backend's own connections (PostgreSQL)
        if close_backend is not None:
            close_backend()
