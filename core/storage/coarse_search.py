"""Approximate top-k for large vector collections: a coarse scan in a low-dimensional projection, then
exact cosines of the candidates only.

The exact search (``VectorMatrix.top`` / ``MatrixSearch.ranked_keys``) reads every vector of a
collection per query: at a million corpus tokens the relation collection is ~140,000 × 384 float32
(215 MB), which makes one relation search cost tens of milliseconds and grow with the corpus. Above
``APPROX_MIN_ROWS`` rows a collection is searched in two stages instead:

1. once per workspace generation, an orthonormal basis of the ``COARSE_DIMS`` directions that carry most
   of the collection's squared dot products (uncentred SVD of a fixed random sample of rows) and every
   row projected on it (``n × COARSE_DIMS``, a sixth of the matrix);
2. per query, the projected query's dot products with every projected row pick ``max(CANDIDATES_PER_HIT
   × k, MIN_CANDIDATES)`` candidates; their exact cosines (the full vectors) rank them, ties by row, as
   the exact search does.

Scores of the hits returned are exact; a hit can be missed when its coarse score falls outside the
candidates (recall measured in ``docs/indexing-speed.md``). Below the threshold the exact search is
unchanged, so every workspace smaller than that returns exactly what it did.
"""
from __future__ import annotations

import threading
from typing import Optional

import numpy as np

APPROX_MIN_ROWS = 50_000  # collections with at least this many vectors are searched approximately
COARSE_DIMS = 128
CANDIDATES_PER_HIT = 10
MIN_CANDIDATES = 1000
SAMPLE_ROWS = 20_000
SEED = 20261202


class CoarseIndex:
    """The projection of one collection's matrix (built on first use, then read-only)."""

    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = vectors
        self._basis: Optional[np.ndarray] = None
        self._projected: Optional[np.ndarray] = None
        self._lock = threading.Lock()

    def _build(self) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            if self._basis is None or self._projected is None:
                n, dims = self.vectors.shape
                rows = np.random.default_rng(SEED).choice(n, size=min(n, SAMPLE_ROWS), replace=False)
                _, _, vt = np.linalg.svd(self.vectors[np.sort(rows)].astype(np.float64), full_matrices=False)
                basis = np.ascontiguousarray(vt[:min(COARSE_DIMS, dims)].T, dtype=np.float32)  # dims × d
                self._projected = np.ascontiguousarray(self.vectors @ basis)
                self._basis = basis
        return self._basis, self._projected

    def top_rows(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, exact scores) of the best ``k`` candidates, best first (ties: lower row first)."""
        basis, projected = self._build()
        query = np.asarray(vector, dtype=np.float32)
        n = len(projected)
        want = min(n, max(CANDIDATES_PER_HIT * k, MIN_CANDIDATES))
        coarse = projected @ (query @ basis)
        candidates = np.argpartition(-coarse, want - 1)[:want] if want < n else np.arange(n)
        exact = self.vectors[candidates] @ query
        order = np.lexsort((candidates, -exact))[:k]
        return candidates[order], exact[order]


def wants_coarse(rows: int) -> bool:
    """True when a collection this large is searched in two stages."""
    return rows >= APPROX_MIN_ROWS
