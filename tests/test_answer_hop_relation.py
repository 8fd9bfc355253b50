"""The last hop's relation said about the bridge (issue 31 (a)(c), ``core.answers.hop_relation`` and
``chain.relation_lines``): the evidence line a multi-hop answer puts first says what the question asks of
the bridge ("married" for "the spouse of …"), not only a word of the first hop; and a first hop named by a
role noun ("the founding director of X") leads only to whom the evidence says holds that role."""
from __future__ import annotations

from types import SimpleNamespace

import networkx as nx
import pytest

from core.answers import chain, hop_relation
from core.answers.chain import chained
from core.answers.hop_relation import first_role, last_relation, says_relation, start_names
from core.answers.layout import compose, sentence_entry
from core.answers.question import sentence_stems, stem
from core.answers.scoring import Pick
from core.answers.sentences import Sentence
from core.storage.graph_view import as_graph_view

SPOUSE = "Who is the spouse of the director of Jump for Glory?"
COASTAL = "Which company did the founding director of the Centre for Coastal Oceanography co-found?"


def test_the_last_hop_relation_is_read_without_the_first_hop():
    relation = last_relation(SPOUSE)
    assert stem("spouse") in relation
    assert stem("director") not in relation  # the first hop: the noun owning the name


def test_a_relation_word_brings_its_family(monkeypatch: pytest.MonkeyPatch):
    assert stem("married") in last_relation(SPOUSE)
    assert says_relation("In 1916 Raoul Walsh married the actress Miriam Cooper.",
                         sentence_stems("In 1916 Raoul Walsh married the actress Miriam Cooper."), last_relation(SPOUSE))
    last_relation.cache_clear()
    monkeypatch.setattr(hop_relation, "FAMILIES", ())
    try:
        assert stem("married") not in last_relation(SPOUSE)
    finally:
        last_relation.cache_clear()


def test_a_verb_meets_its_noun():
    question = "When did the country of Izgoy's performer invade Manchuria?"
    text = "The war ended with the Soviet invasion of Manchuria on 8 August 1945."
    relation = last_relation(question)
    assert stem("invade") in relation
    assert says_relation(text, sentence_stems(text), relation)
    assert not says_relation("The Soviet army crossed the border on 8 August 1945.",
                             sentence_stems("The Soviet army crossed the border on 8 August 1945."), relation)


def test_the_answer_kind_and_the_bridge_kind_are_no_relation():
    relation = last_relation("What currency predated the Euro in the country Signmark is from?")
    assert stem("currency") in relation
    assert stem("country") not in relation


def test_start_names_leave_out_the_last_hops_own_object():
    names = start_names("When did the country of Izgoy's performer invade Manchuria?")
    assert frozenset({stem("izgoy")}) in names
    assert all(stem("manchuria") not in name for name in names)


def test_the_first_role_is_the_person_noun_owning_a_name():
    role = first_role(COASTAL)
    assert role is not None and role[0] == stem("director")
    assert stem("oceanography") in role[1]
    assert first_role("When did the country where the city of Brand is located join the union?") is None


# --- the evidence line ---------------------------------------------------------------------------------

FILM, WALSH, COOPER, SHEEHAN = "jump for glory", "raoul walsh", "miriam cooper", "winfield sheehan"


def _graph(nodes: list[tuple[str, str, str]]) -> nx.Graph:
    g = nx.Graph()
    for key, name, kind in nodes:
        g.add_node(key, name=name, type=kind)
    return g


def _pick(text: str, score: float, chunk: str, ord_: int, mentions: list[tuple[str, str, str]], typed: list[str],
          label: str = "chunk #1", refers: str = "") -> Pick:
    keys = frozenset(k for _, _, k in mentions) | ({refers} if refers else set())
    sentence = Sentence(text, chunk, ord_, f"{chunk}.md, chunk 1", list(mentions), keys, sentence_stems(text), refers,
                        f"{chunk}.md")
    return Pick(sentence, score, "chunk", label, typed)


def _frame(question: str, keys: set[str], groups: list[tuple[str, ...]]) -> SimpleNamespace:
    plain = " ".join(question.lower().replace("?", " ").split())
    return SimpleNamespace(entity_keys=frozenset(keys), text=question, groups=groups,
                           names_in_question=lambda s: f" {s.lower()} " in f" {plain} ")


def _answer(first: Pick, candidates: list[Pick], frame: SimpleNamespace, graph: nx.Graph) -> str:
    entries = [sentence_entry(p) for p in sorted(candidates, key=lambda p: -p.score)]
    inputs = SimpleNamespace(frame=frame, graph=as_graph_view(graph), lines=4)
    return compose(first, chained(first, candidates, entries, inputs), 4)


