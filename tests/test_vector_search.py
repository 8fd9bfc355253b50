"""Retrieval's vector search: exact cosines over the in-memory vectors by default (deterministic, never
misses a vector), ChromaDB's HNSW index with ``vector_search="approximate"``."""
from __future__ import annotations

import numpy as np

from core.retrieval.registry import query_context
from core.retrieval.registry import retrieve
from core.storage.vector_search import VectorMatrix


def _matrix() -> VectorMatrix:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(60, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"c{i // 3}#w{i % 3}" for i in range(60)]  # 20 chunks of 3 windows each
    metas = [{"chunk_id": f"c{i // 3}"} for i in range(60)]
    return VectorMatrix(ids, vectors, metas)


def test_top_is_the_brute_force_ranking_with_id_tie_break() -> None:
    matrix = _matrix()
    query = matrix.vectors[5] + 0.1 * matrix.vectors[9]
    query /= np.linalg.norm(query)
    scores = matrix.vectors @ query
    want = sorted(range(60), key=lambda r: (-scores[r], matrix.ids[r]))[:7]
    hits = matrix.top(query, 7)
    assert [h.id for h in hits] == [matrix.ids[r] for r in want]
    assert [h.score for h in hits] == [float(scores[r]) for r in want]
    assert len(matrix.top(query, 500)) == 60 and matrix.top(query, 0) == []
    twin = VectorMatrix(["b", "a"], np.ones((2, 2), dtype=np.float32) / np.sqrt(2), [{}, {}])
    assert [h.id for h in twin.top(np.array([1.0, 0.0], dtype=np.float32), 2)] == ["a", "b"]  # tie: by id


def test_top_chunks_scores_each_chunk_by_its_best_window() -> None:
    matrix = _matrix()
    query = matrix.vectors[10]  # window 1 of chunk c3
    hits = matrix.top_chunks(query, 5)
    assert hits[0].id == "c3" and abs(hits[0].score - 1.0) < 1e-5
    assert len({h.id for h in hits}) == 5
    scores = matrix.vectors @ query
    best = {f"c{c}": float(max(scores[3 * c: 3 * c + 3])) for c in range(20)}
    want = sorted(best, key=lambda c: (-best[c], c))[:5]
    assert [h.id for h in hits] == want and [h.score for h in hits] == [best[c] for c in want]


def test_modes_search_exactly_by_default_and_through_chromadb_when_asked(sample_ws) -> None:
    question = "Who founded the Tidewater Shipping Cooperative?"
    exact = query_context(sample_ws, question)
    assert sample_ws.settings.vector_search == "exact"
    vector = exact.embed(question)
    matrix = sample_ws.vectors.matrix("entities")  # every entity vector, brute force
    assert [h.id for h in exact.search("entities", vector, 5)] == [h.id for h in matrix.top(vector, 5)]
    approximate = query_context(sample_ws, question, settings=sample_ws.settings.with_overrides(
        {"vector_search": "approximate"}))
    # a small collection: HNSW finds the same neighbours (scores agree to float32 rounding)
    a, b = exact.search_chunks(vector, 5), approximate.search_chunks(vector, 5)
    assert [h.id for h in a] == [h.id for h in b]
    assert np.allclose([h.score for h in a], [h.score for h in b], atol=1e-5)
    first, second = (retrieve(query_context(sample_ws, question), "local") for _ in range(2))
    assert first.to_dict()["entities"] == second.to_dict()["entities"]
