"""The query strings a mode embeds, and when: the names found without the parse are started before it
(modes whose seeds search each name's vector), global leaves out the joined names when they are only the
low-level keywords joined and high-level keywords exist, and the tree and path modes read chunk rows once
per generation. Results are those of a run without these (same per-string vectors, same rows)."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from core.retrieval.global_search import GlobalRetriever
from core.retrieval.registry import query_context, retrieve

from tests.recording_embedder import RecordingEmbedder

# Two names, both the graph's own (found without the parse), that are also the low-level keywords.
TWO_NAMES = ("Who founded the organisation whose former warehouse on Salt Quay now houses the Velmora "
             "Maritime Museum?")


def run(ws: Any, question: str, mode: str, ahead: bool = True) -> tuple[Any, RecordingEmbedder, Any]:
    recording = RecordingEmbedder(ws.embedder, ahead=ahead)
    ws._embedder = recording
    try:
        ctx = query_context(ws, question)
        result = retrieve(ctx, mode)
    finally:
        ws._embedder = recording.inner
    return result, recording, ctx


def same_result(a: Any, b: Any) -> None:
    assert [h.chunk_id for h in a.chunks] == [h.chunk_id for h in b.chunks]
    assert [h.score for h in a.chunks] == [h.score for h in b.chunks]
    assert a.context_text == b.context_text and a.context_tokens == b.context_tokens


@pytest.mark.parametrize("mode", ["local", "global", "hybrid", "mix", "path"])
def test_names_found_without_the_parse_are_started_before_it(sample_ws, mode: str) -> None:
    result, recording, ctx = run(sample_ws, TWO_NAMES, mode)
    before_parse = ctx.names_before_parse()
    assert before_parse == ["Salt Quay", "Velmora Maritime Museum"]  # the graph's own names, in question order
    # the question, then each name, each its own call (then, after the parse, the strings a mode asks later)
    assert recording.ahead[:3] == [TWO_NAMES, *before_parse]
    assert set(before_parse) & set(recording.texts) == set(before_parse) & recording.taken_back()  # never twice
    reference, plain, _ = run(sample_ws, TWO_NAMES, mode, ahead=False)
    assert set(before_parse) <= set(plain.texts)  # the mode reads them: embedded after the parse otherwise
    same_result(result, reference)


@pytest.mark.parametrize("mode", ["naive", "tree"])
def test_modes_that_never_search_a_name_start_only_the_question(sample_ws, mode: str) -> None:
    _, recording, _ = run(sample_ws, TWO_NAMES, mode)
    assert recording.ahead in ([], [TWO_NAMES])
    assert not {"Salt Quay", "Velmora Maritime Museum"} & set(recording.texts)


def test_global_leaves_out_the_joined_names_that_are_only_the_low_keywords_joined(sample_ws) -> None:
    result, recording, ctx = run(sample_ws, TWO_NAMES, "global", ahead=False)
    low, high = ctx.keywords()
    joined = ", ".join(ctx.link_names())
    assert high and joined == ", ".join(low) and joined in ctx.query_texts()
    assert joined not in recording.texts
    everything = query_context(sample_ws, TWO_NAMES)
    everything.prefetch(everything.query_texts())
    same_result(result, retrieve(everything, "global"))


def fake_context(low: list[str], high: list[str], names: list[str]) -> Any:
    return SimpleNamespace(question="q?", strategies=SimpleNamespace(seeds=SimpleNamespace(shares_mode_seeds=True)),
                           link_names=lambda: list(names), keywords=lambda: (list(low), list(high)))


def test_global_keeps_the_low_keywords_joined_when_it_falls_back_to_them() -> None:
    names = ["Salt Quay", "Velmora Maritime Museum"]
    assert GlobalRetriever.unread_query_texts(fake_context(names, ["warehouse"], names)) == {", ".join(names)}
    assert GlobalRetriever.unread_query_texts(fake_context(names, [], names)) == set()  # searched as the fallback
    assert GlobalRetriever.unread_query_texts(fake_context(names, [], ["Salt Quay", "Museum"])) == {
        "Salt Quay, Museum"}


@pytest.mark.parametrize("mode", ["tree", "path"])
def test_chunk_rows_are_read_once_per_generation(sample_ws, monkeypatch, mode: str) -> None:
    question = "Who was the last resident keeper of Kestrel Point Lighthouse?"
    first = retrieve(query_context(sample_ws, question), mode)
    reads: list[list[str]] = []
    records = sample_ws.records
    original = records.chunks_by_id
    monkeypatch.setattr(records, "chunks_by_id", lambda ids: reads.append(list(ids)) or original(ids))
    again = retrieve(query_context(sample_ws, question), mode)
    assert first.chunks and reads == []
    same_result(again, first)
