"""A short answer keyed to the last hop's bridge (core.answers.bridge): the mode's evidence resolves the
first hop of a multi-hop question, and a second sentence pairs that bridge with a span of the asked-for
type ("Port Carrow (**7**)"). Hand-made sentences; invented names."""
from __future__ import annotations

from dataclasses import replace

import networkx as nx

from core.answers import bridge
from core.answers.bridge import hop_bridges, keyed_span
from core.answers.claim import claimed
from core.answers.question import make_frame, sentence_stems
from core.answers.scoring import Pick
from core.answers.sentences import Sentence

QUESTION = "How many ferries serve the port where the Velmora Regatta is held?"


def _graph() -> nx.Graph:
    graph = nx.Graph()
    for key, name, kind in [("velmora regatta", "Velmora Regatta", "EVENT"), ("port carrow", "Port Carrow", "GPE"),
                            ("dunmore", "Dunmore", "GPE"), ("greywick", "Greywick", "GPE"),
                            ("montana", "Montana", "GPE"), ("united states", "United States", "GPE")]:
        graph.add_node(key, name=name, type=kind)
    return graph


def _pick(text: str, mentions: list[tuple[str, str, str]], typed: list[str], score: float, ord_: int = 0) -> Pick:
    sentence = Sentence(text, "c1", ord_, "doc.md, chunk 1", mentions, frozenset(k for _, _, k in mentions if k),
                        sentence_stems(text))
    return Pick(sentence, score, "chunk", "chunk #1", typed)


FIRST_HOP = _pick("The Velmora Regatta is held every August in Port Carrow.",
                  [("EVENT", "Velmora Regatta", "velmora regatta"), ("DATE", "every August", ""),
                   ("GPE", "Port Carrow", "port carrow")], [], 2.0, 1)
TABLE = _pick("Ferries serve Dunmore (12), Greywick (9) and Port Carrow (7) all year round.",
              [("GPE", "Dunmore", "dunmore"), ("CARDINAL", "12", ""), ("GPE", "Greywick", "greywick"),
               ("CARDINAL", "9", ""), ("GPE", "Port Carrow", "port carrow"), ("CARDINAL", "7", "")], ["12"], 4.0)


def _frame():
    return make_frame(QUESTION, {"velmora regatta"})


def test_the_span_keyed_to_the_bridge_is_bolded():
    frame, graph = _frame(), _graph()
    assert hop_bridges([TABLE, FIRST_HOP], frame, graph) == {"port carrow"}
    pick, note = claimed(TABLE, [TABLE, FIRST_HOP], frame, graph)
    assert pick is not None and pick.sentence is TABLE.sentence and pick.typed == ["7"] and note == ""


def test_without_the_bridge_check_the_list_is_quoted_without_a_bold(monkeypatch):
    monkeypatch.setattr(bridge, "keyed", lambda *a, **k: None)
    pick, note = claimed(TABLE, [TABLE, FIRST_HOP], _frame(), _graph())
    assert pick is not None and pick.typed == [] and note  # the list names three candidates: no bold


def test_no_first_hop_sentence_means_no_bridge_and_no_bold():
    pick, note = claimed(TABLE, [TABLE], _frame(), _graph())
    assert pick is not None and pick.typed == [] and note


def test_a_bridge_from_a_list_sentence_is_not_a_resolved_hop():
    listing = _pick("The Velmora Regatta has visited Dunmore in 1990, Greywick in 1995 and Port Carrow in 2001.",
                    [("EVENT", "Velmora Regatta", "velmora regatta"), ("GPE", "Dunmore", "dunmore"), ("DATE", "1990", ""),
                     ("GPE", "Greywick", "greywick"), ("DATE", "1995", ""), ("GPE", "Port Carrow", "port carrow"),
                     ("DATE", "2001", "")], [], 2.0, 1)
    assert hop_bridges([TABLE, listing], _frame(), _graph()) == set()
    pick, _ = claimed(TABLE, [TABLE, listing], _frame(), _graph())
    assert pick is not None and pick.typed == []


