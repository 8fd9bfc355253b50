"""A committed batch's vectors are embedded and written behind the next batch (``core.indexing.vector_jobs``):

* with a local embedder on two cores (the default), the graph texts embed on the vector-writes thread while
  the main thread merges the next batch, and the workspace is the same, vector for vector, as embedding each
  batch before its commit;
* a stop between a batch's commit and its vector writes (a failed job here; a crash leaves the same state)
  leaves that batch processed with its vectors missing and the batch then indexed back to pending; the next
  run's reconciliation re-embeds the missing vectors and the workspace equals a clean run's.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from conftest import HashEmbedder, sample_sources


class _Named:
    def __init__(self, remote: bool = False) -> None:
        self.remote = remote


def test_vectors_behind_by_default_for_a_local_embedder_on_two_cores(monkeypatch):
    from core.indexing import pipeline

    monkeypatch.setattr(pipeline.os, "cpu_count", lambda: 2)
    assert pipeline.vectors_behind_by_default(_Named())
    assert not pipeline.vectors_behind_by_default(_Named(remote=True))  # a Cancel must find the batch uncommitted
    monkeypatch.setattr(pipeline.os, "cpu_count", lambda: 1)
    assert not pipeline.vectors_behind_by_default(_Named())


def _index(path, embedder=None, **options):
    from core.indexing.pipeline import process_pending, register_documents
    from core.workspace import Workspace

    ws = Workspace(path, embedder=embedder)
    sources, failures = sample_sources()
    with ws.writer():
        register_documents(ws, sources, failures)
        report = process_pending(ws, batch_tokens=2500, **options)
    return ws, report


def _vectors(ws) -> tuple[dict, dict]:
    ids = ws.records.expected_vector_ids()
    return ids, {c: ws.vectors.get_vectors(c, sorted(ids[c])) for c in ids}


def _same(a, b) -> None:
    ids_a, vec_a = _vectors(a)
    ids_b, vec_b = _vectors(b)
    assert ids_a == ids_b and all(ids_a.values())
    for collection in ("chunks", "entities", "relations", "tree"):
        assert {v for v in a.vectors.all_ids(collection)} == ids_a[collection], collection  # nothing missing or left
        assert all(np.array_equal(vec_a[collection][i], vec_b[collection][i]) for i in ids_a[collection]), collection


def test_graph_vectors_embed_behind_the_next_batch_and_match_embedding_before_the_commit(tmp_path, monkeypatch):
    from core.indexing import batch
    from core.onnx_embeddings import Int8MiniLMEmbedder

    embeds: list[str] = []  # the thread of each graph-text embedding call
    original_embed = Int8MiniLMEmbedder.embed

    def embed(self, texts):
        embeds.append(threading.current_thread().name)
        return original_embed(self, texts)

    jobs: list[tuple[float, float]] = []  # (start, end) of each batch's vector writes
    original_write = batch.write_batch_vectors

    def write(*args):
        begun = time.perf_counter()
        try:
            return original_write(*args)
        finally:
            jobs.append((begun, time.perf_counter()))

    merges: list[float] = []  # start of each batch's merge (main thread)
    original_merge = batch.merge_touched

    def merge(*args, **kwargs):
        merges.append(time.perf_counter())
        return original_merge(*args, **kwargs)

    monkeypatch.setattr(Int8MiniLMEmbedder, "embed", embed)
    monkeypatch.setattr(batch, "write_batch_vectors", write)
    monkeypatch.setattr(batch, "merge_touched", merge)
    behind, report = _index(tmp_path / "behind", vectors_behind=True)
    assert report.processed and not report.failed and len(merges) >= 3, "the sample corpus is several batches"
    assert any(name.startswith("ragscope-vector-writes") for name in embeds), embeds
    # the main thread merged a later batch while an earlier batch's vectors were being embedded
    assert any(start < m < end for start, end in jobs for m in merges), (jobs, merges)
    embeds.clear()
    before, _ = _index(tmp_path / "before", vectors_behind=False)
    assert embeds and not any(name.startswith("ragscope-vector-writes") for name in embeds)
    try:
        _same(behind, before)
        assert behind.status()["processed"] == before.status()["processed"] == report.processed
    finally:
        behind.close()
        before.close()


def test_a_stop_between_commit_and_vectors_is_repaired_by_the_next_run(tmp_path, monkeypatch):
    from core.indexing import batch
    from core.indexing.vector_jobs import VectorWritesFailed

    clean, _ = _index(tmp_path / "clean", HashEmbedder(), vectors_behind=False)
    calls = {"n": 0}
    original_write = batch.write_batch_vectors

    def fail_second(*args):
        calls["n"] += 1
        if calls["n"] == 2:  # batch 2 committed, its vectors never written (as if the process died here)
            raise OSError("disk full")
        return original_write(*args)

    monkeypatch.setattr(batch, "write_batch_vectors", fail_second)
    with pytest.raises(VectorWritesFailed):
        _index(tmp_path / "ws", HashEmbedder(), vectors_behind=True)
    monkeypatch.setattr(batch, "write_batch_vectors", original_write)
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    counts = ws.records.status_counts()
    assert counts.get("processed") and counts.get("pending") and not counts.get("processing")  # the next batch went back
    expected = ws.records.expected_vector_ids()
    missing = {c: expected[c] - ws.vectors.all_ids(c) for c in expected}
    assert missing["chunks"] and missing["entities"], "batch 2 is committed without its vectors"
    from core.indexing.pipeline import process_pending

    events: list = []
    with ws.writer():
        report = process_pending(ws, events.append, batch_tokens=2500, vectors_behind=True)
    assert report.processed and not report.failed
    try:
        repairs = [e.message for e in events if e.step == "repair"]
        assert repairs and "'added'" in repairs[0], repairs  # the resume re-embedded the missing vectors
        _same(ws, clean)
        assert ws.status()["processed"] == clean.status()["processed"] and not ws.status()["pending"]
    finally:
        ws.close()
        clean.close()
