"""Two sessions opening the same workspace's embedded vector store at once both get a working store (issue 38).

ChromaDB registers a folder's shared system before starting it: a second client created in that window
got the unstarted system (``'RustBindingsAPI' object has no attribute 'bindings'``) and, failing, stopped
the system under the first client too — seen as an editor's Undo failing in the app while another
session opened the store. ``core.storage.vectors`` opens embedded clients one at a time. The window is
widened here (ChromaDB's ``System.start`` made slow) so the race happens on every run without the lock.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest


def test_two_threads_opening_one_folder_both_get_a_working_store(tmp_path, monkeypatch) -> None:
    from chromadb.api.shared_system_client import SharedSystemClient
    from chromadb.config import System

    from core.storage.vectors import VectorStore

    started = System.start

    def slow_start(self) -> None:
        time.sleep(0.5)  # the window between registering the folder's system and starting it
        started(self)

    monkeypatch.setattr(System, "start", slow_start)
    path = tmp_path / "chroma"
    barrier = threading.Barrier(2)
    stores: list[VectorStore] = []
    errors: list[BaseException] = []

    def open_store() -> None:
        barrier.wait()
        try:
            stores.append(VectorStore(path, "ns"))
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    try:
        assert not errors, errors
        assert len(stores) == 2
        vectors = np.eye(3, dtype=np.float32)
        stores[0].upsert("chunks", ["a", "b", "c"], vectors, [{"doc": "d"}] * 3)
        for store in stores:  # both clients still work: neither system was stopped under the other
            assert store.count("chunks") == 3
    finally:
        for store in stores:
            store.forget_embedded_system()
        SharedSystemClient._identifier_to_system.pop(str(path), None)


@pytest.mark.parametrize("opened", [1, 3])
def test_stores_opened_one_after_another_share_their_vectors(tmp_path, opened) -> None:
    from core.storage.vectors import VectorStore

    first = VectorStore(tmp_path / "chroma", "ns")
    first.upsert("entities", ["x"], np.ones((1, 4), dtype=np.float32), [{"name": "x"}])
    later = [VectorStore(tmp_path / "chroma", "ns") for _ in range(opened)]
    assert [store.count("entities") for store in later] == [1] * opened
    first.forget_embedded_system()
