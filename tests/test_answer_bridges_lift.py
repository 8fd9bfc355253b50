"""Two ways a right answer was refused on the MuSiQue dev sets, each a rule whose test fails when it is
stubbed: the bridges a multi-hop answer's sentence repeats are counted as rival candidates
(``bridge.beside_bridges``), and a best sentence stripped of its bold by the last gates hid a lower sentence
whose parse proves the claim (``claim.lifted_past_gates``)."""
from __future__ import annotations

import networkx as nx

from core.answers.claim import claimed
from core.answers.grounding import NOTE_UNGROUNDED
from core.answers.question import make_frame, sentence_stems
from core.answers.scoring import Pick
from core.answers.sentences import Sentence



REPRESENTATIVE = ("In which country is the representative of the country where Mount Sulivan is located in the city "
                  "where the first Pan-African conference was held?")


def _place_pick(text: str, mentions: list[tuple[str, str, str]], typed: list[str], score: float, doc: str) -> Pick:
    keys = frozenset(key for _, _, key in mentions if key)
    sentence = Sentence(text, "c-" + doc, 0, f"{doc}, chunk 1", mentions, keys, sentence_stems(text), doc=doc)
    return Pick(sentence, score, "chunk", "chunk #1", typed)


def _representative_picks() -> list[Pick]:
    answer = _place_pick("The Representative of the Falkland Islands in London is the diplomatic mission of the "
                         "British Overseas Territory of the Falkland Islands in the United Kingdom.",
                         [("GPE", "Falkland Islands", "falkland islands"), ("GPE", "London", "london"),
                          ("ORG", "British Overseas Territory", "bot"), ("GPE", "United Kingdom", "united kingdom")],
                         ["Falkland Islands"], 3.7, "Representative of the Falkland Islands, London")
    mountain = _place_pick("Mount Sulivan is a mountain on West Falkland, Falkland Islands.",
                           [("LOC", "Mount Sulivan", "mount sulivan"), ("LOC", "West Falkland", "west falkland"),
                            ("GPE", "Falkland Islands", "falkland islands")], ["Falkland Islands"], 2.3, "Mount Sulivan")
    conference = _place_pick("The First Pan-African Conference was held in London in July 1900.",
                             [("EVENT", "First Pan-African Conference", "first pan-african conference"),
                              ("GPE", "London", "london")], ["London"], 2.9, "First Pan-African Conference")
    return [answer, conference, mountain]


def test_the_bridges_beside_the_answer_are_not_its_rivals():
    picks = _representative_picks()
    frame = make_frame(REPRESENTATIVE, ["mount sulivan", "first pan-african conference"])
    pick, note = claimed(picks[0], picks, frame, nx.Graph())
    assert pick is not None and pick.typed == ["United Kingdom"] and note == ""


def test_without_the_bridge_rule_the_sentence_is_a_list(monkeypatch):
    from core.answers import bridge, claim

    monkeypatch.setattr(bridge, "beside_bridges", lambda *a, **k: (None, frozenset()))
    picks = _representative_picks()
    frame = make_frame(REPRESENTATIVE, ["mount sulivan", "first pan-african conference"])
    pick, note = claimed(picks[0], picks, frame, nx.Graph())
    assert pick is not None and pick.typed == [] and note == claim.NOTE_LIST


def test_a_list_beside_the_bridges_stays_a_list():
    """Two rivals left once the bridges are out: still no single answer."""
    picks = _representative_picks()
    answer = picks[0]
    mentions = answer.sentence.mentions + [("GPE", "France", "france")]
    listed = Pick(Sentence(answer.sentence.text + " It also serves France.", answer.sentence.chunk_id, 0,
                           answer.sentence.cite, mentions, answer.sentence.keys | {"france"},
                           sentence_stems(answer.sentence.text + " It also serves France."), doc=answer.sentence.doc),
                  answer.score, "chunk", "chunk #1", ["Falkland Islands"])
    frame = make_frame(REPRESENTATIVE, ["mount sulivan", "first pan-african conference"])
    pick, _ = claimed(listed, [listed, *picks[1:]], frame, nx.Graph())
    assert pick is not None and pick.typed == []


KEEPER = "Who was the first principal keeper of Kestrel Point Lighthouse?"


def _keeper_picks() -> list[Pick]:
    elsewhere = _place_pick("The first principal keeper of the light was Amos Pell, a fisherman.",
                            [("PERSON", "Amos Pell", "amos pell")], ["Amos Pell"], 5.0, "Greywick Light")
    other = _place_pick("Greywick Light stands on the north shore.", [("FAC", "Greywick Light", "greywick light")],
                        [], 4.6, "Greywick Light")
    answer = _place_pick("The first principal keeper of Kestrel Point Lighthouse was Josiah Harland.",
                         [("FAC", "Kestrel Point Lighthouse", "kestrel point lighthouse"),
                          ("PERSON", "Josiah Harland", "josiah harland")], ["Josiah Harland"], 4.2,
                         "Kestrel Point Lighthouse")
    return [elsewhere, other, answer]


def test_a_verified_lower_sentence_replaces_a_best_the_gates_refused():
    picks = _keeper_picks()
    pick, note = claimed(picks[0], picks, make_frame(KEEPER, ["kestrel point lighthouse"]), nx.Graph())
    assert pick is not None and pick.sentence is picks[2].sentence
    assert pick.typed == ["Josiah Harland"] and note == ""


def test_without_the_lift_the_refused_best_stays_first_unbolded(monkeypatch):
    from core.answers import claim

    monkeypatch.setattr(claim, "lifted_past_gates", lambda *a, **k: None)
    picks = _keeper_picks()
    pick, note = claimed(picks[0], picks, make_frame(KEEPER, ["kestrel point lighthouse"]), nx.Graph())
    assert pick is not None and pick.sentence is picks[0].sentence
    assert pick.typed == [] and note == NOTE_UNGROUNDED


def test_no_parse_is_spent_on_a_sentence_the_gates_refuse(monkeypatch):
    """``promoted`` tries at most ``PROMOTE_TRIES`` lower sentences: ungrounded ones no longer use them up."""
    from core.answers import claim

    monkeypatch.setattr(claim, "PROMOTE_TRIES", 1)
    picks = _keeper_picks()
    decoy = _place_pick("The first principal keeper of Greywick Light was Amos Pell.",
                        [("FAC", "Greywick Light", "greywick light"), ("PERSON", "Amos Pell", "amos pell")],
                        ["Amos Pell"], 4.4, "Greywick Light")
    ranked = [picks[0], picks[1], decoy, picks[2]]
    pick, _ = claimed(picks[0], ranked, make_frame(KEEPER, ["kestrel point lighthouse"]), nx.Graph())
    assert pick is not None and pick.typed == ["Josiah Harland"]
