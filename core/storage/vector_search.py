"""The SQLite + Chroma adapter's ``VectorSearch``: every vector of a collection loaded once per
workspace generation into a ``VectorMatrix`` (exact cosines by matrix products, deterministic),
with the key → row maps the callers look vectors up by. Nothing outside this adapter sees the
matrices, rows or maps."""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import numpy as np

from core.storage.ports import VectorHit

if TYPE_CHECKING:
    from core.storage.vectors import VectorMatrix

_KEY_FIELDS = {"entities": ("key",), "relations": ("source", "target")}


class MatrixSearch:
    """Exact vector search over in-memory matrices loaded lazily by ``load(collection)``."""

    def __init__(self, load: Callable[[str], "VectorMatrix"]) -> None:
        self._load = load
        self._matrices: dict[str, "VectorMatrix"] = {}
        self._rows: dict[str, dict[Any, int]] = {}
        self._lock = threading.Lock()

    def _matrix(self, collection: str) -> "VectorMatrix":
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

    def _key(self, collection: str, matrix: "VectorMatrix", row: int) -> Any:
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

    def cosine(self, collection: str, vector: np.ndarray, key: Any) -> Optional[float]:
        if collection == "chunks":
            return self.cosines("chunks", vector, [key]).get(key)
        row = self._row_of(collection).get(key)
        if row is None:
            return None
        return float(self._matrix(collection).vectors[row] @ np.asarray(vector, dtype=np.float32))
