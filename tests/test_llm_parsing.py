"""LLM-path unit tests without a server: the record parser on malformed outputs, keyword JSON,
the cache/usage wrappers, answer prompts and provider resolution (fake chat models)."""
from __future__ import annotations

import sqlite3
import threading
from types import SimpleNamespace

import pytest

from core.llm.cache import CachedChat, UsageCounter, cache_key
from core.llm.client import Completion
from core.llm.keywords import LLMKeywords, parse_keywords
from core.llm.records import normalize_type, parse_records

TYPES = ["PERSON", "ORG", "GPE", "LOC", "EVENT", "PRODUCT"]


def names(records):
    return [r.name for r in records]


def test_clean_pipe_records():
    text = ("entity | Marie Curie | PERSON | Physicist who studied radioactivity.\n"
            "entity | Sorbonne | ORG | University in Paris.\n"
            "relation | Marie Curie | Sorbonne | teaching, professorship | She taught at the Sorbonne. | 8\n"
            "END\n")
    ents, rels, dropped = parse_records(text, TYPES)
    assert names(ents) == ["Marie Curie", "Sorbonne"]
    assert [e.type for e in ents] == ["PERSON", "ORG"]
    assert ents[0].description == "Physicist who studied radioactivity."
    assert len(rels) == 1 and rels[0].keywords == ["teaching", "professorship"] and rels[0].weight == 8.0
    assert rels[0].description == "She taught at the Sorbonne."
    assert dropped == []


def test_mixed_and_wrong_delimiters():
    text = ('entity<|>Acme Corp<|>organization<|>A maker of anvils.\n'
            '("entity"<|>"Wile E. Coyote"<|>"PERSON"<|>"A customer of Acme.")##\n'
            'entity\tRoad Runner\tPERSON\tA fast bird.\n'
            'relation ; Wile E. Coyote ; Acme Corp ; customer ; Buys anvils. ; 6\n'
            'relation | Road Runner <|> Wile E. Coyote | chase | The coyote chases the bird | 9\n'
            '("entity", "Desert", "LOC", "Dry land, hot")\n')
    ents, rels, dropped = parse_records(text, TYPES)
    assert names(ents) == ["Acme Corp", "Wile E. Coyote", "Road Runner", "Desert"]
    assert [e.type for e in ents] == ["ORG", "PERSON", "PERSON", "LOC"]
    assert {(r.source, r.target) for r in rels} == {("Wile E. Coyote", "Acme Corp"), ("Road Runner", "Wile E. Coyote")}
    assert all(r.weight in (6.0, 9.0) for r in rels)
    assert not dropped


def test_prose_fences_repeats_and_truncation_are_dropped_with_reasons():
    text = ("Sure! Here are the records you asked for:\n```\n"
            "1. entity | **Alice** | person | A chemist.\n"
            "- entity | Alice | PERSON | Said again.\n"
            "entity | Bob | PERSON\n"
            "relation | Alice | Bob | friends | They are friends. | 5\n"
            "relation | Bob | Alice | friends | Repeated the other way round. | 5\n"
            "relation | Alice | Alice | self | Loops are meaningless. | 3\n"
            "entity |  | ORG | No name.\n"
            "```\nI hope this helps.\nentity | Caro")
    ents, rels, dropped = parse_records(text, TYPES)
    assert names(ents) == ["Alice", "Bob"]
    assert ents[1].description == ""  # a missing description is tolerated
    assert len(rels) == 1
    reasons = " / ".join(dropped)
    for reason in ("not a record: Sure!", "repeated entity", "repeated relation", "relation of an entity with itself",
                   "entity without a name", "not a record: I hope", "entity with missing fields (truncated?)"):
        assert reason in reasons, reason


def test_missing_relation_fields_and_strength():
    ents, rels, dropped = parse_records("relation | Alice | Bob\nrelation | Carol\nrelation | A | B | kw | 7", TYPES)
    assert [(r.source, r.target, r.weight) for r in rels] == [("Alice", "Bob", 1.0), ("A", "B", 7.0)]
    assert rels[1].keywords == ["kw"] and rels[1].description == ""
    assert any("relation with missing fields" in d for d in dropped)
    assert ents == []


