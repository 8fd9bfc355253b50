"""Right bolds whose form the earlier gates could not read (issue 31, "bold only what you can stand behind"):
the categories of questions whose quoted sentence held the gold answer with nothing bolded, counted on both
MuSiQue dev sets and A Christmas Carol.

* the words that only set the scene are not asked of the answer's sentence: the measure word of "how long" /
  "how old", and a clause opened by a time or reason word ("… *when the carollers came to the mill*?");
  a main clause left with no word of its own keeps that clause ("How old was Tom *when he died*?");
* a table row the tagger merged ("Dunmoria 1 August" as one name): the bridge spelled at the start of that
  mention is the bridge, the evidence entity it spells grounds the sentence, and the date is completed from
  its pieces ("**1 August 1973**");
* "become" is a linking verb: "When did X become a member of Y?" asks the membership, not the verb.

Each test fails when its rule is stubbed. Hand-made sentences, invented names."""
from __future__ import annotations

import networkx as nx

from core.answers import bridge, grounding, support
from core.answers.claim import claimed
from core.answers.question import make_frame, sentence_stems
from core.answers.scoring import Pick
from core.answers.sentences import Sentence
from core.answers.support import main_clause_terms

DEAD = "How long had Alderman Pike been dead when the carollers came to the mill?"
JOINED = "When did the country where the village of Brannock Mill is located, become a member of the Velmora Compact?"


def _pick(text: str, mentions: list[tuple[str, str, str]], typed: list[str], score: float = 4.0,
          doc: str = "doc.md") -> Pick:
    keys = frozenset(key for _, _, key in mentions if key)
    sentence = Sentence(text, "c-" + text[:12], 0, f"{doc}, chunk 1", mentions, keys, sentence_stems(text), doc=doc)
    return Pick(sentence, score, "chunk", "chunk #1", typed)


# --- the scene a question sets ----------------------------------------------------------------------------

def test_the_measure_word_and_a_time_clause_are_not_the_questions_claim():
    assert main_clause_terms(DEAD) == {"dead"}
    kept = main_clause_terms("What did Tom Pike have on the hob in a saucepan because he had a cold?")
    assert "hob" in kept and "cold" not in kept
    assert main_clause_terms("How old was Tom Pike when he died?") == {"died"}  # the clause is all it asks


def test_a_duration_stated_without_the_scene_is_bolded(monkeypatch):
    frame = make_frame(DEAD, {"alderman pike"})
    said = _pick("'Mr. Pike has been dead these nine years,' the miller replied.",
                 [("PERSON", "Pike", "alderman pike"), ("DATE", "these nine years", "")], ["these nine years"], 5.0)
    other = _pick("The carollers sang at the mill until midnight.", [("TIME", "midnight", "")], ["midnight"], 3.0)
    pick, note = claimed(said, [said, other], frame, nx.Graph())
    assert pick is not None and pick.typed == ["these nine years"] and note == ""
    monkeypatch.setattr(support, "setting_words", lambda doc, clauses=True: set())
    pick, note = claimed(said, [said, other], make_frame(DEAD + " ", {"alderman pike"}), nx.Graph())
    assert pick is not None and pick.typed == [] and note  # the carollers and the mill are not in the sentence


# --- a table row the tagger merged ------------------------------------------------------------------------

def _graph() -> nx.Graph:
    graph = nx.Graph()
    for key, name, kind in [("brannock mill", "Brannock Mill", "GPE"), ("dunmoria", "Dunmoria", "GPE"),
                            ("velmora compact", "Velmora Compact", "ORG"), ("ostrava", "Ostrava", "GPE"),
                            ("kelso", "Kelso", "GPE")]:
        graph.add_node(key, name=name, type=kind)
    return graph


FIRST_HOP = _pick("Brannock Mill is a village in the Carrow region of Dunmoria.",
                  [("GPE", "Brannock Mill", "brannock mill"), ("GPE", "Dunmoria", "dunmoria")], [], 2.0)
ROW = _pick("Members Join date Ostrava 4 July 1974 Kelso 4 July 1983 Dunmoria 1 August 1973 One of the founding members",
            [("GPE", "Ostrava", "ostrava"), ("DATE", "4 July 1974", ""), ("GPE", "Kelso", "kelso"),
             ("DATE", "4 July 1983", ""), ("ORG", "Dunmoria 1 August", "dunmoria 1 august"), ("DATE", "1973", "")],
            ["4 July 1974"], 3.0, doc="Member states")


