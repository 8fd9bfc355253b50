"""The sentence that says the question's verb of the bridge is quoted first, not one that shares the verb with an
unrelated subject, nor a first-hop sentence (``core.answers.arguments``; each rule test fails when it is stubbed)."""
from __future__ import annotations

import networkx as nx

from core.answers.arguments import NAMED, NEAR, UNRELATED, Side, _parse, _sentence_sides, _side_grade, argument_fit, asked_relation
from core.answers.claim import claimed
from core.answers.question import make_frame, sentence_stems
from core.answers.scoring import Pick
from answer_picks import doc_pick

CO_FOUNDED = "Which company did the founding director of the Harbour Institute for Tides co-found?"


_pick = doc_pick


def _co_founded_picks() -> list[Pick]:
    other = _pick("The society was founded in the spring of 1862 by Mabel Crane, the widow of a boat owner.",
                  [("ORG", "society", ""), ("DATE", "1862", ""), ("PERSON", "Mabel Crane", "mabel crane")],
                  [], 3.2, "Fishers' Society")
    first_hop = _pick("The founding director of the Harbour Institute for Tides is Tomas Reyes, a professor of "
                      "physical oceanography.",
                      [("ORG", "the Harbour Institute for Tides", "harbour institute for tides"),
                       ("PERSON", "Tomas Reyes", "tomas reyes")], [], 3.0, "Harbour Institute for Tides")
    answer = _pick("Brinewave Energy was founded in 2011 by the oceanographer Tomas Reyes.",
                   [("ORG", "Brinewave Energy", "brinewave energy"), ("DATE", "2011", ""),
                    ("PERSON", "Tomas Reyes", "tomas reyes")], ["Brinewave Energy"], 2.6, "Brinewave Energy")
    return [other, first_hop, answer]


def test_the_question_is_read_for_its_verb_and_sides():
    co_founded = asked_relation(CO_FOUNDED)
    assert co_founded is not None and co_founded.verb == "found" and co_founded.answer == "undergoer"
    assert [(s.role, s.head) for s in co_founded.sides] == [("doer", "direc")]
    year = asked_relation("In what year was the society founded whose chairman organised the rescue?")
    assert year is not None and year.answer == "circumstance" and [s.role for s in year.sides] == ["undergoer"]
    named = asked_relation("Who founded the Harbour Institute for Tides?")
    assert named is not None and named.answer == "doer" and named.sides[0].names
    assert asked_relation("Who was the first keeper of Kestrel Point Lighthouse?") is None  # no verb of its own


def test_the_verb_said_of_the_bridge_grades_above_an_unrelated_subject():
    picks = _co_founded_picks()
    asked = asked_relation(CO_FOUNDED)
    assert asked is not None
    frame = make_frame(CO_FOUNDED, ["harbour institute for tides"])
    layers = (frozenset({sentence_stems("Tomas Reyes")}), frozenset())
    assert argument_fit(picks[2], asked, frame, nx.Graph(), layers) == NEAR  # Tomas Reyes: one hop from the Institute
    assert argument_fit(picks[1], asked, frame, nx.Graph(), layers) == 0  # first hop: no "found" verb in it
    unrelated = _pick("Brinewave Energy was founded in 2011 by the engineer Ada Quill.",
                      [("ORG", "Brinewave Energy", "brinewave energy"), ("PERSON", "Ada Quill", "ada quill")],
                      [], 2.0, "Brinewave Energy")
    assert argument_fit(unrelated, asked, frame, nx.Graph(), layers) <= 0  # Ada Quill: the question leads nowhere near her
    verb = next(t for t in _parse(unrelated.sentence.text) if t.lower_ == "founded")
    doer = _sentence_sides(verb)["doer"]
    assert _side_grade(Side("doer", frozenset(), "direc"), doer, unrelated, nx.Graph(), frozenset(), layers) == UNRELATED


def test_the_sentence_saying_the_verb_of_the_bridge_is_quoted_first():
    picks = _co_founded_picks()
    frame = make_frame(CO_FOUNDED, ["harbour institute for tides"])
    pick, _ = claimed(picks[0], picks, frame, nx.Graph())
    assert pick is not None and pick.sentence is picks[2].sentence


def test_without_the_argument_rule_the_shared_verb_stays_first(monkeypatch):
    from core.answers import arguments

    monkeypatch.setattr(arguments, "argued", lambda best, *a, **k: best)
    picks = _co_founded_picks()
    pick, _ = claimed(picks[0], picks, make_frame(CO_FOUNDED, ["harbour institute for tides"]), nx.Graph())
    assert pick is not None and pick.sentence is picks[0].sentence


YEAR = "In what year was the society founded whose chairman organised the rescue of the harbour town?"


def _year_picks() -> list[Pick]:
    company = _pick("Brinewave Energy was founded in 2011 by the oceanographer Tomas Reyes.",
                    [("ORG", "Brinewave Energy", "brinewave energy"), ("DATE", "2011", ""),
                     ("PERSON", "Tomas Reyes", "tomas reyes")], ["2011"], 3.4, "Brinewave Energy")
    society = _pick("The society was founded in the spring of 1862 by Mabel Crane, the widow of a boat owner.",
                  [("DATE", "the spring of 1862", ""), ("PERSON", "Mabel Crane", "mabel crane")],
                  ["the spring of 1862"], 2.9, "Fishers' Society")
    return [company, society]


def test_a_described_side_is_matched_by_its_head_noun():
    picks = _year_picks()
    asked = asked_relation(YEAR)
    assert asked is not None
    frame = make_frame(YEAR)
    assert argument_fit(picks[1], asked, frame, nx.Graph()) == NAMED  # "The society was founded …"
    assert argument_fit(picks[0], asked, frame, nx.Graph()) <= 0  # another founding, of a company
    pick, _ = claimed(picks[0], picks, frame, nx.Graph())
    assert pick is not None and pick.sentence is picks[1].sentence


def test_a_bolded_first_line_is_left_as_it_is(monkeypatch):
    """The rule only reorders a first line the claim checks left without a bold: it never replaces a bold."""
    from core.answers import claim

    picks = _year_picks()
    bolded = picks[0]
    monkeypatch.setattr(claim, "_first_claim", lambda *a, **k: (bolded, ""))
    pick, note = claimed(picks[0], picks, make_frame(YEAR), nx.Graph())
    assert pick is bolded and note == ""


def test_a_sentence_beyond_the_window_is_not_lifted(monkeypatch):
    from core.answers import arguments

    monkeypatch.setattr(arguments, "ARGUMENT_WINDOW", 0.1)
    picks = _year_picks()
    pick, _ = claimed(picks[0], picks, make_frame(YEAR), nx.Graph())
    assert pick is not None and pick.sentence is picks[0].sentence
