"""Issue 35 (c): a fused auto candidate carries the entity and relation rows of its LightRAG part (mix), within
mix's budgets, in its context and so in the LLM's message; a fused result stripped of the rows (the old
chunk-list fusion) fails the same checks."""
from __future__ import annotations

import pytest

from core.routing.features import FEATURES
from core.routing.fusion import FUSED, interleave
from core.routing.model import RouterModel

WHO = "Who founded the Tidewater Shipping Cooperative in Port Sallow?"


def _always(candidate: str) -> RouterModel:
    zeros = [0.0] * len(FEATURES)
    return RouterModel(default=candidate, features=list(FEATURES), mean=zeros, scale=[1.0] * len(FEATURES), gains={})


def _check(ws, question: str) -> None:
    from core.answers import extractive_answer
    from core.retrieval.registry import query_context, retrieve

    mix = retrieve(query_context(ws, question), "mix")
    ppr = retrieve(query_context(ws, question), "ppr")
    ctx = query_context(ws, question)
    auto = retrieve(ctx, "auto")
    assert auto.route["chosen"] == FUSED
    # the rows are mix's, in mix's order, and the context renders them as mix's does
    assert auto.relations and [(r.source_key, r.target_key) for r in auto.relations] == \
        [(r.source_key, r.target_key) for r in mix.relations][:len(auto.relations)]
    assert [e.key for e in auto.entities] == [e.key for e in mix.entities][:len(auto.entities)]
    assert "-----Relationships-----" in auto.context_text and auto.relations[0].source in auto.context_text
    # the chunks are still the parts interleaved, within the total budget
    want = interleave([ppr.evidence_chunk_ids, mix.evidence_chunk_ids])
    assert auto.evidence_chunk_ids and auto.evidence_chunk_ids == want[:len(auto.evidence_chunk_ids)]
    assert auto.context_tokens <= ws.settings.max_total_tokens
    # the offline answer is built from the interleaved chunks (naive's builder, measured better than mix's
    # on the fused rows); the LLM's message is the context, so it holds mix's relation rows
    answer = extractive_answer(auto, ws, query_context(ws, question))
    assert answer.text
    from core.routing.auto_mode import auto_llm_message, chosen_mode
    assert chosen_mode(auto) == "naive"
    message = auto_llm_message(auto)
    assert "-----Relationships-----" in message and auto.relations[0].source in message


def test_fused_result_carries_mix_rows_and_is_answered_by_mix_builder(sample_ws, monkeypatch):
    from core.routing import auto_mode

    monkeypatch.setattr(auto_mode, "model_for", lambda ws: (_always(FUSED), "test"))
    _check(sample_ws, WHO)


def test_a_fused_result_without_rows_fails(sample_ws, monkeypatch):
    from core.routing import auto_mode, fusion

    monkeypatch.setattr(auto_mode, "model_for", lambda ws: (_always(FUSED), "test"))
    real = fusion.fused_result

    def chunks_only(ctx, candidate=FUSED):
        result = real(ctx, candidate)
        result.entities, result.relations = [], []
        return result

    monkeypatch.setattr(auto_mode, "fused_result", chunks_only)
    with pytest.raises(AssertionError):
        _check(sample_ws, WHO)


def test_a_fused_result_counts_the_shared_keyword_call_once(sample_ws):
    """mix, global and path each add the question's keyword extraction to their own usage; the four-part
    fusion runs all three on one context, where the extraction ran once."""
    from core.retrieval.keywords import OfflineKeywords
    from core.retrieval.registry import query_context
    from core.routing.fusion import fused_result

    class BilledKeywords(OfflineKeywords):
        last_usage = {"llm_calls": 1, "prompt_tokens": 40, "completion_tokens": 7}

    ctx = query_context(sample_ws, WHO, keywords=BilledKeywords())
    result = fused_result(ctx, "ppr+mix+global+path")
    assert (result.llm_calls, result.prompt_tokens, result.completion_tokens) == (1, 40, 7)
    alone = fused_result(query_context(sample_ws, WHO, keywords=BilledKeywords()), FUSED)
    assert alone.llm_calls == 1  # ppr+mix: only mix bills it
