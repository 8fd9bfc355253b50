"""The last gates on a bold (core.answers.grounding): a sentence not about the question, one that does not
state the verb the question's wh-word asks about, and a number that counts something else are quoted
without a bold. Each case is one of the categories of wrong bolds left on the MuSiQue dev sets; each test
fails when its gate is replaced by a pass-through."""
from __future__ import annotations

import networkx as nx
import pytest

from core.answers import grounding
from core.answers.claim import claimed
from core.answers.grounding import NOTE_COUNT, NOTE_UNGROUNDED, NOTE_VERB, asked_verb, counts_another_thing
from core.answers.question import make_frame, sentence_stems
from core.answers.scoring import Pick
from core.answers.sentences import Sentence

GRAPH = nx.Graph()
GOAL_QUESTION = "Who scored the first goal of last season for Peter Bonetti's team?"
SPORT_QUESTION = "David Jones is an international in rugby union and another sport that was started when?"
DEBT_QUESTION = "What is the debt load for the US carried by the country Dai Jitao is from?"


def _pick(text: str, mentions: list[tuple[str, str, str]], typed: list[str], score: float = 4.0,
          doc: str = "doc.md") -> Pick:
    keys = frozenset(key for _, _, key in mentions if key)
    sentence = Sentence(text, "c-" + text[:12], 0, f"{doc}, chunk 1", mentions, keys, sentence_stems(text), doc=doc)
    return Pick(sentence, score, "chunk", "chunk #1", typed)


def _goal_picks() -> tuple[Pick, Pick, Pick]:
    other_team = _pick("In the Championship game Uceda scored the first goal to give the Spirit the only goal they needed.",
                       [("PERSON", "Uceda", "uceda"), ("ORG", "Spirit", "spirit")], ["Uceda"])
    bridge = _pick("Peter Bonetti kept goal for Chelsea for nineteen years.",
                   [("PERSON", "Peter Bonetti", "peter bonetti"), ("ORG", "Chelsea", "chelsea")], [], 1.0)
    answer = _pick("Bertrand Traore scored the first goal of last season for Chelsea.",
                   [("PERSON", "Bertrand Traore", "bertrand traore"), ("ORG", "Chelsea", "chelsea")],
                   ["Bertrand Traore"], 3.0)
    return other_team, bridge, answer


def test_a_sentence_about_another_team_is_not_bolded():
    frame = make_frame(GOAL_QUESTION)
    other_team, bridge, _ = _goal_picks()
    pick, note = claimed(other_team, [other_team, bridge], frame, GRAPH)
    assert pick is not None and pick.sentence is other_team.sentence
    assert pick.typed == [] and note == NOTE_UNGROUNDED


def test_a_sentence_naming_the_bridge_the_evidence_reached_keeps_its_bold():
    frame = make_frame(GOAL_QUESTION)
    _, bridge, answer = _goal_picks()
    pick, note = claimed(answer, [answer, bridge], frame, GRAPH)
    assert pick is not None and pick.typed == ["Bertrand Traore"] and note == ""


def test_the_documents_title_grounds_a_sentence():
    """The title names the passage's subject: "Its main base is X" in the article on the question's subject."""
    frame = make_frame("What is the main base of PNG Air?")
    own = _pick("Its main base is Jacksons International Airport.", [("FAC", "Jacksons International Airport", "jia")],
                ["Jacksons International Airport"], doc="PNG Air")
    assert grounding.grounded(own, [own], frame, GRAPH)
    elsewhere = _pick("Its main base is Jacksons International Airport.",
                      [("FAC", "Jacksons International Airport", "jia")], ["Jacksons International Airport"],
                      doc="Air Niugini")
    assert not grounding.grounded(elsewhere, [elsewhere], frame, GRAPH)


def test_the_grounding_gate_is_what_removes_the_bold(monkeypatch):
    monkeypatch.setattr(grounding, "grounded", lambda *a, **k: True)
    frame = make_frame(GOAL_QUESTION)
    other_team, bridge, _ = _goal_picks()
    pick, _ = claimed(other_team, [other_team, bridge], frame, GRAPH)
    assert pick is not None and pick.typed == ["Uceda"]


