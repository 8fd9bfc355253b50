"""One question reads one generation (issue 36): ``Workspace.one_generation`` pins the thread's read
views, so the ~25 ``views`` reads of a question cost one read of the generation, a commit by another
session is seen from the next question on, and a writer's unit of work keeps its private views."""
from __future__ import annotations

import threading

from core.workspace import Workspace


def bump(ws: Workspace) -> None:
    """Another session's commit: the next generation."""
    with ws.writer(), ws.records.unit_of_work():
        ws.bump_generation()


def counting_generation_reads(ws: Workspace, monkeypatch) -> list[str]:
    reads: list[str] = []
    store = type(ws.records)
    original = store.get_meta

    def get_meta(self, key: str, default: str = "") -> str:
        reads.append(key)
        return original(self, key, default)

    monkeypatch.setattr(store, "get_meta", get_meta)
    return reads


def test_the_block_reads_the_generation_once(tmp_path, monkeypatch) -> None:
    ws = Workspace(tmp_path / "ws", check_embedder=False)
    reads = counting_generation_reads(ws, monkeypatch)
    with ws.one_generation() as pinned:
        assert [ws.views for _ in range(25)] == [pinned] * 25
    assert reads.count("generation") == 1
    ws.views
    assert reads.count("generation") == 2  # outside a block every read asks again
    ws.close()


def test_another_sessions_commit_is_seen_from_the_next_block(tmp_path) -> None:
    reader = Workspace(tmp_path / "ws", check_embedder=False)
    writer = Workspace(tmp_path / "ws", check_embedder=False)
    with reader.one_generation() as pinned:
        first = pinned.generation
        worker = threading.Thread(target=bump, args=(writer,))  # the other session, its own connection
        worker.start()
        worker.join()
        assert writer.generation() == first + 1
        assert reader.views is pinned and reader.views.generation == first
    assert reader.views.generation == first + 1
    with reader.one_generation() as again:
        assert again.generation == first + 1
    reader.close()
    writer.close()


def test_nested_blocks_keep_the_outer_pin_and_threads_their_own(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws", check_embedder=False)
    other = Workspace(tmp_path / "ws", check_embedder=False)
    with ws.one_generation() as outer:
        bump(other)
        with ws.one_generation() as inner:
            assert inner is outer
        assert ws.views is outer
        seen: list[int] = []
        reader = threading.Thread(target=lambda: seen.append(ws.views.generation))  # not pinned there
        reader.start()
        reader.join()
        assert seen == [outer.generation + 1]
    ws.close()
    other.close()


def test_a_unit_of_work_inside_the_block_sees_its_own_writes(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws", check_embedder=False)
    with ws.one_generation() as pinned:
        with ws.writer(), ws.records.unit_of_work():
            ws.bump_generation()
            private = ws.views
            assert private is not pinned and private.generation == pinned.generation + 1
        assert ws.views is pinned
    assert ws.views.generation == pinned.generation + 1
    ws.close()


def test_a_retrieval_reads_the_generation_once(sample_ws, monkeypatch) -> None:
    from core.retrieval.registry import query_context, retrieve

    retrieve(query_context(sample_ws, "Who was the first keeper of Kestrel Point Lighthouse?"), "tree")  # models and views loaded
    reads = counting_generation_reads(sample_ws, monkeypatch)
    for mode in ("tree", "local", "naive"):
        reads.clear()
        result = retrieve(query_context(sample_ws, "Who was appointed arbitrator in the Carrow Sound fishing dispute?"), mode)
        assert result.context_text
        assert reads.count("generation") == 1, mode
