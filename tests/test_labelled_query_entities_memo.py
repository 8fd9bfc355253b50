"""A question's labelled mention-graph terms are worked out once per parse (issue 36: the tree mode asks
three times per question) and are the same list every time, and per set of entity types."""
from __future__ import annotations

from core.extraction import query_terms
from core.extraction.query_terms import _parse, labelled_query_entities
from core.settings import Settings

QUESTION = "Who was the first keeper of Kestrel Point Lighthouse, built by the Velmora Harbour Board?"


def test_the_terms_are_worked_out_once_per_parse(monkeypatch) -> None:
    types = Settings().entity_types
    _parse.cache_clear()
    calls: list[int] = []
    real = query_terms.sentence_occurrences
    monkeypatch.setattr(query_terms, "sentence_occurrences", lambda doc, t: calls.append(1) or real(doc, t))
    first = labelled_query_entities(QUESTION, types)
    assert first and ("keeper", "NOUN") in first
    first.append(("changed by a caller", "X"))  # a caller's list is its own
    again = labelled_query_entities(QUESTION, list(types))
    assert again == first[:-1] and len(calls) == 1
    only_orgs = labelled_query_entities(QUESTION, ["ORG"])
    assert len(calls) == 2 and all(label in ("ORG", "NOUN", "PROPN") for _, label in only_orgs)
    _parse.cache_clear()  # a new parse (the benchmarks clear it per timed call) works them out again
    assert labelled_query_entities(QUESTION, types) == again and len(calls) == 3
