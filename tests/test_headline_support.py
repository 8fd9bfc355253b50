"""The bold short answer of an extractive answer is the mention its sentence states in the asked-for
place of the question's relation (``core.answers.support``), or nothing; and the eval's wrong-bold
rate counts bolded spans that are not the gold answer."""
from __future__ import annotations

import networkx as nx
import pytest

from core.answers.question import make_frame
from core.answers.scoring import Pick
from core.answers.sentences import Sentence
from core.answers.support import checked, question_relation, supported_surfaces
from core.evaluation.metrics import bold_spans, right_bold, wrong_bold


def pick(text: str, typed: list[str], mentions: list[tuple[str, str]]) -> Pick:
    sentence = Sentence(text, "chunk-1", 0, "doc.md, chunk 1",
                        mentions=[(label, surface, surface.lower()) for label, surface in mentions])
    return Pick(sentence, 1.0, "chunk", "chunk", typed=typed)


GRAPH = nx.Graph()
PEOPLE = [("PERSON", "Tom Vale"), ("PERSON", "Ada Brook"), ("ORG", "Corvane")]
SUCCESSOR = "Who succeeded the managing director who negotiated the Corvane acquisition?"


def surfaces(question: str, p: Pick) -> list[str]:
    return supported_surfaces(p, make_frame(question), GRAPH, {})


@pytest.mark.parametrize("sentence", [
    "Tom Vale, who negotiated the Corvane acquisition, was succeeded by Ada Brook in 2019.",
    "In 2019 Ada Brook succeeded Tom Vale as managing director.",
    "Ada Brook, who succeeded Tom Vale in 2019, moved the company to Leeds.",
])
def test_the_successor_is_bolded_not_the_predecessor(sentence):
    assert surfaces(SUCCESSOR, pick(sentence, ["Tom Vale"], PEOPLE)) == ["Ada Brook"]


def test_the_predecessor_is_bolded_when_the_question_asks_for_him():
    question = "Whom did Ada Brook succeed as managing director?"
    assert question_relation(question).role == "undergoer"
    text = "Tom Vale, who negotiated the Corvane acquisition, was succeeded by Ada Brook in 2019."
    assert surfaces(question, pick(text, ["Ada Brook"], PEOPLE)) == ["Tom Vale"]


def test_founders_of_another_company_are_not_bolded():
    question = "Who founded Brannock Instruments?"
    other = pick("Halden Optics was founded in 1971 by Mara Quist and Ivo Lenz.", ["Mara Quist"],
                 [("ORG", "Halden Optics"), ("PERSON", "Mara Quist"), ("PERSON", "Ivo Lenz")])
    assert surfaces(question, other) == []
    own = pick("Brannock Instruments was founded in 1962 by Ellis Marr and his sister.", ["Ellis Marr"],
               [("ORG", "Brannock Instruments"), ("PERSON", "Ellis Marr")])
    assert surfaces(question, own) == ["Ellis Marr"]
    referred = pick("The company was founded in 1962 by Ellis Marr.", ["Ellis Marr"], [("PERSON", "Ellis Marr")])
    assert surfaces(question, referred) == ["Ellis Marr"]  # "the company": nothing says it is another


def test_the_subject_of_the_relation_is_required():
    question = "Which company operates the tidal power station?"
    text = "It operates the ferry to Greywick and holds a minority stake in the Hollow Bay Tidal Project."
    assert surfaces(question, pick(text, ["Hollow Bay Tidal Project"], [("ORG", "Hollow Bay Tidal Project")])) == []


def test_a_year_question_bolds_only_a_year():
    question = "In what year did the institute open its aquarium?"
    text = "The institute opens its aquarium to visitors each summer."
    assert surfaces(question, pick(text, ["each summer"], [("DATE", "each summer")])) == []
    text = "The aquarium opened on 4 May 1931, each summer since."
    assert surfaces(question, pick(text, ["each summer"], [("DATE", "each summer"), ("DATE", "4 May 1931")])) \
        == ["4 May 1931"]


def test_a_sentence_that_words_the_relation_otherwise_keeps_its_bold():
    text = "Ada Brook became managing director after Tom Vale retired."
    assert surfaces(SUCCESSOR, pick(text, ["Ada Brook"], PEOPLE)) == ["Ada Brook"]
    assert question_relation("Who was the first keeper of the lighthouse?") is None  # copular: no verb to check
    assert checked(None, make_frame(SUCCESSOR), GRAPH) is None


def test_wrong_bold_counts_bolded_spans_that_are_not_the_gold_answer():
    assert bold_spans("In 2019 **Ada Brook** took over. [d, chunk 1]\n- **x** later") == ["Ada Brook"]
    assert wrong_bold("**Tom Vale** was succeeded by Ada Brook.", "Ada Brook") == 1.0
    assert wrong_bold("Tom Vale was succeeded by **Ada Brook**.", "Ada Brook") == 0.0
    assert wrong_bold("Tom Vale was succeeded by Ada Brook.", "Ada Brook") == 0.0  # no bold: no claim
    assert right_bold("Tom Vale was succeeded by Ada Brook.", "Ada Brook") == 0.0
    assert right_bold("founded in **1887**", "1887") == 1.0
    assert wrong_bold("**Brook**", "Dr. Ada Brook", ["Ada Brook"]) == 0.0  # part of the gold name counts
    assert wrong_bold("**x**", None) is None and wrong_bold(None, "x") is None


MERIDIAN = ("Meridian Tidal Power, founded in 2006 by the engineer Clara Whitfield and the oceanographer Peter "
            "Okafor, built the Hollow Bay Tidal Project, whose six seabed turbines began supplying electricity in 2016.")
MERIDIAN_MENTIONS = [("ORG", "Meridian Tidal Power"), ("DATE", "2006"), ("PERSON", "Clara Whitfield"),
                     ("PERSON", "Peter Okafor"), ("FAC", "Hollow Bay Tidal Project"), ("CARDINAL", "six"),
                     ("DATE", "2016")]


def test_a_sentence_stating_both_hops_keeps_the_answer_the_bridge_cannot_be():
    """Sample question 15: the sentence names where the question starts (Peter Okafor) and states the
    second hop too; a count cannot be the bridge (a company), so "six" stays bolded."""
    question = "How many turbines make up the power station developed by the company that Peter Okafor co-founded?"
    assert surfaces(question, pick(MERIDIAN, ["six"], MERIDIAN_MENTIONS)) == ["six"]


def test_a_date_of_the_start_entity_is_still_not_the_answer():
    """Sample question 10: "founded in 2006" is Meridian's founding (the entity the question starts
    from), not the cooperative's: no bold, although a year cannot be the bridge (a town) either."""
    question = ("In what year was the cooperative founded whose chairman organised the evacuation by boat, during "
                "the 1957 flood, of the town where Meridian Tidal Power is headquartered?")
    assert surfaces(question, pick(MERIDIAN, ["2006"], MERIDIAN_MENTIONS)) == []


def test_the_relation_word_of_a_connection_question_is_not_a_term():
    from core.answers.question import connection_words

    question = "How is the Kestrel Point Lighthouse connected to the Great Velmora Flood?"
    frame = make_frame(question, ["kestrel point lighthouse", "great velmora flood"])
    assert frame.connection and "conne" not in frame.terms and "conne" not in frame.focus
    assert connection_words("What is the relationship between the railway and the flood?") == {"relat"}
    assert connection_words("How are the railway and the flood related?") == {"relat"}
    assert not make_frame("Who founded the company connected to the railway?").connection
    assert "conne" in make_frame("Who founded the company connected to the railway?").terms
