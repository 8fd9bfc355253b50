"""ppr's recognition-memory filter (HippoRAG 2, issue 35): with an LLM configured, the top facts by cosine
go to the LLM and only those it keeps seed the walk; offline (or when the reply is unusable) the measured
rule of ``core.retrieval.ppr_seeds`` applies and the trace says which filter chose the facts.

The LLM is the tests' deterministic stand-in server (``tests/fake_openai.py``): it answers every chat
call with the text the test sets, so the kept facts are known in advance. A ppr that skipped the LLM
(the offline rule kept) fails the first check: the rule keeps up to five facts, the LLM here keeps one."""
from __future__ import annotations

import json

import pytest
from fake_openai import FakeOpenAI

from core.llm.recognition import fact_lines, parse_kept

WHO = "Who founded the Tidewater Shipping Cooperative in Port Sallow?"
FACTS = [("Ada Quill", "founded", "Tidewater Shipping Cooperative"), ("Port Sallow", "harbour of", "Velmora"),
         ("Ada Quill", "born in", "Port Sallow")]


def test_the_reply_is_read_as_numbers_or_triples():
    assert parse_kept('{"facts": [3, 1]}', FACTS) == [0, 2]
    assert parse_kept('```json\n{"facts": ["2", 9, 0, true]}\n```', FACTS) == [1]
    assert parse_kept('{"fact": [["ada quill", "founded", "Tidewater Shipping Cooperative"]]}', FACTS) == [0]
    assert parse_kept('{"facts": [["Port Sallow", "x", "Ada Quill"]]}', FACTS) == [2]  # either direction
    assert parse_kept('{"facts": []}', FACTS) == []
    for unusable in ("Hello world", '{"answer": [1]}', '{"facts": "1"}', "[1, 2]"):
        assert parse_kept(unusable, FACTS) is None
    assert fact_lines(FACTS).splitlines()[1] == "2. (Port Sallow, harbour of, Velmora)"


@pytest.fixture()
def fake_llm():
    server = FakeOpenAI()
    yield server
    server.close()


def _ppr(ws, server):
    from core.llm.keywords import LLMKeywords
    from core.llm.provider import chat_from_settings
    from core.retrieval.registry import query_context, retrieve

    settings = ws.settings.model_copy(update={"provider": "openai", "llm_base_url": server.url,
                                              "llm_model": server.model})
    keywords = LLMKeywords(chat_from_settings(settings, "test-key"))
    result = retrieve(query_context(ws, WHO, keywords=keywords), "ppr")
    [event] = result.events("ppr_seeds")
    return result, event.data


def _top_facts(ws) -> list[tuple[str, str]]:
    from core.retrieval.ppr_seeds import RAGSCOPE
    from core.retrieval.registry import query_context

    ctx = query_context(ws, WHO)
    found = [(str(k[0]), str(k[1])) for k, _ in ws.views.vectors.ranked_keys("relations", ctx.embed(WHO), 50)
             if k[0] in ctx.graph and k[1] in ctx.graph]
    return found[:RAGSCOPE.facts]


def test_with_an_llm_the_facts_it_keeps_seed_the_walk(sample_ws, fake_llm):
    top = _top_facts(sample_ws)
    assert len(top) >= 2
    fake_llm.reply = json.dumps({"facts": [2]})
    result, seeds = _ppr(sample_ws, fake_llm)
    assert seeds["fact_filter"].startswith("LLM recognition filter") and seeds["facts"] == 1, seeds
    a, b = top[1]
    fact_seeds = [s for s in seeds["seeds"] if s["kind"] == "fact"]
    assert {s["key"] for s in fact_seeds} == {a, b}
    asked = [r for r in fake_llm.chat_requests() if "Candidate facts" in json.dumps(r["body"])]
    assert len(asked) == 1
    prompt = asked[0]["body"]["messages"][-1]["content"]
    graph = sample_ws.views.graph
    assert all(graph.name(x) in prompt for pair in top for x in pair)
    assert result.llm_calls >= 1


def test_an_unusable_reply_falls_back_to_the_offline_rule(sample_ws, fake_llm):
    from core.retrieval.ppr_seeds import OFFLINE_RULE
    from core.retrieval.registry import query_context, retrieve

    fake_llm.reply = "I cannot tell."
    _, seeds = _ppr(sample_ws, fake_llm)
    assert seeds["fact_filter"].startswith(OFFLINE_RULE) and "unusable" in seeds["fact_filter"]
    [offline] = retrieve(query_context(sample_ws, WHO), "ppr").events("ppr_seeds")
    assert offline.data["fact_filter"] == OFFLINE_RULE
    assert [s["key"] for s in seeds["seeds"]] == [s["key"] for s in offline.data["seeds"]]


def test_an_empty_verdict_seeds_no_fact(sample_ws, fake_llm):
    fake_llm.reply = '{"facts": []}'
    _, seeds = _ppr(sample_ws, fake_llm)
    assert seeds["facts"] == 0 and not [s for s in seeds["seeds"] if s["kind"] == "fact"]
    assert seeds["fact_filter"].startswith("LLM recognition filter")
