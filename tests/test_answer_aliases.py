"""A short name read as the longer entity of its chunk (core.answers.aliases), used by the grounding gate:
"Ruth" ("Ruth and Edward Harland had two children") counts as Ruth Harland, so a chain of evidence through
her grounds the first keeper's sentence; an ambiguous or other-typed short name stands for nothing. Each
test fails when ``stands_for`` is replaced by a stub."""
from __future__ import annotations

import networkx as nx

from core.answers import aliases, grounding
from core.answers.aliases import stands_for, with_aliases
from core.answers.claim import claimed
from core.answers.grounding import NOTE_UNGROUNDED
from core.answers.question import make_frame, sentence_stems
from core.answers.scoring import Pick
from core.answers.sentences import Sentence

QUESTION = "Who was the first principal keeper of the lighthouse where Daniel Harland was the last resident keeper?"
FAMILY = "chunk-family"


def _graph() -> nx.Graph:
    graph = nx.Graph()
    people = {"ruth": "Ruth", "ruth harland": "Ruth Harland", "ruth pell": "Ruth Pell",
              "edward harland": "Edward Harland", "daniel harland": "Daniel Harland",
              "josiah harland": "Josiah Harland", "harland": "Harland", "simon rutherford": "Simon Rutherford",
              "rutherford": "Rutherford"}
    for key, name in people.items():
        graph.add_node(key, name=name, type="PERSON", source_chunk_ids=[FAMILY],
                       description="Ruth and Edward Harland had two children." if key == "ruth" else "")
    graph.add_node("kestrel point lighthouse", name="Kestrel Point Lighthouse", type="FAC",
                   source_chunk_ids=["chunk-flood"], description="")
    graph.add_node("carrow sound", name="Carrow Sound", type="LOC", source_chunk_ids=["chunk-sea"], description="")
    graph.add_node("carrow sound agreement", name="Carrow Sound Agreement", type="LAW",
                   source_chunk_ids=["chunk-sea"], description="")
    graph.add_node("mexico", name="Mexico", type="GPE", source_chunk_ids=["chunk-sea"], description="")
    graph.add_node("mexico city", name="Mexico City", type="GPE", source_chunk_ids=["chunk-sea"], description="")
    return graph


def _pick(text: str, keys: list[str], typed: list[str], chunk: str, doc: str, score: float = 4.0,
          refers_to: str = "") -> Pick:
    mentions = [("PERSON", key.title(), key) for key in keys]
    sentence = Sentence(text, chunk, 0, f"{doc}, chunk 1", mentions, frozenset(keys), sentence_stems(text),
                        refers_to=refers_to, doc=doc)
    return Pick(sentence, score, "chunk", "chunk #1", typed)


def _keeper_picks() -> list[Pick]:
    answer = _pick("The first principal keeper was Josiah Harland, a former ship's carpenter.", ["josiah harland"],
                   ["Josiah Harland"], FAMILY, "05-kestrel-point-lighthouse.md", 6.0)
    son = _pick("Their son, Daniel Harland, succeeded his mother as principal keeper in 1971.",
                ["daniel harland", "ruth"], [], FAMILY, "05-kestrel-point-lighthouse.md", 2.0, refers_to="ruth")
    warning = _pick("The most important warning came from Ruth Harland, the principal keeper of Kestrel Point "
                    "Lighthouse.", ["ruth harland", "kestrel point lighthouse"], [], "chunk-flood",
                    "07-great-velmora-flood.md", 3.0)
    return [answer, son, warning]


def test_a_given_name_coordinated_with_a_full_name_stands_for_it():
    graph = _graph()
    # two longer names of the chunk hold "Ruth": the short name's own sentence says which
    assert stands_for("ruth", FAMILY, graph, "Their son succeeded his mother.") == "ruth harland"
    assert with_aliases({"ruth"}, FAMILY, graph) == frozenset({"ruth", "ruth harland"})


def test_a_unique_longer_name_of_the_same_chunk_is_read_for_the_short_one():
    graph = _graph()
    assert stands_for("rutherford", FAMILY, graph) == "simon rutherford"
    assert stands_for("rutherford", "chunk-elsewhere", graph) is None  # not named in that chunk


def test_an_ambiguous_or_other_typed_short_name_stands_for_nothing():
    graph = _graph()
    assert stands_for("harland", FAMILY, graph, "The Harland family kept the light.") is None  # four Harlands
    assert stands_for("carrow sound", "chunk-sea", graph) is None  # a place is not the treaty named after it
    assert stands_for("mexico", "chunk-sea", graph) is None  # nor a country its capital: people only


def test_the_first_keeper_is_bolded_through_the_alias():
    graph = _graph()
    picks = _keeper_picks()
    pick, note = claimed(picks[0], picks, make_frame(QUESTION, ["daniel harland"]), graph)
    assert pick is not None and pick.typed == ["Josiah Harland"] and note == ""


def test_without_the_alias_the_first_keeper_is_refused(monkeypatch):
    monkeypatch.setattr(aliases, "stands_for", lambda *a, **k: None)
    graph = _graph()
    picks = _keeper_picks()
    pick, note = claimed(picks[0], picks, make_frame(QUESTION, ["daniel harland"]), graph)
    assert pick is not None and pick.typed == [] and note == NOTE_UNGROUNDED
    assert grounding.HOPS == 2  # the chain is Daniel -> Ruth -> Ruth Harland -> the lighthouse (the title)