def test_json_outputs():
    obj = ('```json\n{"entities": [{"name": "Ada", "type": "person", "description": "A mathematician."}],\n'
           ' "relationships": [{"source": "Ada", "target": "Engine", "keywords": ["program"], "strength": "8"}]}\n```')
    ents, rels, _ = parse_records(obj, TYPES)
    assert names(ents) == ["Ada"] and ents[0].type == "PERSON"
    assert rels[0].keywords == ["program"] and rels[0].weight == 8.0
    listing = ('Here you go: [{"entity_name": "Globex", "entity_type": "company"}, '
               '{"src_id": "Globex", "tgt_id": "Ohio", "description": "based in"}, 42]')
    ents, rels, dropped = parse_records(listing, TYPES)
    assert names(ents) == ["Globex"] and ents[0].type == "ORG"
    assert rels[0].description == "based in"
    assert any("not an object" in d for d in dropped)


@pytest.mark.parametrize("text", [None, "", "   ", "END", "```\n```", "{", "[1, 2", "|||||", "entity",
                                  "relation |", "\x00\x01 garbage \uffff", "entity | " + "x" * 500 + " | PERSON | d",
                                  "{\"entities\": \"not a list\"}", "<|>" * 50, "entity | a | b | c\n" * 200])
def test_parser_never_raises(text):
    ents, rels, dropped = parse_records(text, TYPES)
    assert isinstance(ents, list) and isinstance(rels, list) and isinstance(dropped, list)
    assert len(ents) <= 1


def test_type_normalisation():
    assert normalize_type("Organisation", TYPES) == "ORG"
    assert normalize_type("geo", TYPES) == "GPE"
    assert normalize_type("spaceship", TYPES) == "UNKNOWN"
    assert normalize_type("event", TYPES) == "EVENT"
    assert normalize_type("Work of art") == "WORK_OF_ART"


def test_keyword_json_parsing():
    assert parse_keywords('{"high_level_keywords": ["economy"], "low_level_keywords": ["Ohio", "Acme"]}') == (
        ["Ohio", "Acme"], ["economy"])
    assert parse_keywords('Sure:\n```json\n{"high": "a, b", "low": ["c"]}\n```') == (["c"], ["a", "b"])
    assert parse_keywords("keywords: Ohio, Acme") is None
    assert parse_keywords('{"answer": 1}') is None
    assert parse_keywords("[1, 2]") is None


class FakeChat:
    """A chat model that returns scripted replies and counts its calls."""

    def __init__(self, replies, model="fake-model"):
        self.replies = list(replies)
        self.model = model
        self.calls = 0
        self.cancel_event = threading.Event()

    def cache_params(self, json_mode=False, max_tokens=None):
        return {"model": self.model, "json_mode": json_mode, "max_tokens": max_tokens or 64}

    def complete(self, messages, *, stage, json_mode=False, max_tokens=None):
        self.calls += 1
        reply = self.replies[min(self.calls - 1, len(self.replies) - 1)]
        return Completion(reply, 10, 5)


def test_keywords_fall_back_to_offline_on_bad_json():
    keywords = LLMKeywords(FakeChat(["I think the keywords are Ohio and jobs."]))
    low, high = keywords.extract("How did Acme affect jobs in Ohio?")
    assert keywords.last_source == "offline fallback" and "not valid JSON" in keywords.last_note
    assert "Ohio" in low and keywords.last_usage["llm_calls"] == 1
    good = LLMKeywords(FakeChat(['{"high_level_keywords": ["employment"], "low_level_keywords": ["Ohio"]}']))
    assert good.extract("How did Acme affect jobs in Ohio?") == (["Ohio"], ["employment"])
    assert good.last_source == "llm" and good.last_usage == {"llm_calls": 1, "prompt_tokens": 10,
                                                             "completion_tokens": 5}


