"""Indexing with a local embedder and spaCy prepares the next batch on a worker thread (its parse on one
core while this batch's merge, tree and embedding use the other) and gives the same workspace, vector for
vector, as batch after batch (``core.indexing.pipeline.overlap_by_default``, ``core.indexing.prefetch``)."""
from __future__ import annotations

import numpy as np

from conftest import sample_sources


class _Named:
    def __init__(self, name: str = "", remote: bool = False) -> None:
        self.name, self.remote = name, remote


def test_overlap_by_default_for_spacy_on_two_cores_or_a_remote_embedder(monkeypatch):
    from core.indexing import pipeline

    monkeypatch.setattr(pipeline.os, "cpu_count", lambda: 2)
    assert pipeline.overlap_by_default(_Named(), _Named("spacy"))
    assert pipeline.overlap_by_default(_Named(remote=True), _Named("llm"))
    assert not pipeline.overlap_by_default(_Named(), _Named("llm"))  # LLM requests would exceed its concurrency
    monkeypatch.setattr(pipeline.os, "cpu_count", lambda: 1)
    assert not pipeline.overlap_by_default(_Named(), _Named("spacy"))  # one core: nothing to overlap with


def _index(path, **options):
    from core.indexing.pipeline import process_pending, register_documents
    from core.workspace import Workspace

    ws = Workspace(path)
    sources, failures = sample_sources()
    with ws.writer():
        register_documents(ws, sources, failures)
        report = process_pending(ws, batch_tokens=2500, **options)
    assert report.processed == len(sources) and not report.failed
    return ws


def _snapshot(ws) -> tuple:
    ids = ws.store.expected_vector_ids()
    vectors = {c: ws.vectors.get_vectors(c, sorted(ids[c])) for c in ids}
    rows = {k: v for k, v in ws.status().items() if k in ("processed", "chunks", "entities", "relations",
                                                              "mention_edges", "tree_nodes")}
    return ids, vectors, rows


def test_local_indexing_prepares_ahead_and_gives_the_same_workspace(tmp_path, monkeypatch):
    from core.indexing import pipeline, prefetch

    monkeypatch.setattr(pipeline.os, "cpu_count", lambda: 2)
    started: list[int] = []
    original = prefetch.Prefetcher.start

    def counted(self, docs):
        started.append(len(docs))
        return original(self, docs)

    monkeypatch.setattr(prefetch.Prefetcher, "start", counted)
    overlapped = _index(tmp_path / "a")  # the default: the sample corpus is several batches of 2,500 tokens
    assert started, "no batch was prepared ahead"
    sequential = _index(tmp_path / "b", overlap=False)
    try:
        ids_a, vec_a, rows_a = _snapshot(overlapped)
        ids_b, vec_b, rows_b = _snapshot(sequential)
        assert ids_a == ids_b and rows_a == rows_b and all(ids_a.values())
        for collection, vectors in vec_a.items():
            assert all(np.array_equal(vectors[i], vec_b[collection][i]) for i in vectors), collection
    finally:
        overlapped.close()
        sequential.close()