def test_an_address_is_not_a_keyed_value_and_a_wrong_type_span_is_never_bolded():
    frame, graph = make_frame("Which country is the range that Norris Mountain is part of in?", {"norris mountain"}), _graph()
    address = _pick("The range lies in Glacier National Park in Montana, United States.",
                    [("FAC", "Glacier National Park", ""), ("GPE", "Montana", "montana"),
                     ("GPE", "United States", "united states")], ["United States"], 4.0)
    assert keyed_span(address, {"montana"}, frame, graph) == []
    date = _pick("Ferries have served Port Carrow since 1887.", [("GPE", "Port Carrow", "port carrow"),
                                                                  ("DATE", "1887", "")], [], 3.0)
    assert keyed_span(date, {"port carrow"}, _frame(), graph) == []  # a year for "how many": not the type asked


def test_two_bridges_keyed_to_two_spans_say_nothing():
    frame, graph = _frame(), _graph()
    assert keyed_span(TABLE, {"port carrow", "dunmore"}, frame, graph) == []
    assert keyed_span(TABLE, {"port carrow"}, frame, graph) == ["7"]


def test_a_sentence_naming_the_start_entity_states_the_first_hop_and_is_not_keyed():
    frame, graph = _frame(), _graph()
    both = _pick("The Velmora Regatta fills Port Carrow (7) with visitors.",
                 [("EVENT", "Velmora Regatta", "velmora regatta"), ("GPE", "Port Carrow", "port carrow"),
                  ("CARDINAL", "7", "")], [], 4.0)
    assert bridge.keyed(both, [both, FIRST_HOP], frame, graph) is None


AIRPORT = "What is the name of the airport in the city where KVLM is licensed to broadcast?"


def _airport_case():
    graph = _graph()
    graph.add_node("kvlm", name="KVLM", type="ORG")
    graph.add_node("velmora", name="Velmora", type="GPE")
    station = _pick("KVLM is a talk radio station broadcasting in Port Carrow, Velmora, since 1961.",
                    [("ORG", "KVLM", "kvlm"), ("GPE", "Port Carrow", "port carrow"), ("GPE", "Velmora", "velmora"),
                     ("DATE", "1961", "")], [], 4.0)
    other = _pick("Greywick Airport is the busiest airport of the whole region.",
                  [("FAC", "Greywick Airport", "")], ["Greywick Airport"], 3.5, 1)
    airport = _pick("Carrow Field is a public airport located just north of Port Carrow.",
                    [("FAC", "Carrow Field", ""), ("GPE", "Port Carrow", "port carrow")], ["Carrow Field"], 3.0, 2)
    return make_frame(AIRPORT, {"kvlm"}), graph, [station, other, airport]


def test_a_sentence_stating_only_the_first_hop_gives_way_to_the_next_hop():
    frame, graph, (station, other, airport) = _airport_case()
    assert hop_bridges([station, other, airport], frame, graph) == {"port carrow"}  # the address counts once
    pick, _ = claimed(station, [station, other, airport], frame, graph)
    assert pick is not None and pick.sentence is airport.sentence


def test_without_the_next_hop_rule_the_first_hop_stays_first(monkeypatch):
    monkeypatch.setattr(bridge, "second_hop", lambda *a, **k: None)
    frame, graph, (station, other, airport) = _airport_case()
    pick, _ = claimed(station, [station, other, airport], frame, graph)
    assert pick is not None and pick.sentence is station.sentence


def test_the_next_hop_is_not_taken_from_far_below():
    frame, graph, (station, other, airport) = _airport_case()
    far = replace(airport, score=station.score - bridge.HOP_WINDOW - 0.5)
    pick, _ = claimed(station, [station, other, far], frame, graph)
    assert pick is not None and pick.sentence is station.sentence
