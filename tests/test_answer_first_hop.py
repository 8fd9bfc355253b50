"""The question's first relation (``core.answers.first_hop``): the words tying a name the question gives to the
entity it leads to, read from the question's parse — a noun owning the name or a verb taking it as an argument."""
from __future__ import annotations

import pytest

from core.answers.first_hop import first_relation
from core.answers.question import stem


@pytest.mark.parametrize("question, word", [
    ("Who is the spouse of the director of Jump for Glory?", "director"),
    ("What is the most popular hotel in Gisvi's city of birth?", "birth"),
    ("When was the country that produced Fist Power taken by the British?", "produced"),
    ("The state where Henry Worrall died has how many congressional districts?", "died"),
    ("What is the name of the airport in the city where WILM is licensed to broadcast?", "broadcast"),
])
def test_the_relation_tied_to_the_name_is_read(question: str, word: str):
    assert stem(word) in first_relation(question)


def test_the_outer_relation_without_a_name_is_not_read():
    relation = first_relation("Who is the spouse of the director of Jump for Glory?")
    assert stem("spouse") not in relation  # owned by "the director", not by a name


def test_a_question_without_names_has_no_first_relation():
    assert first_relation("What is the continental limit of the continent with the lowest average temperature?") == frozenset()
