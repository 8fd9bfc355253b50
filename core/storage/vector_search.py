"""The Chroma adapter's ``VectorSearch``: every vector of a collection loaded once per workspace
generation into a ``VectorMatrix`` (exact cosines by matrix products, deterministic), with the
key → row maps the callers look vectors up by. Nothing outside this adapter sees the matrices, rows
or maps. ``core.storage.vectors`` (the collections) loads the matrices; this module imports nothing
of it.

numpy's BLAS runs on one thread once a ``MatrixSearch`` exists (``one_blas_thread``): the searches are
products of a few thousand rows by a few vectors, where a second OpenBLAS thread adds a hand-off and a
spinning wait, not speed (a Compare click on dev_musique_full: 175 ms of process CPU with numpy's two
threads, 101 ms with one), and on one thread a product's float rounding no longer depends on how many
cores the machine has. ``RAGSCOPE_BLAS_THREADS`` sets another count; 0 leaves the library's own."""
from __future__ import annotations

import functools
import os
import threading
from typing import Any, Callable, Optional, Sequence

import numpy as np

from core.embeddings import chunk_of_window
from core.storage.coarse_search import CoarseIndex, wants_coarse
from core.storage.records import VectorHit

CLOSE_PAIR_BLOCK = 1024  # rows per matrix product in ``MatrixSearch.close_pairs``
WINDOW_OVERFETCH = 4  # window hits fetched per chunk wanted (a chunk of 1,200 tokens has ~7 windows)


def window_chunk(vector_id: str, meta: dict[str, Any]) -> str:
    """The chunk a chunk-collection vector belongs to (one vector per window of a chunk)."""
    return str(meta.get("chunk_id") or chunk_of_window(vector_id))


class VectorMatrix:
    """All vectors of one collection in memory: row ``i`` is ``ids[i]`` with ``metadatas[i]``."""

    def __init__(self, ids: list[str], vectors: np.ndarray, metadatas: list[dict[str, Any]]) -> None:
        self.ids = ids
        self.vectors = vectors
        self.metadatas = metadatas
        self.row = {vector_id: i for i, vector_id in enumerate(ids)}
        self.chunk_of_row = [window_chunk(vector_id, meta) for vector_id, meta in zip(ids, metadatas)]
        self.rows_of_chunk: dict[str, list[int]] = {}
        for i, chunk_id in enumerate(self.chunk_of_row):
            self.rows_of_chunk.setdefault(chunk_id, []).append(i)
        self.coarse = CoarseIndex(vectors) if wants_coarse(len(ids)) else None  # large: two-stage top-k

    def chunk_cosines(self, vector: np.ndarray, chunk_ids: Sequence[str]) -> dict[str, float]:
        """Each known chunk's best window cosine to ``vector`` (chunks without vectors are left out)."""
        rows = [(c, r) for c in dict.fromkeys(chunk_ids) for r in self.rows_of_chunk.get(c, [])]
        if not rows:
            return {}
        cosines = self.vectors[np.asarray([r for _, r in rows])] @ np.asarray(vector, dtype=np.float32)
        out: dict[str, float] = {}
        for (chunk_id, _), cosine in zip(rows, cosines.tolist()):
            if cosine > out.get(chunk_id, -2.0):
                out[chunk_id] = float(cosine)
        return out

    def top(self, vector: np.ndarray, k: int) -> list[VectorHit]:
        """Exact top-k by cosine (ties: id), like a brute-force vector database (LightRAG's
        nano-vectordb); unlike ChromaDB's HNSW search it is deterministic and never misses a vector."""
        if k <= 0 or not len(self.ids):
            return []
        if self.coarse is not None:  # a large collection: candidates from a projection (core.storage.coarse_search)
            found, values = self.coarse.top_rows(vector, k)
            hits = [VectorHit(self.ids[r], float(v), dict(self.metadatas[r])) for r, v in zip(found.tolist(), values)]
            return sorted(hits, key=lambda h: (-h.score, h.id))
        scores = self.vectors @ np.asarray(vector, dtype=np.float32)
        k = min(k, len(scores))
        rows = np.argpartition(-scores, k - 1)[:k]
        hits = [VectorHit(self.ids[r], float(scores[r]), dict(self.metadatas[r])) for r in rows.tolist()]
        return sorted(hits, key=lambda h: (-h.score, h.id))

    def top_chunks(self, vector: np.ndarray, k: int) -> list[VectorHit]:
        """Exact top-k chunks, each scored by its best window (max-sim); a hit's id is the chunk id."""
        if k <= 0 or not len(self.ids):
            return []
        scores = self.vectors @ np.asarray(vector, dtype=np.float32)
        n, want = len(scores), WINDOW_OVERFETCH * k
        while True:  # the best rows in (score desc, row) order: a prefix of the stable sort of every row
            if want < n:
                cut = np.partition(scores, n - want)[n - want]
                rows = np.flatnonzero(scores >= cut)  # every row tied at the cut too
                rows = rows[np.lexsort((rows, -scores[rows]))]
            else:
                rows = np.argsort(-scores, kind="stable")
            best: dict[str, VectorHit] = {}
            for row in rows.tolist():
                chunk_id = self.chunk_of_row[row]
                if chunk_id not in best:
                    best[chunk_id] = VectorHit(chunk_id, float(scores[row]), dict(self.metadatas[row]))
                    if len(best) >= k:
                        break
            if len(best) >= k or want >= n:
                return sorted(best.values(), key=lambda h: (-h.score, h.id))
            want *= 4  # too few distinct chunks among the best rows: look further

    def by_meta(self, *fields: str) -> dict[Any, int]:
        """Row of each vector keyed by metadata fields (one field: its value; several: a tuple)."""
        if len(fields) == 1:
            return {m.get(fields[0]): i for i, m in enumerate(self.metadatas)}
        return {tuple(m.get(f) for f in fields): i for i, m in enumerate(self.metadatas)}

    def __len__(self) -> int:
        return len(self.ids)