def _joined() -> tuple[Pick | None, str]:
    return claimed(ROW, [ROW, FIRST_HOP], make_frame(JOINED, {"brannock mill", "velmora compact"}), _graph())


def test_the_date_keyed_to_a_bridge_inside_a_merged_mention_is_bolded_whole():
    pick, note = _joined()
    assert pick is not None and pick.sentence is ROW.sentence and pick.typed == ["1 August 1973"] and note == ""


def test_without_splitting_the_merged_mention_nothing_is_bolded(monkeypatch):
    monkeypatch.setattr(bridge, "unmerged", lambda placed, *a: placed)
    pick, _ = _joined()
    assert pick is not None and pick.typed == []  # not "4 July 1974", Ostrava's date


def test_without_the_spelled_bridge_the_row_is_not_grounded(monkeypatch):
    monkeypatch.setattr(grounding, "spells_one", lambda *a: False)
    pick, note = _joined()
    assert pick is not None and pick.typed == [] and note == grounding.NOTE_UNGROUNDED


def test_without_completing_the_date_only_its_year_is_bolded(monkeypatch):
    monkeypatch.setattr(bridge, "whole_date", lambda text, at, surface: surface)
    pick, _ = _joined()
    assert pick is not None and pick.typed == ["1973"]


def test_become_asks_its_complement_not_the_verb(monkeypatch):
    monkeypatch.setattr(grounding, "_LIGHT_VERBS", frozenset({"be", "have", "do"}))
    pick, note = claimed(ROW, [ROW, FIRST_HOP], make_frame(JOINED + " ", {"brannock mill", "velmora compact"}),
                         _graph())
    assert pick is not None and pick.typed == [] and note == grounding.NOTE_VERB


def test_a_lower_case_word_or_a_short_name_does_not_ground_a_sentence():
    graph = _graph()
    graph.add_node("want", name="want", type="PERSON")
    graph.add_node("ann", name="Ann", type="PERSON")
    assert grounding.spells_one("Dunmoria 1 August 1973", {"dunmoria"}, graph)
    assert not grounding.spells_one("They want more than Ann's grove.", {"want", "ann"}, graph)
    assert not grounding.spells_one("The dunmoria rows", {"dunmoria"}, graph)


# --- a verb the crude stem misses, a span the tagger cut --------------------------------------------------

RAN = "Where did Tom Pike run home to after sliding on Cornmarket?"
CLERK = _pick("Tom Pike went down a slide on Cornmarket twenty times, and then ran home to Brenton Town to play.",
              [("PERSON", "Tom Pike", "tom pike"), ("GPE", "Cornmarket", "cornmarket"), ("CARDINAL", "twenty", ""),
               ("GPE", "Brenton", "brenton")],
              ["Brenton"], 4.0)


def test_an_irregular_past_states_its_verb_and_the_place_word_completes_the_span():
    from core.answers.question import said_stems

    assert {"run", "slid"} <= said_stems(CLERK.sentence.text, CLERK.sentence.stems)
    other = _pick("The miller counted the sacks in the loft.", [], [], 1.0)
    pick, note = claimed(CLERK, [CLERK, other], make_frame(RAN, {"tom pike", "cornmarket"}), nx.Graph())
    assert pick is not None and pick.typed == ["Brenton Town"] and note == ""


def test_without_the_irregular_verb_the_sentence_does_not_state_the_question(monkeypatch):
    from core.answers import question

    monkeypatch.setattr(question, "_IRREGULAR", {})
    other = _pick("The miller counted the sacks in the loft.", [], [], 1.0)
    pick, note = claimed(CLERK, [CLERK, other], make_frame(RAN + " ", {"tom pike", "cornmarket"}), nx.Graph())
    assert pick is not None and pick.typed == [] and note


def test_without_completing_the_place_the_cut_span_is_bolded(monkeypatch):
    monkeypatch.setattr(bridge, "_PLACE_AFTER", __import__("re").compile(r"(?!)"))
    other = _pick("The miller counted the sacks in the loft.", [], [], 1.0)
    pick, _ = claimed(CLERK, [CLERK, other], make_frame(RAN + "  ", {"tom pike", "cornmarket"}), nx.Graph())
    assert pick is not None and pick.typed == ["Brenton"]
