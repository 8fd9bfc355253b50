"""A LightRAG mode run alone embeds only the query strings it reads (global: not the joined names; local:
not the high-level keywords joined), with the int8 embedder whose vectors do not depend on their batch;
the results are those of a run that embedded every string first. Other embedders embed every string."""
from __future__ import annotations

from typing import Any

import pytest

from core.retrieval.registry import query_context, retrieve

from tests.recording_embedder import RecordingEmbedder

QUESTION = "What role did the Velmora Marine Institute play in the Carrow Sound fishing dispute?"


def run(ws: Any, mode: str, alone: bool = True, everything_first: bool = False) -> tuple[Any, list[str], Any]:
    recording = RecordingEmbedder(ws.embedder, alone=alone, ahead=False)
    ws._embedder = recording
    try:
        ctx = query_context(ws, QUESTION)
        if everything_first:
            ctx.prefetch(ctx.query_texts())
        result = retrieve(ctx, mode)
    finally:
        ws._embedder = recording.inner
    return result, recording.texts, ctx


@pytest.mark.parametrize("mode", ["global", "local"])
def test_a_lightrag_mode_alone_leaves_out_the_string_it_never_reads(sample_ws, mode: str) -> None:
    assert getattr(sample_ws.embedder, "query_vectors_alone", False)  # the default int8 embedder
    result, embedded, ctx = run(sample_ws, mode)
    names = ctx.link_names()
    low, high = ctx.keywords()
    unread = ", ".join(names) if mode == "global" else ", ".join(high)
    assert len(names) >= 2 and low and high  # the question exercises both rules
    assert unread in ctx.query_texts() and unread not in embedded
    assert len(set(embedded)) == len(embedded) == len(ctx.query_texts()) - 1
    reference, everything, _ = run(sample_ws, mode, everything_first=True)
    assert unread in everything
    assert [h.chunk_id for h in result.chunks] == [h.chunk_id for h in reference.chunks]
    assert result.context_text == reference.context_text and result.context_tokens == reference.context_tokens


@pytest.mark.parametrize("mode", ["global", "local", "hybrid"])
def test_batch_dependent_embedder_and_hybrid_embed_every_string(sample_ws, mode: str) -> None:
    """hybrid reads every string; an embedder whose vectors depend on their batch (torch's packed call)
    keeps the one batch of every string, so its vectors stay as they were."""
    alone = mode == "hybrid"
    _, embedded, ctx = run(sample_ws, mode, alone=alone)
    assert sorted(embedded) == sorted(ctx.query_texts())