_KEY_FIELDS = {"entities": ("key",), "relations": ("source", "target")}
BLAS_THREADS_ENV = "RAGSCOPE_BLAS_THREADS"


@functools.cache
def one_blas_thread() -> None:
    """Set numpy's BLAS to ``RAGSCOPE_BLAS_THREADS`` threads (default 1; 0: leave it), once per process
    (see the module doc). ``threadpoolctl`` comes with scikit-learn."""
    wanted = int(os.environ.get(BLAS_THREADS_ENV, "1") or "1")
    if wanted > 0:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=wanted, user_api="blas")


class MatrixSearch:
    """Exact vector search over in-memory matrices loaded lazily by ``load(collection)``."""

    def __init__(self, load: Callable[[str], VectorMatrix]) -> None:
        one_blas_thread()
        self._load = load
        self._matrices: dict[str, VectorMatrix] = {}
        self._rows: dict[str, dict[Any, int]] = {}
        self._lock = threading.Lock()

    def _matrix(self, collection: str) -> VectorMatrix:
        matrix = self._matrices.get(collection)
        if matrix is None:
            with self._lock:
                matrix = self._matrices.get(collection)
                if matrix is None:
                    matrix = self._matrices[collection] = self._load(collection)
        return matrix

    def _row_of(self, collection: str) -> dict[Any, int]:
        rows = self._rows.get(collection)
        if rows is None:
            matrix = self._matrix(collection)
            fields = _KEY_FIELDS.get(collection)
            rows = matrix.by_meta(*fields) if fields else dict(matrix.row)
            self._rows[collection] = rows
        return rows

    def _key(self, collection: str, matrix: VectorMatrix, row: int) -> Any:
        fields = _KEY_FIELDS.get(collection)
        if fields is None:
            return matrix.ids[row]
        meta = matrix.metadatas[row]
        if len(fields) == 1:
            return str(meta.get(fields[0], ""))
        return tuple(str(meta.get(f, "")) for f in fields)

    def size(self, collection: str) -> int:
        return len(self._matrix(collection))

    def top(self, collection: str, vector: np.ndarray, k: int) -> list[VectorHit]:
        return self._matrix(collection).top(vector, k)

    def top_chunks(self, vector: np.ndarray, k: int) -> list[VectorHit]:
        return self._matrix("chunks").top_chunks(vector, k)

    def ranked_keys(self, collection: str, vector: np.ndarray, k: int) -> list[tuple[Any, float]]:
        matrix = self._matrix(collection)
        if len(matrix) == 0 or k <= 0:
            return []
        if matrix.coarse is not None:  # a large collection: two-stage top-k (core.storage.coarse_search)
            found, values = matrix.coarse.top_rows(vector, k)
            return [(self._key(collection, matrix, row), float(v)) for row, v in zip(found.tolist(), values)]
        scores = matrix.vectors @ np.asarray(vector, dtype=np.float32)
        k = min(k, len(scores))
        best = np.argpartition(-scores, k - 1)[:k]
        ranked = sorted(((int(i), float(scores[i])) for i in best), key=lambda p: (-p[1], p[0]))
        return [(self._key(collection, matrix, row), score) for row, score in ranked]

    def ranked_keys_many(self, collection: str, vectors: Sequence[np.ndarray],
                         k: int) -> list[list[tuple[Any, float]]]:
        """``ranked_keys`` for several query vectors with one matrix product (same keys, same order)."""
        matrix = self._matrix(collection)
        if not len(vectors):
            return []
        if len(matrix) == 0 or k <= 0:
            return [[] for _ in vectors]
        if matrix.coarse is not None:  # the two-stage search is per vector
            return [self.ranked_keys(collection, v, k) for v in vectors]
        queries = np.stack([np.asarray(v, dtype=np.float32) for v in vectors], axis=1)
        scores_all = matrix.vectors @ queries
        k = min(k, scores_all.shape[0])
        out: list[list[tuple[Any, float]]] = []
        for column in range(scores_all.shape[1]):
            scores = scores_all[:, column]
            best = np.argpartition(-scores, k - 1)[:k]
            ranked = sorted(((int(i), float(scores[i])) for i in best), key=lambda p: (-p[1], p[0]))
            out.append([(self._key(collection, matrix, row), score) for row, score in ranked])
        return out

    def cosines(self, collection: str, vector: np.ndarray, keys: Sequence[Any]) -> dict[Any, float]:
        if collection == "chunks":
            return self._matrix("chunks").chunk_cosines(vector, keys)
        row_of = self._row_of(collection)
        found = [(key, row_of[key]) for key in keys if key in row_of and row_of[key] is not None]
        if not found:
            return {}
        matrix = self._matrix(collection)
        values = matrix.vectors[np.asarray([r for _, r in found])] @ np.asarray(vector, dtype=np.float32)
        return {key: float(c) for (key, _), c in zip(found, values.tolist())}

    def close_pairs(self, collection: str, threshold: float, k: int) -> list[tuple[Any, Any, float]]:
        """Each vector's at most ``k`` nearest others with cosine >= ``threshold``, as (key, key, cosine)
        with each unordered pair once (blocks of rows, so memory stays O(block x n))."""
        matrix = self._matrix(collection)
        n = len(matrix)
        if n < 2 or k <= 0:
            return []
        keys = [self._key(collection, matrix, row) for row in range(n)]
        found: dict[tuple[int, int], float] = {}
        for start in range(0, n, CLOSE_PAIR_BLOCK):
            block = matrix.vectors[start:start + CLOSE_PAIR_BLOCK] @ matrix.vectors.T
            for offset, scores in enumerate(block):
                row = start + offset
                scores[row] = -2.0  # not its own neighbour
                close = np.flatnonzero(scores >= threshold)
                if len(close) > k:
                    close = close[np.lexsort((close, -scores[close]))][:k]
                for other in close.tolist():
                    found[(min(row, other), max(row, other))] = float(scores[other])
        return [(keys[a], keys[b], found[(a, b)]) for a, b in sorted(found)]

    def cosine(self, collection: str, vector: np.ndarray, key: Any) -> Optional[float]:
        if collection == "chunks":
            return self.cosines("chunks", vector, [key]).get(key)
        row = self._row_of(collection).get(key)
        if row is None:
            return None
        return float(self._matrix(collection).vectors[row] @ np.asarray(vector, dtype=np.float32))