def test_the_asked_verb_is_read_from_the_interrogative_wh_word_only():
    assert asked_verb(SPORT_QUESTION) == ("start", "start")
    assert asked_verb("When did the university receive its charter?") == ("recei", "recei")
    assert asked_verb("The state where Henry Worrall died has how many congressional districts?") is None  # relative "where"
    assert asked_verb("Who was the first keeper of Kestrel Point Lighthouse?") is None  # a copula asks nothing
    # "how many" is answered by other verbs ("whose six turbines" for "make up"): the relation checks hold
    assert asked_verb("How many turbines make up the power station developed by the company that Peter Okafor "
                      "co-founded?") is None


def _lifespan() -> Pick:
    return _pick('David "Tarw" Jones (1881- 21 January 1933) (also known as Dai Jones) was a Welsh dual-code '
                 "international rugby union and rugby league footballer.",
                 [("PERSON", 'David "Tarw" Jones', "david jones"), ("DATE", "1881- 21 January 1933", ""),
                  ("ORG", "rugby league", "rugby league")], ["1881- 21 January 1933"])


def test_a_date_of_something_else_than_the_asked_verb_is_not_bolded():
    frame = make_frame(SPORT_QUESTION)
    lifespan = _lifespan()
    pick, note = claimed(lifespan, [lifespan], frame, GRAPH)
    assert pick is not None and pick.typed == [] and note == NOTE_VERB


def test_the_asked_verb_gate_is_what_removes_the_bold(monkeypatch):
    monkeypatch.setattr(grounding, "states_asked_verb", lambda *a, **k: True)
    frame = make_frame(SPORT_QUESTION)
    lifespan = _lifespan()
    pick, _ = claimed(lifespan, [lifespan], frame, GRAPH)
    assert pick is not None and pick.typed == ["1881- 21 January 1933"]


def _count() -> Pick:
    return _pick("Debt held by the public of the US was approximately 77% of GDP in 2017, ranked 43rd highest "
                 "out of 207 countries.", [("GPE", "US", "us"), ("CARDINAL", "207", "")], ["207"])


def test_a_number_that_counts_another_thing_is_not_bolded():
    frame = make_frame(DEBT_QUESTION)
    count = _count()
    assert counts_another_thing(count, frame, frozenset({"debt", "load"}))
    pick, note = claimed(count, [count], frame, GRAPH)
    assert pick is not None and pick.typed == [] and note == NOTE_COUNT


def test_a_number_that_counts_what_is_asked_keeps_its_bold(monkeypatch):
    frame = make_frame("How many districts is Kansas divided into?")
    count = _pick("Kansas is divided into 4 districts.", [("GPE", "Kansas", "kansas"), ("CARDINAL", "4", "")], ["4"])
    assert not counts_another_thing(count, frame, frozenset({"district", "divid"}))
    monkeypatch.setattr(grounding, "counts_another_thing", lambda *a, **k: False)
    pick, _ = claimed(_count(), [_count()], make_frame(DEBT_QUESTION), GRAPH)
    assert pick is not None and pick.typed == ["207"]  # the gate removed: the wrong count is bolded again


@pytest.mark.parametrize("question", [GOAL_QUESTION, SPORT_QUESTION, DEBT_QUESTION])
def test_a_refused_bold_still_quotes_the_sentence_first(question):
    frame = make_frame(question)
    picks = {GOAL_QUESTION: _goal_picks()[0], SPORT_QUESTION: _lifespan(), DEBT_QUESTION: _count()}
    best = picks[question]
    pick, note = claimed(best, [best], frame, GRAPH)
    assert pick is not None and pick.sentence is best.sentence and note


