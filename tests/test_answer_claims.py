"""The bold of an extractive answer is a claim (core.answers.claim): shown only when the quoted sentence
states the question's relation, picks one candidate of the asked-for type and clearly leads the other
sentences; otherwise the sentence is quoted without a bold and the answer's note says why. Unit cases on
hand-made sentences, then the sample corpus's questions through every mode."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import networkx as nx
import pytest

from core.answers import claim
from core.answers.claim import NOTE_CLOSE, NOTE_LIST, NOTE_RELATION, claim_terms, claimed
from core.answers.question import make_frame, sentence_stems
from core.answers.scoring import Pick
from core.answers.sentences import Sentence
from core.evaluation.metrics import right_bold, wrong_bold

SAMPLE_QUESTIONS = Path(__file__).resolve().parent.parent / "data" / "sample_questions.jsonl"


def _sentence(text: str, mentions: list[tuple[str, str]], cite: str = "doc.md, chunk 1") -> Sentence:
    return Sentence(text, "c1", 0, cite, [(label, surface, "") for label, surface in mentions],
                    frozenset(), sentence_stems(text))


def _pick(text: str, mentions: list[tuple[str, str]], typed: list[str], score: float) -> Pick:
    return Pick(_sentence(text, mentions), score, "chunk", "chunk #1", typed)


GRAPH = nx.Graph()


def test_the_words_a_wh_word_determines_are_not_part_of_the_claim():
    assert "year" not in claim_terms("In what year did the railway open to passenger traffic?")
    assert {"open", "passeng", "traffic"} & claim_terms("In what year did the railway open to passenger traffic?")
    assert "compani" not in claim_terms("Which company operates the ferry?")


def test_a_clear_claim_keeps_its_bold():
    frame = make_frame("Who founded the Velmora Marine Institute?")
    best = _pick("The Velmora Marine Institute was founded in 1921 by Agnes Marlowe.", [("PERSON", "Agnes Marlowe")],
                 ["Agnes Marlowe"], 4.0)
    other = _pick("The institute runs a research vessel.", [], [], 2.5)
    pick, note = claimed(best, [best, other], frame, GRAPH)
    assert pick is not None and pick.typed == ["Agnes Marlowe"] and note == ""


def test_a_sentence_that_does_not_state_the_relation_is_quoted_without_a_bold():
    frame = make_frame("Who founded the Velmora Marine Institute?")
    best = _pick("Agnes Marlowe lectured at the Velmora Marine Institute for thirty years.",
                 [("PERSON", "Agnes Marlowe")], ["Agnes Marlowe"], 4.0)
    pick, note = claimed(best, [best], frame, GRAPH)
    assert pick is not None and pick.typed == [] and note == NOTE_RELATION
    assert pick.sentence is best.sentence  # the same sentence is still quoted first


def test_a_list_of_candidates_is_not_bolded():
    frame = make_frame("Who founded the Velmora Marine Institute?")
    best = _pick("The Velmora Marine Institute was founded by Agnes Marlowe, Tom Vale and Ada Brook.",
                 [("PERSON", "Agnes Marlowe"), ("PERSON", "Tom Vale"), ("PERSON", "Ada Brook")], ["Agnes Marlowe"], 4.0)
    pick, note = claimed(best, [best], frame, GRAPH)
    assert pick is not None and pick.typed == [] and note == NOTE_LIST


def test_a_close_second_sentence_withholds_the_bold_but_a_copy_of_the_same_sentence_does_not():
    frame = make_frame("Who founded the Velmora Marine Institute?")
    text = "In 1921 Agnes Marlowe founded it with a gift from her father."  # "it": the parse cannot show whose founding
    cite = "04-velmora-marine-institute.md, chunk 1"  # the institute's own article: the sentence is about it
    best = Pick(_sentence(text, [("PERSON", "Agnes Marlowe")], cite), 4.0, "chunk", "chunk #1", ["Agnes Marlowe"])
    close = _pick("Tom Vale founded a sailing club near the Velmora Marine Institute.", [("PERSON", "Tom Vale")],
                  ["Tom Vale"], 3.9)
    pick, note = claimed(best, [best, close], frame, GRAPH)
    assert pick is not None and pick.typed == [] and note == NOTE_CLOSE
    assert pick.sentence is best.sentence  # Tom Vale founded a club near the institute: not promoted
    copy = Pick(_sentence(text, [("PERSON", "Agnes Marlowe")], cite), 3.95, "bridge", "bridge", ["Agnes Marlowe"])
    pick, note = claimed(best, [best, copy], frame, GRAPH)
    assert pick is not None and pick.typed == ["Agnes Marlowe"] and note == ""


def test_a_sentence_whose_parse_states_the_relation_about_the_subject_needs_no_margin():
    """"X was founded … by **A**": the question's verb with its named subject on the other side and the
    span in the asked-for side is bolded even when another sentence scores almost as high."""
    frame = make_frame("Who founded the Velmora Marine Institute?")
    best = _pick("The Velmora Marine Institute was founded in 1921 by Agnes Marlowe.", [("PERSON", "Agnes Marlowe")],
                 ["Agnes Marlowe"], 4.0)
    close = _pick("Tom Vale founded a sailing club near the Velmora Marine Institute.", [("PERSON", "Tom Vale")],
                  ["Tom Vale"], 3.9)
    pick, note = claimed(best, [best, close], frame, GRAPH)
    assert pick is not None and pick.typed == ["Agnes Marlowe"] and note == ""


def test_a_lower_sentence_that_states_the_claim_is_quoted_first_and_bolded():
    frame = make_frame("Who founded the Velmora Marine Institute?")
    best = _pick("Agnes Marlowe lectured at the Velmora Marine Institute for thirty years.",
                 [("PERSON", "Agnes Marlowe")], ["Agnes Marlowe"], 4.0)
    lower = _pick("The institute's records show that Edwin Marlowe founded the Velmora Marine Institute in 1921.",
                  [("PERSON", "Edwin Marlowe")], ["Edwin Marlowe"], 3.0)
    pick, note = claimed(best, [best, lower], frame, GRAPH)
    assert pick is not None and pick.sentence is lower.sentence and pick.typed == ["Edwin Marlowe"] and note == ""
    far = replace(lower, score=best.score - claim.PROMOTE_WINDOW - 0.1)
    pick, note = claimed(best, [best, far], frame, GRAPH)
    assert pick is not None and pick.sentence is best.sentence and pick.typed == [] and note == NOTE_RELATION


def test_promotion_rests_on_the_parse(monkeypatch):
    """The guard of the two tests above: with the parse checks stubbed out (the argument reading of
    ``core.answers.arguments`` reads the same relation), nothing is promoted or bolded."""
    import core.answers.arguments as arguments
    import core.answers.support as support

    monkeypatch.setattr(support, "parse_verified", lambda *a, **k: [])
    monkeypatch.setattr(arguments, "argued", lambda best, *a, **k: best)
    frame = make_frame("Who founded the Velmora Marine Institute?")
    best = _pick("Agnes Marlowe lectured at the Velmora Marine Institute for thirty years.",
                 [("PERSON", "Agnes Marlowe")], ["Agnes Marlowe"], 4.0)
    lower = _pick("The institute's records show that Edwin Marlowe founded the Velmora Marine Institute in 1921.",
                  [("PERSON", "Edwin Marlowe")], ["Edwin Marlowe"], 3.0)
    pick, _ = claimed(best, [best, lower], frame, GRAPH)
    assert pick is not None and pick.sentence is best.sentence and pick.typed == []


def test_a_wrong_type_span_is_never_bolded_even_when_the_parse_states_the_relation():
    frame = make_frame("Who founded the Velmora Marine Institute?")
    best = _pick("The Velmora Marine Institute was founded by the Harbour Trust in 1921.",
                 [("DATE", "1921")], [], 4.0)
    pick, note = claimed(best, [best], frame, GRAPH)
    assert pick is not None and pick.typed == []


def test_no_typed_mention_means_no_note():
    frame = make_frame("Who founded the Velmora Marine Institute?")
    best = _pick("The institute stands on the harbour.", [], [], 3.0)
    assert claimed(best, [best], frame, GRAPH) == (best, "")
    assert claimed(None, [], frame, GRAPH) == (None, "")


def _sample_bolds(sample_ws) -> tuple[int, int, dict[str, int]]:
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN

    right = wrong = 0
    wrong_by_mode: dict[str, int] = {}
    for line in SAMPLE_QUESTIONS.read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        if not q.get("answer"):
            continue
        for mode, result in run_modes(LOCAL_ADMIN, sample_ws, q["question"], "all").items():
            if result.answer is None:
                continue
            text = result.answer.text
            if "**" not in text.split("\n")[0]:
                assert result.answer.note or "**" not in text, (mode, text)
            right += int(right_bold(text, q["answer"], q.get("answer_aliases", [])) or 0)
            bad = int(wrong_bold(text, q["answer"], q.get("answer_aliases", [])) or 0)
            wrong += bad
            wrong_by_mode[mode] = wrong_by_mode.get(mode, 0) + bad
    return right, wrong, wrong_by_mode


@pytest.mark.slow
def test_sample_questions_bold_rarely_wrongly_and_still_bold_right_answers(sample_ws):
    """Over the sample corpus's answerable questions in every mode: before the claim check 68 right and
    23 wrong bolds; with it 48 right and 3 wrong (tree's two lighthouse-keeper questions, path's one);
    with the role check and promotion (``copular``, ``claim.promoted``) 52 right and 1 wrong (tree's
    Salt Quay question). Replacing the check by a pass-through brings the wrong bolds back (next test)."""
    right, wrong, by_mode = _sample_bolds(sample_ws)
    assert wrong <= 2, by_mode
    assert right >= 50
    assert right >= 10 * wrong


@pytest.mark.slow
def test_the_claim_check_is_what_keeps_wrong_bolds_away(sample_ws, monkeypatch):
    """The guard of the test above: with ``claimed`` replaced by the support check alone (the bold
    before this change), the sample questions bold wrongly far more often."""
    from core.answers.support import checked

    def pass_through(best, candidates, frame, graph, cache=None):
        return checked(best, frame, graph, cache) if best is not None else None, ""

    import core.answers as answers

    monkeypatch.setattr(answers, "claimed", pass_through)
    _, wrong, by_mode = _sample_bolds(sample_ws)
    assert wrong > 10, by_mode
    assert claim.claimed is not pass_through


def test_a_role_stated_by_a_copula_about_the_named_subject_is_bolded():
    frame = make_frame("Who was the first keeper of Kestrel Point Lighthouse?")
    best = Pick(Sentence("The most important warning came from Ruth Harland, the principal keeper of Kestrel Point "
                         "Lighthouse, who noticed the rising sea.", "c1", 0, "07-great-velmora-flood.md, chunk 2",
                         [("PERSON", "Ruth Harland", "")], frozenset(),
                         sentence_stems("The most important warning came from Ruth Harland, the principal keeper of "
                                        "Kestrel Point Lighthouse, who noticed the rising sea.")),
                4.0, "chunk", "chunk #1", ["Ruth Harland"])
    text = "The first principal keeper was Josiah Harland (1831–1904), a former ship's carpenter."
    answer = Pick(Sentence(text, "c2", 3, "05-kestrel-point-lighthouse.md, chunk 2", [("PERSON", "Josiah Harland", "")],
                           frozenset(), sentence_stems(text)), 3.0, "chunk", "chunk #2", ["Josiah Harland"])
    pick, note = claimed(best, [best, answer], frame, GRAPH)
    assert pick is not None and pick.sentence is answer.sentence and pick.typed == ["Josiah Harland"] and note == ""
    # the principal keeper is another role than the first keeper: never bolded on its own
    pick, note = claimed(best, [best], frame, GRAPH)
    assert pick is not None and pick.typed == [] and note == NOTE_RELATION
    # the same sentence in a document about another lighthouse does not name the subject: no bold
    elsewhere = replace(answer, sentence=replace(answer.sentence, cite="greywick-light.md, chunk 1"))
    pick, _ = claimed(best, [best, elsewhere], frame, GRAPH)
    assert pick is not None and pick.typed == []


def test_a_role_of_another_named_entity_is_not_bolded():
    from core.answers.copular import copular_verified, role_question

    frame = make_frame("Who was the first keeper of Kestrel Point Lighthouse?")
    other = _pick("Tom Vale, the first keeper of Greywick Light, was born in 1800.", [("PERSON", "Tom Vale")],
                  ["Tom Vale"], 3.0)
    assert copular_verified(other, frame, GRAPH, {}) == []
    assert role_question("Who is the spouse of the director of Jump for Glory?").subject == frozenset()  # described


@pytest.mark.slow
def test_the_first_keeper_question_is_answered_by_every_mode(sample_ws):
    """The browser case: every mode used to bold a wrong keeper (Ruth or William Harland) while the
    evidence said "The first principal keeper was Josiah Harland"."""
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN

    question = "Who was the first keeper of Kestrel Point Lighthouse?"
    for mode, result in run_modes(LOCAL_ADMIN, sample_ws, question, "all").items():
        if result.answer is None:
            continue
        first = result.answer.text.split("\n")[0]
        assert "**Josiah Harland**" in first, (mode, first)