SPOUSE_GRAPH = _graph([(FILM, "Jump for Glory", "WORK_OF_ART"), (WALSH, "Raoul Walsh", "PERSON"),
                       (COOPER, "Miriam Cooper", "PERSON"), (SHEEHAN, "Winfield Sheehan", "PERSON")])
FIRST = _pick("Jump for Glory is a 1937 British film directed by Raoul Walsh.", 4.0, "film", 0,
              [("WORK_OF_ART", "Jump for Glory", FILM), ("PERSON", "Raoul Walsh", WALSH)], ["Raoul Walsh"])
FILLER = [_pick(f"The film's {what} was shot near {where} during the spring of 1937.", 3.6 - i / 10, "film", 1 + i,
                [("WORK_OF_ART", "Jump for Glory", FILM)], []) for i, (what, where) in
          enumerate([("opening", "London"), ("ending", "Dover"), ("chase", "Kent")])]
MARRIED = _pick("In 1916 Raoul Walsh married the actress Miriam Cooper.", 2.6, "walsh", 0,
                [("PERSON", "Raoul Walsh", WALSH), ("PERSON", "Miriam Cooper", COOPER)], ["Miriam Cooper"], "chunk #4")
WORKED = _pick("Raoul Walsh worked for years with the producer Winfield Sheehan.", 2.9, "walsh", 1,
               [("PERSON", "Raoul Walsh", WALSH), ("PERSON", "Winfield Sheehan", SHEEHAN)], ["Winfield Sheehan"],
               "chunk #4")


def test_the_sentence_saying_the_relation_about_the_bridge_comes_first():
    frame = _frame(SPOUSE, {FILM}, [("PERSON",)])
    text = _answer(FIRST, [FIRST, *FILLER, WORKED, MARRIED], frame, SPOUSE_GRAPH)
    assert text.splitlines()[1].startswith("- chunk #4: In 1916 Raoul Walsh married")
    assert text.splitlines()[0].startswith("Jump for Glory is a 1937")  # the first line does not move


