"""The first line gives the answer as one of the asked kind (issue 31 (b)): "Which annual *festival* …" is
answered first by a sentence naming the Lantern Tide *Festival*, not by one about the Great Velmora Flood that
only has a higher score from its place in the mode's evidence (``scoring.first_choice``, ``KIND``)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.answers import scoring
from core.answers.question import make_frame, sentence_stems
from core.answers.scoring import Pick, asked_kind, first_choice, of_the_kind
from core.answers.sentences import Sentence

SAMPLE_QUESTIONS = Path(__file__).resolve().parent.parent / "data" / "sample_questions.jsonl"
QUESTION = "Which annual festival is organised by the museum whose founding director was the daughter of Ruth Harland?"


def _pick(text: str, score: float, typed: list[str]) -> Pick:
    return Pick(Sentence(text, "c1", 0, "doc.md, chunk 1", [], frozenset(), sentence_stems(text)), score, "chunk",
                "chunk #1", typed)


FLOOD = _pick("It accelerated the decline of the old waterfront economy of Port Sallow.", 2.36, ["Great Velmora Flood"])
FESTIVAL = _pick("The Velmora Maritime Museum opened in Port Sallow in 1978, and the Lantern Tide Festival developed "
                 "from a small church vigil.", 2.19, ["Lantern Tide Festival"])


@pytest.mark.parametrize("question, kind", [
    (QUESTION, "festival"),
    ("In what county is the town where X was born?", "county"),
    ("What cities lie on the river?", "city"),
    ("Which is the body of water by the birthplace of X?", "body"),
    ("Who founded the Velmora Marine Institute?", ""),
    ("In what year did the railway open?", ""),  # a year has no name headed by "year"
    ("What is the area code for Cincinnati?", ""),
])
def test_the_asked_kind_is_the_noun_the_wh_word_determines(question, kind):
    assert asked_kind(question) == kind


def test_a_mention_headed_by_the_kind_noun_or_a_sentence_saying_it_is_of_the_kind():
    frame = make_frame(QUESTION)
    assert of_the_kind(FESTIVAL, frame) and not of_the_kind(FLOOD, frame)
    hotels = _pick("There are notable hotels in Windhoek such as Windhoek Country Club Resort.", 1.0,
                   ["Windhoek Country Club Resort"])
    assert of_the_kind(hotels, make_frame("What is the most popular hotel in Gisvi's city of birth?"))
    assert not of_the_kind(_pick(FESTIVAL.sentence.text, 1.0, []), frame)  # nothing of the wanted type: no kind


def test_the_sentence_of_the_kind_is_quoted_first_over_a_slightly_higher_one():
    frame = make_frame(QUESTION)
    assert first_choice([FLOOD, FESTIVAL], frame) is FESTIVAL
    assert first_choice([FLOOD, _pick("Another sentence.", 3.0, ["Great Velmora Flood"]), FESTIVAL],
                        frame).score == 3.0  # a clearly better sentence stays first


def test_without_the_kind_the_higher_score_is_first(monkeypatch):
    monkeypatch.setattr(scoring, "KIND", 0.0)
    assert first_choice([FLOOD, FESTIVAL], make_frame(QUESTION)) is FLOOD


@pytest.mark.slow
def test_sample_festival_question_is_answered_first_in_local(sample_ws):
    """Sample question 9 through the real pipeline in local: the festival's sentence is the first line (before:
    "It accelerated the decline of the old waterfront economy of Port Sallow …", an "about" line on the flood)."""
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN

    q = next(json.loads(line) for line in SAMPLE_QUESTIONS.read_text(encoding="utf-8").splitlines()
             if json.loads(line)["qid"] == "sample:9")
    first = run_modes(LOCAL_ADMIN, sample_ws, q["question"], "local")["local"].answer.text.split("\n")[0]
    assert "Lantern Tide Festival" in first.split(" [")[0], first
