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


def test_entity_linking_searches_every_name_in_one_call_with_the_same_seeds(sample_ws, monkeypatch) -> None:
    """Name linking asks ``ranked_keys_many`` once for all of a question's names and links the same seeds
    as one ``ranked_keys`` per name (the way it searched before)."""
    from core.retrieval.entity_linking import link_names
    from core.retrieval.registry import query_context

    names = ["Tidewater", "Velmora Maritime", "Margaret Thorne", "harbour master", "storm damage"]
    s = sample_ws.settings

    def seeds() -> list[tuple[str, float, str, str]]:
        ctx = query_context(sample_ws, "x")
        found = link_names(ctx, names, 40, s.cosine_threshold, s.seed_relative_cutoff)
        return [(seed.key, seed.score, seed.keyword, seed.how) for seed in found]

    search = sample_ws.views.vectors
    calls: list[int] = []
    real_many = search.ranked_keys_many

    def counted(collection, vectors, k):
        calls.append(len(vectors))
        return real_many(collection, vectors, k)

    monkeypatch.setattr(search, "ranked_keys_many", counted)
    batched = seeds()
    assert calls == [len(names)], "one call for every name"
    monkeypatch.setattr(search, "ranked_keys_many",
                        lambda collection, vectors, k: [search.ranked_keys(collection, v, k) for v in vectors])
    assert batched == seeds() and any(how == "vector" for _, _, _, how in batched)