def test_without_the_relation_the_better_scoring_next_hop_comes_first(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(chain, "RELATION_LINE", False)
    frame = _frame(SPOUSE, {FILM}, [("PERSON",)])
    text = _answer(FIRST, [FIRST, *FILLER, WORKED, MARRIED], frame, SPOUSE_GRAPH)
    assert text.splitlines()[1].startswith("- chunk #4: Raoul Walsh worked")
    assert "married" not in text


def test_a_list_sentence_is_no_relation_line():
    listed = _pick("Raoul Walsh married three times: Miriam Cooper, Lorraine Walker and Mary Edna Simpson.", 2.6,
                   "walsh", 2, [("PERSON", "Raoul Walsh", WALSH), ("PERSON", "Miriam Cooper", COOPER),
                                ("PERSON", "Lorraine Walker", "lorraine walker"),
                                ("PERSON", "Mary Edna Simpson", "mary edna simpson")], ["Miriam Cooper"], "chunk #4")
    frame = _frame(SPOUSE, {FILM}, [("PERSON",)])
    assert not chain.relation_lines(FIRST, [FIRST, listed], [FIRST], frozenset(), SimpleNamespace(
        frame=frame, graph=as_graph_view(SPOUSE_GRAPH), lines=4))


CENTRE, OKAFOR, SOUND, MARLOWE, INSTITUTE, MERIDIAN = ("centre for coastal oceanography", "peter okafor",
                                                       "carrow sound", "edwin marlowe", "velmora marine institute",
                                                       "meridian tidal power")
COAST_GRAPH = _graph([(CENTRE, "Centre for Coastal Oceanography", "ORG"), (OKAFOR, "Peter Okafor", "PERSON"),
                      (SOUND, "Carrow Sound", "LOC"), (MARLOWE, "Edwin Marlowe", "PERSON"),
                      (INSTITUTE, "Velmora Marine Institute", "ORG"), (MERIDIAN, "Meridian Tidal Power", "ORG")])
COAST_FIRST = _pick("Meridian Tidal Power was founded in 2006 by the oceanographer Peter Okafor.", 3.0, "meridian", 0,
                    [("ORG", "Meridian Tidal Power", MERIDIAN), ("PERSON", "Peter Okafor", OKAFOR)],
                    ["Meridian Tidal Power"])
DIRECTOR = _pick("Its founding director is Peter Okafor, whose measurements of the tides in Carrow Sound are known.",
                 2.75, "centre", 0, [("PERSON", "Peter Okafor", OKAFOR), ("LOC", "Carrow Sound", SOUND)], [],
                 "entity chunk #1", refers=CENTRE)
MARLOWE_LINE = _pick("In 1921 the naturalist Edwin Marlowe founded the Velmora Marine Institute to study Carrow Sound.",
                     2.4, "coast", 0, [("PERSON", "Edwin Marlowe", MARLOWE), ("ORG", "Velmora Marine Institute",
                                                                              INSTITUTE), ("LOC", "Carrow Sound", SOUND)],
                     ["Velmora Marine Institute"], "entity chunk #5")
OTHERS = [_pick(f"The {what} of the coast is {how}.", 2.7 - i / 10, f"other{i}", 0, [], [], f"relation #{i}")
          for i, (what, how) in enumerate([("railway", "old"), ("harbour", "busy"), ("museum", "small")])]


def test_a_role_noun_first_hop_leads_only_to_the_roles_holder():
    frame = _frame(COASTAL, {CENTRE}, [("ORG",)])
    text = _answer(COAST_FIRST, [COAST_FIRST, DIRECTOR, MARLOWE_LINE, *OTHERS], frame, COAST_GRAPH)
    assert "Edwin Marlowe" not in text  # it shares "founded" and Carrow Sound, not the director
    assert "Its founding director is Peter Okafor" in text


def test_without_the_holders_a_chance_bridge_brings_the_unrelated_founding(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(chain, "ROLE_HOLDERS", False)
    frame = _frame(COASTAL, {CENTRE}, [("ORG",)])
    text = _answer(COAST_FIRST, [COAST_FIRST, DIRECTOR, MARLOWE_LINE, *OTHERS], frame, COAST_GRAPH)
    assert "Edwin Marlowe" in text


def test_a_where_question_asks_the_location_relation(monkeypatch: pytest.MonkeyPatch):
    question = "Where is the district that Knott is part of located in the UK?"
    assert stem("located") in last_relation(question)
    last_relation.cache_clear()
    monkeypatch.setattr(hop_relation, "_asks_where", lambda doc: False)
    try:
        assert stem("located") not in last_relation(question)
    finally:
        last_relation.cache_clear()


KNOTT, ENGLISH_LAKES, LAKES, CUMBRIA, ENGLAND = "knott", "english lake district", "lake district", "cumbria", "england"
KNOTT_GRAPH = _graph([(KNOTT, "Knott", "LOC"), (ENGLISH_LAKES, "English Lake District", "LOC"),
                      (LAKES, "Lake District", "LOC"), (CUMBRIA, "Cumbria", "GPE"), (ENGLAND, "England", "GPE")])
KNOTT_QUESTION = "Where is the district that Knott is part of located in the UK?"
KNOTT_FIRST = _pick("Knott is a mountain in the northern part of the English Lake District.", 3.0, "knott", 0,
                    [("LOC", "Knott", KNOTT), ("LOC", "English Lake District", ENGLISH_LAKES)], [])
LOCATED = _pick("It is located entirely within the county of Cumbria.", 2.4, "lakes", 0,
                [("GPE", "Cumbria", CUMBRIA)], ["Cumbria"], "naive chunk #5", refers=LAKES)


def test_a_shorter_name_ending_the_bridges_name_names_the_bridge():
    frame = _frame(KNOTT_QUESTION, {KNOTT}, [("GPE", "LOC", "FAC")])
    inputs = SimpleNamespace(frame=frame, graph=as_graph_view(KNOTT_GRAPH), lines=4)
    found = chain.relation_lines(KNOTT_FIRST, [KNOTT_FIRST, LOCATED], [KNOTT_FIRST], frozenset(), inputs)
    assert found and found[0].sentence.text.startswith("It is located entirely within the county of Cumbria")
    unrelated = _pick("The Lake District of Chile lies far to the south.", 2.4, "chile", 0,
                      [("LOC", "Lake District of Chile", "lake district of chile")], [], refers="")
    assert not chain._names_bridge(unrelated, {ENGLISH_LAKES}, chain._tails({"english lake district"}),
                                   as_graph_view(KNOTT_GRAPH))


def test_the_holders_are_read_from_sentences_about_the_owner_itself():
    frame = _frame(COASTAL, {CENTRE}, [("ORG",)])
    elsewhere = _pick("Edwin Marlowe, founding director of the Velmora ocean centre, surveyed the coast.", 2.0, "agency", 0,
                      [("PERSON", "Edwin Marlowe", MARLOWE)], [], "entity chunk #3")
    inputs = SimpleNamespace(frame=frame, graph=as_graph_view(COAST_GRAPH), lines=4)
    assert chain._holders([DIRECTOR, elsewhere], inputs) == frozenset({OKAFOR})
