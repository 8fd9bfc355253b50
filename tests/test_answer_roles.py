"""A bold about the person a role noun describes, and a bolded person named in full (issue 31 (b)(c)).

``relation.question_relation`` reads a do-support question ("Which company did the founding director of X
co-found?") as the verb after "did" with the wh-phrase its undergoer; a side described by a person's role noun
owned by a name has no names of its own (``described_by``); ``role_bridge.tied`` keeps a bold only when the
sentence's other side names whom the evidence says holds that role; ``full_names.in_full`` spells a bolded
surname out as the person the mention was keyed to. Each rule test fails when its rule is stubbed."""
from __future__ import annotations

import networkx as nx

from core.answers import full_names, role_bridge
from core.answers.claim import claimed
from core.answers.layout import first_line
from core.answers.question import make_frame, sentence_stems
from core.answers.scoring import Pick
from answer_picks import doc_pick
from core.answers.relation import question_relation

CO_FOUNDED = "Which company did the founding director of the Harbour Institute for Tides co-found?"
DAUGHTER = "Which society did the daughter of Mabel Crane found?"


def _graph() -> nx.Graph:
    graph = nx.Graph()
    for key, kind in [("tomas reyes", "PERSON"), ("ada quill", "PERSON"), ("edwin marlowe", "PERSON"),
                      ("harbour institute for tides", "ORG"), ("brinewave energy", "ORG"), ("marlowe sound", "LOC")]:
        graph.add_node(key, name=key.title(), type=kind, source_chunk_ids=["c-x"])
    return graph


_pick = doc_pick


def _evidence(founder: str, key: str) -> list[Pick]:
    first_hop = _pick("Its founding director is Tomas Reyes, a professor of physical oceanography.",
                      [("PERSON", "Tomas Reyes", "tomas reyes")], [], 3.0, "Harbour Institute for Tides",
                      refers_to="harbour institute for tides")
    answer = _pick(f"Brinewave Energy was founded in 2011 by the engineer Lena Holt and the oceanographer {founder}.",
                   [("ORG", "Brinewave Energy", "brinewave energy"), ("DATE", "2011", ""),
                    ("PERSON", "Lena Holt", ""), ("PERSON", founder, key)], ["Brinewave Energy"], 3.4, "Brinewave Energy")
    linked = _pick("Ada Quill lectured on tidal energy at the Harbour Institute for Tides.",
                   [("PERSON", "Ada Quill", "ada quill"), ("ORG", "Harbour Institute for Tides", "harbour institute for tides")],
                   [], 2.0, "Harbour Institute for Tides")  # linked to the Institute, but not its director
    return [answer, first_hop, linked]


def test_a_do_support_question_is_read_around_its_own_verb():
    co_founded = question_relation(CO_FOUNDED)
    assert co_founded is not None and (co_founded.verb, co_founded.role) == ("found", "undergoer")
    assert co_founded.other_names == frozenset()  # the director is described, not named
    assert co_founded.described_by == ("direc", sentence_stems("Harbour Institute Tides"))  # its proper names
    daughter = question_relation(DAUGHTER)  # parsed with "found" as the root and the wh-phrase on "did"
    assert daughter is not None and (daughter.verb, daughter.role) == ("found", "undergoer")
    assert daughter.described_by == ("daugh", sentence_stems("Mabel Crane"))
    named = question_relation("Who founded the Harbour Institute for Tides?")
    assert named is not None and named.other_names and named.described_by == ("", frozenset())


def test_the_role_holders_are_read_from_the_evidence():
    picks = _evidence("Tomas Reyes", "tomas reyes")
    from core.storage.graph_view import as_graph_view

    held = role_bridge.holders(picks, "direc", sentence_stems("Harbour Institute Tides"), as_graph_view(_graph()))
    assert held == frozenset({"tomas reyes"})


def test_the_sentence_about_the_role_holder_is_bolded():
    picks = _evidence("Tomas Reyes", "tomas reyes")
    pick, note = claimed(picks[0], picks, make_frame(CO_FOUNDED, ["harbour institute for tides"]), _graph())
    assert pick is not None and pick.typed == ["Brinewave Energy"] and note == ""


def test_a_sentence_about_someone_else_with_the_verb_is_not_bolded():
    picks = _evidence("Ada Quill", "ada quill")
    pick, note = claimed(picks[0], picks, make_frame(CO_FOUNDED, ["harbour institute for tides"]), _graph())
    assert pick is not None and pick.typed == [] and note == role_bridge.NOTE_ROLE


def test_without_the_role_rule_the_other_founder_is_bolded(monkeypatch):
    monkeypatch.setattr(role_bridge, "tied", lambda pick, *a, **k: (pick, ""))
    picks = _evidence("Ada Quill", "ada quill")
    pick, _ = claimed(picks[0], picks, make_frame(CO_FOUNDED, ["harbour institute for tides"]), _graph())
    assert pick is not None and pick.typed == ["Brinewave Energy"]


def _marlowe() -> Pick:
    return _pick("In 1921 Marlowe founded the Harbour Institute for Tides in an old customs house.",
                 [("DATE", "1921", ""), ("PERSON", "Marlowe", "edwin marlowe"),
                  ("ORG", "Harbour Institute for Tides", "harbour institute for tides")], ["Marlowe"], 3.0,
                 "Harbour Institute for Tides")


def test_a_bolded_surname_is_named_in_full():
    pick = full_names.in_full(_marlowe(), _graph())
    assert pick is not None and pick.typed == ["Edwin Marlowe"]
    assert first_line(pick).startswith("**Edwin Marlowe** — In 1921 Marlowe founded")


def test_the_full_name_is_only_the_same_person_of_the_same_type():
    graph = _graph()
    assert full_names.full_name("Marlowe", "marlowe sound", "c-x", graph) == "Marlowe"  # a place, not the person
    assert full_names.full_name("Marlow", "edwin marlowe", "c-x", graph) == "Marlow"  # not a whole word of the name
    assert full_names.full_name("Marlowe", "", "c-x", graph) == "Marlowe"  # keyed to nothing


def test_the_first_line_names_the_founder_in_full():
    frame = make_frame("Who founded the Harbour Institute for Tides?", ["harbour institute for tides"])
    pick, _ = claimed(_marlowe(), [_marlowe()], frame, _graph())
    assert pick is not None and pick.typed == ["Edwin Marlowe"]


def test_without_the_full_name_rule_the_surname_stays(monkeypatch):
    monkeypatch.setattr(full_names, "in_full", lambda pick, graph: pick)
    frame = make_frame("Who founded the Harbour Institute for Tides?", ["harbour institute for tides"])
    pick, _ = claimed(_marlowe(), [_marlowe()], frame, _graph())
    assert pick is not None and pick.typed == ["Marlowe"]


def test_the_described_doer_of_a_do_support_question_is_a_first_hop():
    from core.answers.claim import claim_terms

    # the words naming the director (the bridge) are not asked of the answer's sentence, which names the company
    assert "direc" not in claim_terms(CO_FOUNDED)
    assert "direc" in claim_terms("Which company did the founding director co-found?")  # no owner: not a hop
