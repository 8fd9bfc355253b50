"""Does a question ask one relation of the entity it names (``core.answers.one_hop.single_relation``)? Read from
the question's parse: the word tying each name to the question is the main verb or a noun argument of it, and
the main verb has no other noun argument."""
from __future__ import annotations

import pytest

from core.answers.one_hop import single_relation


@pytest.mark.parametrize("question", [
    "Where is the terminus of the Velmora Coastal Railway?",
    "Who directed Jump for Glory?",
    "Who is the wife of Kim Jong-chul?",
])
def test_one_relation_of_a_named_entity(question: str):
    assert single_relation(question)


@pytest.mark.parametrize("question", [
    "Who is the spouse of the director of Jump for Glory?",  # the director is a bridge
    "What country was the author of Brand a citizen of?",  # the author is a bridge ("a citizen of": a second relation)
    "The state where Henry Worrall died has how many congressional districts?",  # the state is a bridge
    "What is the continental limit of the continent with the lowest average temperature?",  # no name to start from
    "Who married the director of Jump for Glory?",  # the director, object of "married", is a bridge
    "Which state is the birthplace of Meehan Bonnar in?",  # the stranded "in": the state is reached from the birthplace
    "Who did the oceanographer meet at Meridian Tidal Power?",  # the verb's subject is described, not named
])
def test_a_question_that_hops_through_another_entity(question: str):
    assert not single_relation(question)
