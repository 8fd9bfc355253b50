"""Indexing with a local embedder and spaCy on two cores keeps both busy, and gives the same workspace,
vector for vector, as one step after the other on one core:

* the next batch is prepared on a worker thread (its parse on one core while this batch's merge, tree and
  embedding use the other: ``core.indexing.pipeline.overlap_by_default``, ``core.indexing.prefetch``);
* a batch's chunk windows embed on a worker thread while the batch is parsed
  (``core.sentence_vectors.WindowStatesAhead``)."""
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
    rows["sentence vectors"] = ws.records.sentence_vectors(ws.records.all_chunk_ids())
    return ids, vectors, rows


def test_local_indexing_overlaps_on_two_cores_and_gives_the_same_workspace(tmp_path, monkeypatch):
    import threading
    import time

    from core.indexing import common, pipeline, prefetch
    from core.onnx_embeddings import Int8MiniLMEmbedder

    cores = {"n": 2}
    monkeypatch.setattr(pipeline.os, "cpu_count", lambda: cores["n"])
    started: list[int] = []
    original_start = prefetch.Prefetcher.start

    def counted(self, docs):
        started.append(len(docs))
        return original_start(self, docs)

    window_calls: list[tuple[str, float]] = []  # (thread, start time) of each windows' pass slice
    original_states = Int8MiniLMEmbedder.token_states

    def states(self, texts):
        window_calls.append((threading.current_thread().name, time.perf_counter()))
        return original_states(self, texts)

    parses: list[tuple[float, float]] = []  # (start, end) of each batch's parse
    original_extract = common.SpacyExtractor.extract

    def extract(self, texts, titles=None, on_parsed=None):
        begun = time.perf_counter()
        try:
            return original_extract(self, texts, titles=titles, on_parsed=on_parsed)
        finally:
            parses.append((begun, time.perf_counter()))

    monkeypatch.setattr(prefetch.Prefetcher, "start", counted)
    monkeypatch.setattr(Int8MiniLMEmbedder, "token_states", states)
    monkeypatch.setattr(common.SpacyExtractor, "extract", extract)
    overlapped = _index(tmp_path / "a")  # the default: the sample corpus is several batches of 2,500 tokens
    assert started, "no batch was prepared ahead"
    assert window_calls and all(name.startswith("ragscope-window-states") for name, _ in window_calls)
    assert any(begun < parses[0][1] for _, begun in window_calls), "the windows did not embed during the first parse"
    cores["n"] = 1
    window_calls.clear()
    sequential = _index(tmp_path / "b")  # one core: one step after the other, on the calling thread
    assert window_calls and not any(name.startswith("ragscope-window-states") for name, _ in window_calls)
    try:
        ids_a, vec_a, rows_a = _snapshot(overlapped)
        ids_b, vec_b, rows_b = _snapshot(sequential)
        assert ids_a == ids_b and rows_a == rows_b and all(ids_a.values()) and rows_a["sentence vectors"]
        for collection, vectors in vec_a.items():
            assert all(np.array_equal(vectors[i], vec_b[collection][i]) for i in vectors), collection
    finally:
        overlapped.close()
        sequential.close()