def test_a_structure_wants_a_facility_and_a_body_of_water_a_location():
    """Span of the wrong type: "the airport in the city …" bolded the state the airport lies in, "the body of
    water by …" a county. A structure's first label is FAC and a body of water is never a town or a county."""
    from core.answers.question import answer_types
    from core.answers.scoring import typed_mentions

    assert answer_types("What is the name of the airport in the city where WILM is licensed to broadcast?")[0][0] == "FAC"
    assert "GPE" not in answer_types("Which is the body of water by the birthplace of the author of Dead Ernest?")[0]
    frame = make_frame("What is the name of the airport in the city where WILM is licensed to broadcast?")
    airport = _pick("Wilmington International Airport is a public airport located just north of Wilmington, North Carolina.",
                    [("FAC", "Wilmington International Airport", "wia"), ("GPE", "Wilmington", "wilmington"),
                     ("GPE", "North Carolina", "nc")], [])
    assert typed_mentions(frame, airport.sentence, GRAPH)[1] == ["Wilmington International Airport"]
    water = make_frame("Which is the body of water by the birthplace of the author of Dead Ernest?")
    pond = _pick("Butterfly Pond is a body of water in the town of Lincoln, in Providence County, Rhode Island.",
                 [("GPE", "Lincoln", "lincoln"), ("GPE", "Providence County", "pc"), ("GPE", "Rhode Island", "ri")], [])
    assert typed_mentions(water, pond.sentence, GRAPH)[1] == []  # no location named: nothing to bold


MUSEUM_QUESTION = ("Who founded the organisation whose former warehouse on Salt Quay now houses the Velmora "
                   "Maritime Museum?")


MUSEUM_KEYS = ["salt quay", "velmora maritime museum"]  # the question's linked entities


def _museum_picks() -> tuple[Pick, Pick, Pick]:
    """The museum's founder (said of the entity the question names only to identify the organisation),
    the bridge sentence, and the organisation's founder."""
    museum = _pick("The museum's founding director was Helen Castellan, who led it from its opening in 1978.",
                   [("PERSON", "Helen Castellan", "helen castellan")], ["Helen Castellan"])
    museum.sentence.refers_to = "velmora maritime museum"  # "The museum's …", resolved as indexing does
    museum.sentence.keys = museum.sentence.keys | {"velmora maritime museum"}
    bridge = _pick("The former Tidewater Shipping Cooperative warehouse on Salt Quay was converted into the "
                   "Velmora Maritime Museum.", [("ORG", "Tidewater Shipping Cooperative", "tidewater shipping cooperative"),
                                                ("FAC", "Salt Quay", "salt quay"),
                                                ("ORG", "Velmora Maritime Museum", "velmora maritime museum")], [], 1.0)
    founder = _pick("The cooperative was founded in the spring of 1887 by Margaret Thorne.",
                    [("PERSON", "Margaret Thorne", "margaret thorne"),
                     ("ORG", "Tidewater Shipping Cooperative", "tidewater shipping cooperative")], ["Margaret Thorne"])
    founder.sentence.refers_to = "tidewater shipping cooperative"
    founder.sentence.keys = founder.sentence.keys | {"tidewater shipping cooperative"}
    return museum, bridge, founder


def test_names_inside_the_relative_clause_are_the_inner_ones():
    inner = grounding.inner_names(MUSEUM_QUESTION)
    assert sentence_stems("Velmora Maritime Museum") in inner
    assert grounding.inner_names("Who was the first keeper of Kestrel Point Lighthouse?") == []  # no relative clause


def test_the_relation_said_of_the_inner_entity_is_not_bolded_but_said_of_the_bridge_it_is():
    frame = make_frame(MUSEUM_QUESTION, MUSEUM_KEYS)
    museum, bridge, founder = _museum_picks()
    candidates = [museum, bridge, founder]
    assert grounding.stand_behind(museum, candidates, frame, GRAPH, frozenset()) == grounding.NOTE_INNER
    assert grounding.stand_behind(founder, candidates, frame, GRAPH, frozenset()) == ""  # the organisation's founder


def test_the_inner_entity_gate_is_what_removes_the_bold(monkeypatch):
    monkeypatch.setattr(grounding, "about_inner_entity", lambda *a, **k: False)
    frame = make_frame(MUSEUM_QUESTION, MUSEUM_KEYS)
    museum, bridge, founder = _museum_picks()
    assert grounding.stand_behind(museum, [museum, bridge, founder], frame, GRAPH, frozenset()) == ""
