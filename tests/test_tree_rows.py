"""The tree mode reads the generation's chunk rows, positions and places once, before its first
question (``core.retrieval.tree_rows``), instead of a store read per question for the chunks that
question reaches first (issue 36); its results are the store's, as when every row is read afresh."""
from __future__ import annotations

QUESTIONS = [
    "Who was the first keeper of Kestrel Point Lighthouse?",
    "Which festival began after the Great Velmora Flood?",
]


def tree_json(ws, question: str) -> dict:
    from core.extraction import query_terms
    from core.retrieval.registry import query_context, retrieve

    query_terms._parse.cache_clear()
    data = retrieve(query_context(ws, question), "tree").to_dict()
    data.pop("timings_ms")
    return data


def test_after_the_first_tree_question_no_chunk_is_read_from_the_store(sample_ws, monkeypatch):
    from core.retrieval.generation_rows import chunk_rows, source_labels

    tree_json(sample_ws, QUESTIONS[0])
    every = set(sample_ws.chunk_order())
    assert len(every) > 5
    assert every <= set(chunk_rows(sample_ws).rows)  # every chunk's row, not only the question's
    assert every <= set(source_labels(sample_ws).places)
    reads: list[str] = []
    records = sample_ws.records
    for name in ("chunks_by_id", "chunk_places", "positions"):
        real = getattr(records, name)
        monkeypatch.setattr(records, name, lambda ids, _real=real, _name=name: reads.append(_name) or _real(ids))
    tree_json(sample_ws, QUESTIONS[1])
    assert reads == []


def test_tree_results_equal_those_read_afresh(sample_workspace_dir, monkeypatch):
    from core.retrieval import generation_rows, results, tree_search
    from core.workspace import Workspace

    preloaded = Workspace(sample_workspace_dir)
    try:
        cached = {q: tree_json(preloaded, q) for q in QUESTIONS}
    finally:
        preloaded.close()
    monkeypatch.setattr(tree_search, "preload_rows", lambda ws: 0)
    monkeypatch.setattr(results, "chunk_rows", generation_rows.ChunkRows)  # a store read at every call
    monkeypatch.setattr(results, "source_labels", generation_rows.SourceLabels)
    fresh = Workspace(sample_workspace_dir)
    try:
        for q in QUESTIONS:
            assert tree_json(fresh, q) == cached[q]
    finally:
        fresh.close()


def test_inside_a_unit_of_work_nothing_is_read_ahead(sample_ws_copy, monkeypatch):
    """A writer's views are private to each call and never kept: reading every row there would be
    repeated at every call, so the rows are read as the question asks for them."""
    from core.retrieval.tree_rows import preload_rows

    reads: list[int] = []
    real = sample_ws_copy.records.chunks_by_id
    monkeypatch.setattr(sample_ws_copy.records, "chunks_by_id", lambda ids: reads.append(len(list(ids))) or real(ids))
    with sample_ws_copy.writer(), sample_ws_copy.records.unit_of_work():
        assert preload_rows(sample_ws_copy) == 0
    assert reads == []
    assert preload_rows(sample_ws_copy) == len(sample_ws_copy.chunk_order()) > 0
    assert reads


def test_above_the_size_cap_rows_are_read_as_questions_reach_them(sample_ws_copy, monkeypatch):
    """A corpus with more chunks than ``PRELOAD_MAX_CHUNKS`` is not read whole at each new generation."""
    from core.retrieval import tree_rows
    from core.retrieval.generation_rows import chunk_rows

    monkeypatch.setattr(tree_rows, "PRELOAD_MAX_CHUNKS", len(sample_ws_copy.chunk_order()) - 1)
    assert tree_rows.preload_rows(sample_ws_copy) == 0
    reached = tree_json(sample_ws_copy, QUESTIONS[0])
    assert reached["chunks"]
    assert set(chunk_rows(sample_ws_copy).rows) < set(sample_ws_copy.chunk_order())