def _db(tmp_path):
    from core.storage.sqlite_backend import SqliteStore

    SqliteStore(tmp_path / "ws.sqlite3").close()  # a workspace database: its schema, WAL mode
    return sqlite3.connect(tmp_path / "ws.sqlite3", check_same_thread=False)


def test_cache_hits_cost_no_call_and_usage_is_recorded(tmp_path):
    conn = _db(tmp_path)
    fake = FakeChat(["one", "two"])
    chat = UsageCounter(CachedChat(fake, conn), conn)
    messages = [{"role": "user", "content": "hello"}]
    first = chat.complete(messages, stage="answer")
    again = chat.complete(messages, stage="answer")
    other = chat.complete(messages, stage="answer", max_tokens=7)  # parameters are part of the key
    assert (first.text, again.text, other.text) == ("one", "one", "two")
    assert again.cached and not first.cached and fake.calls == 2
    assert chat.flush()
    row = conn.execute("SELECT calls, cached, prompt_tokens, completion_tokens FROM llm_usage WHERE stage='answer'"
                       ).fetchone()
    assert tuple(row) == (2, 1, 20, 10)
    # a new wrapper over the same database answers from the stored cache
    fresh = FakeChat(["three"])
    reopened = UsageCounter(CachedChat(fresh, conn), conn)
    assert reopened.complete(messages, stage="answer").text == "one" and fresh.calls == 0
    assert conn.execute("SELECT count(*) FROM llm_cache").fetchone()[0] == 2


def test_cache_writes_wait_while_a_batch_transaction_is_open(tmp_path):
    conn = _db(tmp_path)
    chat = UsageCounter(CachedChat(FakeChat(["x"]), conn), conn)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO meta(key, value) VALUES ('probe', '1')")
    chat.complete([{"role": "user", "content": "q"}], stage="summaries")  # must neither block nor commit
    assert conn.in_transaction
    conn.rollback()
    assert conn.execute("SELECT count(*) FROM meta WHERE key='probe'").fetchone()[0] == 0
    assert chat.flush()
    assert conn.execute("SELECT count(*) FROM llm_cache").fetchone()[0] == 1
    assert conn.execute("SELECT calls FROM llm_usage WHERE stage='summaries'").fetchone()[0] == 1


def test_cache_key_depends_on_model_messages_and_params():
    m = [{"role": "user", "content": "a"}]
    assert cache_key("x", m, {"t": 0}) == cache_key("x", [dict(m[0])], {"t": 0})
    assert cache_key("x", m, {"t": 0}) != cache_key("y", m, {"t": 0})
    assert cache_key("x", m, {"t": 0}) != cache_key("x", m, {"t": 1})
    assert cache_key("x", m, {"t": 0}) != cache_key("x", [{"role": "user", "content": "b"}], {"t": 0})


def test_answer_prompts_and_usage():
    from core.llm.generated_answers import answer_messages, generate_answer, stream_answer
    from core.types import RetrievalResult

    path = RetrievalResult(mode="path", query="Who?", context_text="Question: Who?\nPath 1 (least reliable) ...")
    assert answer_messages(path)[1]["content"] == path.context_text
    naive = RetrievalResult(mode="naive", query="Who?", context_text="[1] text")
    user = answer_messages(naive)[1]["content"]
    assert user.index("[1] text") < user.index("Question: Who?")
    chat = FakeChat(["Alice did."])
    answer = generate_answer(chat, naive)
    assert (answer.kind, answer.model, answer.text) == ("llm", "fake-model", "Alice did.")
    assert (naive.llm_calls, naive.prompt_tokens, naive.completion_tokens) == (1, 10, 5)
    streamed = RetrievalResult(mode="local", query="Who?", context_text="ctx")
    assert "".join(stream_answer(chat, streamed)) == "Alice did."  # no stream(): one complete() call
    assert streamed.answer.kind == "llm" and streamed.llm_calls == 1
    empty = RetrievalResult(mode="tree", query="Who?", context_text="")
    assert generate_answer(chat, empty).kind == "llm" and empty.llm_calls == 0


