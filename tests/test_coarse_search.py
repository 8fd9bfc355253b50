"""Two-stage vector search for large collections (issue 23, ``core.storage.coarse_search``): exact below
the size threshold (the same hits as before), exact scores and row-order ties above it, and a recall
of the true top-k (≥ 0.97 at k = 40) that a stub returning the first rows does not reach."""
from __future__ import annotations

import numpy as np
import pytest

from core.storage import coarse_search
from core.storage.coarse_search import CoarseIndex
from core.storage.vector_search import MatrixSearch
from core.storage.vector_search import VectorMatrix


def clustered(n: int, dims: int = 384, seed: int = 3) -> np.ndarray:
    """Unit vectors around 60 centres (embeddings are clustered, not uniform)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((60, dims))
    rows = centres[rng.integers(0, 60, n)] + 0.9 * rng.standard_normal((n, dims))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def exact_top(vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    scores = vectors @ query
    return sorted(range(len(scores)), key=lambda r: (-scores[r], r))[:k]


def test_recall_of_the_true_top_k_and_exact_scores():
    vectors = clustered(12_000)
    index = CoarseIndex(vectors)
    rng = np.random.default_rng(9)
    recalls = []
    for i in range(25):
        query = vectors[rng.integers(0, len(vectors))] + 0.3 * rng.standard_normal(384).astype(np.float32)
        query /= np.linalg.norm(query)
        rows, scores = index.top_rows(query, 40)
        assert len(rows) == 40 and np.allclose(scores, vectors[rows] @ query, atol=1e-5)  # exact cosines
        assert list(scores) == sorted(scores, reverse=True)
        recalls.append(len(set(rows.tolist()) & set(exact_top(vectors, query, 40))) / 40)
    assert np.mean(recalls) >= 0.97, np.mean(recalls)
    first_rows = np.mean([len(set(range(40)) & set(exact_top(vectors, vectors[i], 40))) / 40 for i in range(5)])
    assert first_rows < 0.5  # a stub returning the first rows would fail the recall bound


def test_ties_keep_row_order_like_the_exact_search():
    vectors = np.repeat(clustered(300), 4, axis=0)  # every vector four times: exact ties
    query = vectors[10]
    rows, _ = CoarseIndex(vectors).top_rows(query, 8)
    assert rows.tolist() == exact_top(vectors, query, 8)


def _matrix(vectors: np.ndarray) -> VectorMatrix:
    ids = [f"e{i:05d}" for i in range(len(vectors))]
    return VectorMatrix(ids, vectors, [{"key": f"k{i:05d}"} for i in range(len(vectors))])


def test_small_collections_stay_exact_and_large_ones_go_two_stage(monkeypatch):
    vectors = clustered(3_000)
    small = _matrix(vectors)
    assert small.coarse is None  # under APPROX_MIN_ROWS: exactly the search it always was
    search = MatrixSearch(lambda name: small)
    query = vectors[7]
    assert [k for k, _ in search.ranked_keys("entities", query, 5)] == [f"k{r:05d}" for r in exact_top(vectors, query, 5)]
    monkeypatch.setattr(coarse_search, "APPROX_MIN_ROWS", 1_000)
    large = _matrix(vectors)
    assert isinstance(large.coarse, CoarseIndex)
    calls = []
    real = CoarseIndex.top_rows

    def spy(self, vector, k):
        calls.append(k)
        return real(self, vector, k)

    monkeypatch.setattr(CoarseIndex, "top_rows", spy)
    hits = large.top(query, 5)
    keys = MatrixSearch(lambda name: large).ranked_keys("entities", query, 5)
    assert calls == [5, 5] and hits[0].id == "e00007" and keys[0][0] == "k00007"
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


def _top_chunks_by_full_sort(matrix: VectorMatrix, query: np.ndarray, k: int) -> list[tuple[str, float]]:
    """The former top_chunks: walk the stable sort of every window."""
    scores = matrix.vectors @ query
    best: dict[str, float] = {}
    for row in np.argsort(-scores, kind="stable").tolist():
        best.setdefault(matrix.chunk_of_row[row], float(scores[row]))
        if len(best) >= k:
            break
    return sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))


@pytest.mark.parametrize("windows_per_chunk", [1, 3, 40])
def test_top_chunks_reads_only_the_best_windows_and_equals_the_full_sort(windows_per_chunk):
    base = clustered(900, dims=32, seed=windows_per_chunk)
    vectors = np.vstack([base, base[:200]])  # exact ties between windows of different chunks
    ids = [f"c{i // windows_per_chunk:04d}#w{i % windows_per_chunk}" for i in range(len(vectors))]
    matrix = VectorMatrix(ids, vectors, [{"chunk_id": i.split("#")[0]} for i in ids])
    for i, k in ((3, 1), (50, 5), (120, 20), (7, 200)):
        got = [(h.id, h.score) for h in matrix.top_chunks(vectors[i], k)]
        assert got == _top_chunks_by_full_sort(matrix, vectors[i], k)
