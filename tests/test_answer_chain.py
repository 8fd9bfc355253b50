"""The next hop as an evidence line (issue 31 (a), ``core.answers.chain``): a sentence about the entity the
first line leads to, naming no question entity and holding a wanted-type mention, is shown among the
evidence lines even when the mode's order ranks it below the lines shown."""
from __future__ import annotations

from types import SimpleNamespace

import networkx as nx
import pytest

import core.answers as answers_module
from core.answers import chain
from core.answers.chain import chained
from core.answers.layout import compose, sentence_entry
from core.answers.scoring import Pick
from core.answers.sentences import Sentence
from core.storage.graph_view import as_graph_view
from core.types import ChunkHit, RetrievalResult

QUESTION = "Who is the spouse of the director of Jump for Glory?"
ONE_RELATION = "Who directed Jump for Glory?"
FILM = "jump for glory"
WALSH = "raoul walsh"


def _graph() -> nx.Graph:
    g = nx.Graph()
    for key, name, kind in [(FILM, "Jump for Glory", "WORK_OF_ART"), (WALSH, "Raoul Walsh", "PERSON"),
                            ("miriam cooper", "Miriam Cooper", "PERSON"), ("valerie hobson", "Valerie Hobson", "PERSON")]:
        g.add_node(key, name=name, type=kind)
    return g


def _pick(text: str, score: float, chunk: str, ord_: int, mentions: list[tuple[str, str, str]],
          typed: list[str], label: str = "chunk #1") -> Pick:
    keys = frozenset(k for _, _, k in mentions)
    return Pick(Sentence(text, chunk, ord_, f"{chunk}.md, chunk 1", list(mentions), keys), score, "chunk", label, typed)


FIRST = _pick("Jump for Glory is a 1937 British film directed by Raoul Walsh and starring Valerie Hobson.", 4.0,
              "film", 0, [("WORK_OF_ART", "Jump for Glory", FILM), ("PERSON", "Raoul Walsh", WALSH),
                          ("PERSON", "Valerie Hobson", "valerie hobson")], ["Raoul Walsh"])
SAME_DOC = [_pick(f"The film's {what} was shot in {where} during the spring of 1937.", 3.0 - i / 10, "film", 1 + i,
                  [("WORK_OF_ART", "Jump for Glory", FILM)], [], f"chunk #{1}")
            for i, (what, where) in enumerate([("opening", "London"), ("ending", "Dover"), ("chase", "Kent")])]
NEXT_HOP = _pick("In 1916 Raoul Walsh married the actress Miriam Cooper, who starred in several of his films.", 2.5,
                 "walsh", 0, [("PERSON", "Raoul Walsh", WALSH), ("PERSON", "Miriam Cooper", "miriam cooper")],
                 ["Miriam Cooper"], "chunk #4")


def _inputs(lines: int = 4, question: str = QUESTION) -> SimpleNamespace:
    return SimpleNamespace(frame=SimpleNamespace(entity_keys=frozenset({FILM}), text=question), graph=as_graph_view(_graph()),
                           lines=lines)


def _answer(first: Pick, candidates: list[Pick], lines: int = 4, question: str = QUESTION) -> str:
    entries = [sentence_entry(p) for p in sorted(candidates, key=lambda p: -p.score)]
    return compose(first, chained(first, candidates, entries, _inputs(lines, question)), lines)


def test_the_sentence_about_the_bridge_is_quoted_though_it_ranks_below_the_lines_shown():
    text = _answer(FIRST, [FIRST, *SAME_DOC, NEXT_HOP])
    assert "Miriam Cooper" in text
    assert text.splitlines()[1].startswith("- chunk #4: In 1916 Raoul Walsh married")
    assert text.splitlines()[0].startswith("Jump for Glory is a 1937")  # the first line does not move


def test_without_the_rule_the_mode_order_alone_hides_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(chain, "CHAIN_LINES", 0)
    assert "Miriam Cooper" not in _answer(FIRST, [FIRST, *SAME_DOC, NEXT_HOP])


def test_a_sentence_naming_a_question_entity_is_not_the_next_hop():
    again = _pick("Raoul Walsh cast Jump for Glory with the help of the producer Criterion Films.", 2.5, "walsh", 1,
                  [("PERSON", "Raoul Walsh", WALSH), ("WORK_OF_ART", "Jump for Glory", FILM)], ["Criterion Films"])
    assert "Criterion" not in _answer(FIRST, [FIRST, *SAME_DOC, again])


