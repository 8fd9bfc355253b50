"""ChromaDB vector collections of a workspace (derived data: ids are content hashes, upserts idempotent).

Embedded ``PersistentClient`` in ``<workspace>/chroma`` by default, or an ``HttpClient`` to a server
started with ``chroma run``. Embeddings are always passed explicitly (no Chroma embedding function).

Embedded clients are opened one at a time in this process (``_EMBEDDED_OPEN``): ChromaDB registers a
folder's shared system before starting it, without a lock, so a second session opening the same folder
at that moment got the unstarted system ("'RustBindingsAPI' object has no attribute 'bindings'") and, on
that error, released it — stopping the system under the first session's client too (issue 38: a reader
failed while an editor's Undo opened the store).
"""
from __future__ import annotations

import threading

from pathlib import Path
from typing import Any, Iterable, Sequence, cast
from urllib.parse import urlparse

import numpy as np

from core.storage.records import VectorHit
from core.storage.vector_search import WINDOW_OVERFETCH, MatrixSearch, VectorMatrix, window_chunk

COLLECTIONS = ("chunks", "entities", "relations", "tree")
UPSERT_BATCH = 2000
_EMBEDDED_OPEN = threading.Lock()  # one embedded client created (and one folder forgotten) at a time


class VectorStore:
    """The four collections of one workspace; cosine space."""

    def __init__(self, path: Path, namespace: str, chroma_url: str = "") -> None:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        if chroma_url:
            parsed = urlparse(chroma_url)
            if not parsed.hostname or not parsed.port:
                raise ValueError(f"chroma_url must look like http://HOST:PORT, got {chroma_url!r}")
            try:
                self.client = chromadb.HttpClient(host=parsed.hostname, port=parsed.port, settings=settings)
            except ValueError as exc:  # chromadb: "Could not connect to a Chroma server. Are you sure it is running?"
                raise ValueError(
                    f"no ChromaDB server answers at {chroma_url} ({exc}); start one with `chroma run --path DIR "
                    f"--host {parsed.hostname} --port {parsed.port}`, or clear chroma_url / RAGSCOPE_CHROMA_URL "
                    f"to use the embedded store") from exc
            self._collections = self._open_collections(namespace)
        else:
            with _EMBEDDED_OPEN:
                self.client = chromadb.PersistentClient(path=str(path), settings=settings)
                self._collections = self._open_collections(namespace)
        self.persist_path = None if chroma_url else self.client.get_settings().persist_directory
        self.namespace = namespace

    def _open_collections(self, namespace: str) -> dict[str, Any]:
        return {name: self.client.get_or_create_collection(f"{namespace}_{name}", embedding_function=None,
                                                           metadata={"hnsw:space": "cosine"})
                for name in COLLECTIONS}

    def collection(self, name: str):
        return self._collections[name]

    def forget_embedded_system(self) -> None:
        """Make the next embedded client on this folder start a fresh ChromaDB system.

        Chroma shares one in-process system per folder and keeps its index in memory, so it never
        sees vectors another process (e.g. the CLI) added later. The old system is left to whoever
        still holds it (not stopped: a reader may be using it); only the per-folder registry entry
        is dropped. A server client needs nothing (the server is always current)."""
        if self.persist_path is None:
            return
        from chromadb.api.shared_system_client import SharedSystemClient

        with _EMBEDDED_OPEN, SharedSystemClient._refcount_lock:
            SharedSystemClient._identifier_to_system.pop(self.persist_path, None)
            SharedSystemClient._identifier_to_refcount.pop(self.persist_path, None)

    def upsert(self, name: str, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]) -> None:
        coll = self._collections[name]
        for start in range(0, len(ids), UPSERT_BATCH):
            end = start + UPSERT_BATCH
            coll.upsert(
                ids=list(ids[start:end]),
                embeddings=np.asarray(vectors[start:end], dtype=np.float32),
                metadatas=[_clean_meta(m) for m in metadatas[start:end]],
            )

    def delete(self, name: str, ids: Iterable[str]) -> None:
        ids = list(ids)
        coll = self._collections[name]
        for start in range(0, len(ids), UPSERT_BATCH):
            coll.delete(ids=ids[start : start + UPSERT_BATCH])

    def count(self, name: str) -> int:
        return self._collections[name].count()

    def all_ids(self, name: str) -> set[str]:
        coll = self._collections[name]
        ids: set[str] = set()
        total = coll.count()
        offset = 0
        while offset < total:
            page = coll.get(limit=5000, offset=offset, include=[])
            ids.update(page["ids"])
            if not page["ids"]:
                break
            offset += len(page["ids"])
        return ids

    def query(self, name: str, vector: np.ndarray, k: int, where: dict | None = None) -> list[VectorHit]:
        if k <= 0:
            return []
        # ChromaDB 1.x returns what it has when k exceeds the collection size (no count() first:
        # that costs ~4 ms a query on a large collection)
        result = self._collections[name].query(
            query_embeddings=np.asarray(vector, dtype=np.float32).reshape(1, -1),
            n_results=k,
            where=where,
            include=["metadatas", "distances"],
        )
        distances = cast(list[list[float]], result["distances"])  # included above
        metadatas = cast(list[list[Any]], result["metadatas"])  # included above
        hits = [
            VectorHit(id=i, score=float(1.0 - d), metadata=dict(m or {}))
            for i, d, m in zip(result["ids"][0], distances[0], metadatas[0])
        ]
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits

    def query_chunks(self, vector: np.ndarray, k: int) -> list[VectorHit]:
        """The top-k chunks, each scored by its best window (max-sim); one hit per chunk, whose id is
        the chunk id. Window hits are fetched with a margin and the fetch grows until k distinct chunks
        are found or the collection is exhausted."""
        if k <= 0:
            return []
        fetch = k * WINDOW_OVERFETCH
        while True:
            hits = self.query("chunks", vector, fetch)
            best: dict[str, VectorHit] = {}
            for hit in hits:
                chunk_id = window_chunk(hit.id, hit.metadata)
                if chunk_id not in best:
                    best[chunk_id] = VectorHit(chunk_id, hit.score, hit.metadata)
            if len(best) >= k or len(hits) < fetch:
                return sorted(best.values(), key=lambda h: (-h.score, h.id))[:k]
            fetch *= 2

    def delete_chunks(self, chunk_ids: Sequence[str]) -> None:
        """Delete every window vector of these chunks (workspaces from before windows hold one vector
        per chunk, under the chunk id)."""
        ids = list(chunk_ids)
        self.delete("chunks", ids)
        coll = self._collections["chunks"]
        for start in range(0, len(ids), UPSERT_BATCH):
            where: dict[str, Any] = {"chunk_id": {"$in": ids[start : start + UPSERT_BATCH]}}
            coll.delete(where=where)

    def get_vectors(self, name: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        got = self._collections[name].get(ids=list(ids), include=["embeddings"])
        return {i: np.asarray(v, dtype=np.float32) for i, v in zip(got["ids"], cast(Iterable[Any], got["embeddings"]))}  # included above

    def matrix(self, name: str) -> VectorMatrix:
        """Every vector of a collection in memory (ids, a unit-vector matrix, metadatas), for exact
        cosines of many candidates at once; the caller caches it per workspace generation."""
        coll = self._collections[name]
        ids: list[str] = []
        rows: list[np.ndarray] = []
        metas: list[dict[str, Any]] = []
        total = coll.count()
        offset = 0
        while offset < total:
            page = coll.get(limit=5000, offset=offset, include=["embeddings", "metadatas"])
            if not page["ids"]:
                break
            ids.extend(page["ids"])
            rows.append(np.asarray(page["embeddings"], dtype=np.float32))
            metas.extend(dict(m or {}) for m in cast(list[Any], page["metadatas"]))  # included above
            offset += len(page["ids"])
        dim = rows[0].shape[1] if rows else 0
        return VectorMatrix(ids, np.concatenate(rows) if rows else np.zeros((0, dim), dtype=np.float32), metas)

    def exact_search(self) -> MatrixSearch:
        """Exact (deterministic) search over this index's vectors, loaded into memory per collection
        on first use; the caller keeps it for one workspace generation."""
        return MatrixSearch(self.matrix)

    def drop_all(self) -> None:
        for name in COLLECTIONS:
            try:
                self.client.delete_collection(f"{self.namespace}_{name}")
            except Exception:  # noqa: BLE001 - a missing collection is fine
                pass


def _clean_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """Chroma metadata values must be scalars and non-empty dicts are required."""
    out = {k: v for k, v in meta.items() if isinstance(v, (str, int, float, bool))}
    return out or {"_": 0}