def test_llm_extractor_gleans_and_keeps_spacy_mentions():
    from core.llm.extraction import LLMExtractor
    from core.settings import Settings

    replies = ["entity | Alice | PERSON | A chemist.\nentity | Ada Lovelace | PERSON | copied\nEND",
               "entity | Acme | ORG | A company.\nrelation | Alice | Acme | employment | Works there. | 7\nEND"]
    chat = FakeChat(replies)
    extractor = LLMExtractor(chat, Settings(llm_concurrency=2))
    [ex] = extractor.extract(["Alice works as a chemist at Acme in Paris."])
    assert extractor.name == "llm:fake-model"
    assert names(ex.entities) == ["Alice", "Acme"] and len(ex.relations) == 1
    assert any("copied from the prompt's example" in d for d in ex.dropped)
    assert ex.mentions.counts, "the mention graph comes from spaCy"
    assert chat.calls == 2  # extraction + one gleaning pass


def test_provider_resolution(monkeypatch):
    from core.config import resolve_llm
    from core.settings import Settings

    for var in ("RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert resolve_llm(Settings()) is None
    configured = Settings(provider="openai", llm_base_url="http://s/v1", llm_model="m")
    assert resolve_llm(configured) == ("http://s/v1", "m")
    monkeypatch.setenv("RAGSCOPE_LLM_MODEL", "env-model")
    assert resolve_llm(configured) == ("http://s/v1", "env-model")
    assert resolve_llm(configured, model="flag-model") == ("http://s/v1", "flag-model")
    monkeypatch.delenv("RAGSCOPE_LLM_MODEL")
    with pytest.raises(ValueError, match="--llm-model"):
        resolve_llm(Settings(), base_url="http://s/v1")


def test_providers_offline_flag(tmp_path):
    from core.cli.base import providers
    from core.settings import Settings

    configured = Settings(provider="openai", llm_base_url="http://x", llm_model="m")
    ws = SimpleNamespace(settings=configured, store=SimpleNamespace(conn=sqlite3.connect(":memory:")))
    assert providers(ws, SimpleNamespace(offline=True)) == (None, None)


def test_fields_in_the_wrong_place():
    """What SmolLM2-135M actually writes: relations in entity format, descriptions as names or types."""
    text = ("relation | Elsa Marrow | Astronomer who designed the Harwick Observatory.\n"
            "relation | Elsa Marrow | PERSON | Astronomer.\n"
            "entity | Otto Brandt | Instrument maker who built the telescope\n"
            "entity | City | GPE | A city.\n"
            "entity | The observatory was founded by a woman in 1911. | EVENT | x\n")
    ents, rels, dropped = parse_records(text, TYPES)
    assert [(e.name, e.type, e.description) for e in ents] == [
        ("Otto Brandt", "UNKNOWN", "Instrument maker who built the telescope")]
    assert rels == []
    reasons = " / ".join(dropped)
    for reason in ("relation endpoint looks like a sentence", "relation endpoint is a type label",
                   "entity name is a type label", "entity name looks like a sentence"):
        assert reason in reasons, reason


def test_keywords_copied_from_the_example_are_ignored():
    copied = LLMKeywords(FakeChat(['{"high_level_keywords": ["corporate merger"], "low_level_keywords": ["Acme"]}']))
    low, _high = copied.extract("Who runs the harbour at Port Sallow?")
    assert copied.last_source == "offline fallback" and "example" in copied.last_note
    assert "Port Sallow" in low
    kept = LLMKeywords(FakeChat(['{"high_level_keywords": ["jobs"], "low_level_keywords": ["Acme", "Port Sallow"]}']))
    assert kept.extract("Did Acme create jobs in Port Sallow?") == (["Acme", "Port Sallow"], ["jobs"])
