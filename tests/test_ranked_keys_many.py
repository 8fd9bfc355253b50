"""``MatrixSearch.ranked_keys_many``: several query vectors in one matrix product give the same keys in
the same order (and the same cosines) as one ``ranked_keys`` call per vector."""
from __future__ import annotations

import numpy as np
import pytest

from core.storage.vector_search import MatrixSearch, VectorMatrix


def _entities() -> VectorMatrix:
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(120, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[7] = vectors[3]  # an exact tie: storage order decides
    ids = [f"v{i}" for i in range(120)]
    metas = [{"key": f"ENTITY {i}"} for i in range(120)]
    return VectorMatrix(ids, vectors, metas)


def _queries(matrix: VectorMatrix) -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    out = [matrix.vectors[3].copy(), matrix.vectors[50] + 0.2 * matrix.vectors[9]]
    out += [rng.normal(size=16).astype(np.float32) for _ in range(6)]
    return [q / np.linalg.norm(q) for q in out]


@pytest.mark.parametrize("k", [1, 5, 40, 500])
def test_many_equals_one_call_per_vector(k: int) -> None:
    matrix = _entities()
    search = MatrixSearch(lambda _collection: matrix)
    queries = _queries(matrix)
    many = search.ranked_keys_many("entities", queries, k)
    assert len(many) == len(queries)
    for query, got in zip(queries, many):
        want = search.ranked_keys("entities", query, k)
        assert [key for key, _ in got] == [key for key, _ in want]
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-6)
    assert [key for key, _ in many[0][:2]] == ["ENTITY 3", "ENTITY 7"][:k]  # the tie, in storage order


def test_many_edge_cases() -> None:
    matrix = _entities()
    search = MatrixSearch(lambda _collection: matrix)
    assert search.ranked_keys_many("entities", [], 5) == []
    assert search.ranked_keys_many("entities", _queries(matrix)[:2], 0) == [[], []]
    empty = VectorMatrix([], np.zeros((0, 16), dtype=np.float32), [])
    assert MatrixSearch(lambda _c: empty).ranked_keys_many("entities", _queries(matrix)[:1], 3) == [[]]