def test_a_sentence_whose_only_wanted_type_mention_is_the_bridge_is_not_the_next_hop():
    bare = _pick("Raoul Walsh lost an eye in a car accident while preparing a western.", 2.5, "walsh", 2,
                 [("PERSON", "Raoul Walsh", WALSH)], ["Raoul Walsh"])
    assert "lost an eye" not in _answer(FIRST, [FIRST, *SAME_DOC, bare])


def test_a_sentence_of_the_first_lines_chunk_is_not_the_next_hop():
    same_chunk = _pick("Raoul Walsh later married the actress Miriam Cooper in New York.", 2.5, "film", 9,
                       [("PERSON", "Raoul Walsh", WALSH), ("PERSON", "Miriam Cooper", "miriam cooper")], ["Miriam Cooper"])
    assert "Miriam Cooper" not in _answer(FIRST, [FIRST, *SAME_DOC, same_chunk])


def test_the_bridges_come_from_the_first_hops_sentence():
    # the first line names no question entity; the best sentence naming one (the first hop) leads to Raoul Walsh
    first = _pick("The picture was released by the studio of Herbert Wilcox on 14 August 1937 to good reviews.", 5.0,
                  "release", 0, [("PERSON", "Herbert Wilcox", "herbert wilcox"), ("DATE", "14 August 1937", "14 august 1937")],
                  ["Herbert Wilcox"])
    text = _answer(first, [first, FIRST, *SAME_DOC, NEXT_HOP])
    assert "Miriam Cooper" in text


def test_the_first_lines_own_entities_are_not_bridges_when_it_is_off_the_question():
    # a first line that names no question entity is not the first hop: what it names leads nowhere asked
    first = _pick("The picture was released by the studio of Herbert Wilcox on 14 August 1937 to good reviews.", 5.0,
                  "release", 0, [("PERSON", "Herbert Wilcox", "herbert wilcox"), ("DATE", "14 August 1937", "14 august 1937")],
                  ["Herbert Wilcox"])
    wilcox = _pick("Herbert Wilcox married the actress Anna Neagle in 1943 after years of working together.", 2.5,
                   "wilcox", 0, [("PERSON", "Herbert Wilcox", "herbert wilcox"), ("PERSON", "Anna Neagle", "anna neagle")],
                   ["Anna Neagle"])
    text = _answer(first, [first, *SAME_DOC, wilcox])
    assert "Anna Neagle" not in text


def test_a_question_asking_one_relation_of_the_named_entity_gets_no_next_hop_line():
    # "Who directed Jump for Glory?" is answered by the first line; a sentence about its director's marriage is off it
    assert "Miriam Cooper" not in _answer(FIRST, [FIRST, *SAME_DOC, NEXT_HOP], question=ONE_RELATION)


def test_without_the_one_hop_rule_a_one_relation_question_gets_the_next_hop_line(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(chain, "ONE_HOP_NO_CHAIN", False)
    assert "Miriam Cooper" in _answer(FIRST, [FIRST, *SAME_DOC, NEXT_HOP], question=ONE_RELATION)


def test_a_clearly_stronger_line_is_not_pushed_out():
    strong = [_pick(f"Jump for Glory {what} in {where}, the critics wrote that year.", 6.0, "film", 5 + i,
                    [("WORK_OF_ART", "Jump for Glory", FILM)], [])
              for i, (what, where) in enumerate([("opened", "London"), ("played", "Leeds"), ("closed", "York")])]
    assert NEXT_HOP.score + chain.DISPLACE_MARGIN < 6.0
    assert "Miriam Cooper" not in _answer(FIRST, [FIRST, *strong, NEXT_HOP])


def test_the_answer_entry_point_applies_the_rule(monkeypatch: pytest.MonkeyPatch):
    candidates = [FIRST, *SAME_DOC, NEXT_HOP]
    entries = [sentence_entry(p) for p in sorted(candidates, key=lambda p: -p.score)]
    inputs = _inputs()
    inputs.ranked_by_meaning = lambda picks: False
    inputs.cache = None
    monkeypatch.setattr(answers_module, "answer_inputs", lambda *a, **k: inputs)
    monkeypatch.setattr(answers_module, "_builder", lambda mode: lambda inp, result: (candidates, entries))
    monkeypatch.setattr(answers_module, "claimed", lambda first, *a: (first, ""))
    result = RetrievalResult(query="Who is the spouse of the director of Jump for Glory?", mode="naive",
                             chunks=[ChunkHit(chunk_id="film", score=1.0, reason="test")])
    ws = SimpleNamespace(settings=SimpleNamespace(answer_sentences=4))
    assert "Miriam Cooper" in answers_module.extractive_answer(result, ws).text
