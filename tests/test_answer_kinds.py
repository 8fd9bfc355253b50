"""More right bolds without wrong ones (issue 31, "bold only what you can stand behind"): the categories
of questions whose quoted sentence held the gold answer with nothing bolded on the MuSiQue dev sets.

* a name that carries the asked-for kind ("Of what *church* …" → "the **Anglican Church of Canada**",
  "What *body of water* …" → "on the **Fulda River**": ``copular.kind_verified``);
* a relation noun owned by a name that only says how the bridge is reached ("the Diocese of *the
  birthplace of* Meehan Bonnar") is not asked of the answer's sentence (``claim.claim_terms``), and in
  exchange that sentence must reach the owner's bridge (``grounding.reaches_owner``);
* a lower sentence is lifted over the best only when the last gates would let it keep its bold;
* rivals of a list are counted in the bold's own label ("such as A Hotels, B Hotels and C").

Each test fails when its rule is stubbed; a span of the wrong kind is never bolded."""
from __future__ import annotations

import networkx as nx

from core.answers import claim, claim_words, copular, grounding
from core.answers.claim import claim_terms, claimed, hop_owners
from core.answers.copular import asked_kind, kind_verified
from core.answers.question import make_frame, sentence_stems
from core.answers.scoring import Pick
from core.answers.sentences import Sentence

GRAPH = nx.Graph()
CHURCH = "Of what church is the Diocese of the birthplace of Meehan Bonnar?"
WATER = "What body of water is near the location where the Siege of Cassel took place?"
AIRPORT = "What is the name of the airport in the city where KVLM is licensed to broadcast?"


def _pick(text: str, mentions: list[tuple[str, str, str]], typed: list[str], score: float = 4.0,
          doc: str = "doc.md") -> Pick:
    keys = frozenset(key for _, _, key in mentions if key)
    sentence = Sentence(text, "c-" + text[:12], 0, f"{doc}, chunk 1", mentions, keys, sentence_stems(text), doc=doc)
    return Pick(sentence, score, "chunk", "chunk #1", typed)


def _church_picks() -> tuple[Pick, Pick, Pick]:
    born = _pick("Meehan Bonnar (born April 20, 1947, in Fredericton, New Brunswick) is a former ice hockey player.",
                 [("PERSON", "Meehan Bonnar", "meehan bonnar"), ("GPE", "Fredericton", "fredericton")], [], 1.0,
                 doc="Meehan Bonnar")
    answer = _pick("The Diocese of Fredericton is a diocese of the Ecclesiastical Province of Canada of the "
                   "Anglican Church of Canada.",
                   [("ORG", "Diocese of Fredericton", "diocese of fredericton"), ("GPE", "Canada", "canada"),
                    ("ORG", "Anglican Church of Canada", "anglican church of canada")],
                   ["Anglican Church of Canada"], 2.2, doc="Diocese of Fredericton")
    london = _pick("The church is part of the Diocese of London within the Church of England.",
                   [("GPE", "Diocese of London", "diocese of london"), ("ORG", "Church of England", "church of england")],
                   ["Church of England"], 2.3, doc="St Giles in the Fields")
    return born, answer, london


# --- the kind a name carries ---------------------------------------------------------------------------

def test_the_asked_kind_is_read_from_the_wh_noun_the_name_of_phrase_and_body_of_water():
    assert asked_kind(CHURCH) == {"church"}
    assert asked_kind(AIRPORT) == {"airport"}
    assert "river" in asked_kind(WATER) and "lake" in asked_kind(WATER)
    assert asked_kind("Which explorer mapped the coast of Africa?") == frozenset()  # a person's name says no kind
    assert asked_kind("In what year did the railway open?") == frozenset()  # nor a date
    assert asked_kind("Which rivers flow through Kassel?") == frozenset()  # a plural: one name does not answer


def test_a_sentence_naming_one_entity_of_the_asked_kind_is_bolded_without_the_margin():
    frame = make_frame(WATER, {"kassel"})  # the question's "Cassel" linked to the entity Kassel
    kassel = _pick("Kassel is a city located on the Fulda River in northern Hesse, Germany.",
                   [("GPE", "Kassel", "kassel"), ("LOC", "Fulda River", "fulda river"), ("GPE", "Hesse", "hesse"),
                    ("GPE", "Germany", "germany")], ["Kassel"], 3.0, doc="Kassel")
    rival = _pick("The siege of Cassel took place in 1761 near the town.", [("DATE", "1761", "")], [], 2.95)
    assert kind_verified(kassel, frame) == ["Fulda River"]
    pick, note = claimed(kassel, [kassel, rival], frame, GRAPH)
    assert pick is not None and pick.typed == ["Fulda River"] and note == ""


def test_without_the_kind_rule_the_close_sentence_bolds_nothing(monkeypatch):
    monkeypatch.setattr(copular, "kind_verified", lambda *a, **k: [])
    frame = make_frame(WATER, {"kassel"})
    kassel = _pick("Kassel is a city located on the Fulda River in northern Hesse, Germany.",
                   [("GPE", "Kassel", "kassel"), ("LOC", "Fulda River", "fulda river")], ["Kassel"], 3.0, doc="Kassel")
    rival = _pick("The siege of Cassel took place in 1761 near the town.", [("DATE", "1761", "")], [], 2.95)
    pick, _ = claimed(kassel, [kassel, rival], frame, GRAPH)
    assert pick is not None and "Fulda River" not in pick.typed


def test_a_wrong_kind_or_two_names_of_the_kind_are_never_bolded():
    frame = make_frame(WATER)
    county = _pick("Kassel lies in Kassel County, next to Waldeck County.",
                   [("GPE", "Kassel County", "kassel county"), ("GPE", "Waldeck County", "waldeck county")],
                   ["Kassel County"], 3.0)
    assert kind_verified(county, frame) == []  # a county is not a body of water
    two = _pick("Portland lies partly in Dodge County and partly in Jefferson County, Wisconsin.",
                [("GPE", "Dodge County", "dodge county"), ("GPE", "Jefferson County", "jefferson county")],
                ["Dodge County"], 3.0)
    frame = make_frame("What county shares a border with the county where Black Hawk Township is located?")
    assert kind_verified(two, frame) == []  # which of the two is not said
    chains = _pick("Hotel chains such as Avani Hotels operate in Windhoek.", [("ORG", "Avani Hotels", "avani")],
                   ["Avani Hotels"], 3.0)
    assert kind_verified(chains, make_frame("What is the most popular hotel in Windhoek?")) == []  # a chain


# --- the first hop's relation noun --------------------------------------------------------------------

def test_the_relation_noun_that_reaches_the_bridge_is_not_asked_of_the_answer():
    assert not {"birth", "birthp"} & claim_terms(CHURCH)
    assert not {"birth", "city"} & claim_terms("What is the most popular hotel in Gisvi's city of birth?")
    assert {"hotel", "popul"} <= claim_terms("What is the most popular hotel in Gisvi's city of birth?")
    assert hop_owners(CHURCH) == (sentence_stems("Meehan Bonnar"),)
    # the role noun asked about is not a first hop: "the first keeper of X" stays in the claim
    assert hop_owners("Who was the first keeper of Kestrel Point Lighthouse?") == ()
    assert "keepe" in claim_terms("Who was the first keeper of Kestrel Point Lighthouse?")


def test_the_sentence_about_the_bridge_is_bolded_and_one_about_another_diocese_is_not():
    frame = make_frame(CHURCH)
    born, answer, london = _church_picks()
    pick, note = claimed(answer, [answer, born, london], frame, GRAPH)
    assert pick is not None and pick.typed == ["Anglican Church of Canada"], note
    pick, note = claimed(london, [london, born], frame, GRAPH)
    assert pick is not None and pick.typed == [] and note == grounding.NOTE_UNGROUNDED
    # with the bridge's sentence among the evidence, it is quoted first instead (``claim.lifted_past_gates``)
    pick, note = claimed(london, [london, answer, born], frame, GRAPH)
    assert pick is not None and pick.sentence is answer.sentence and pick.typed == ["Anglican Church of Canada"]


def test_without_the_owner_gate_the_other_diocese_is_bolded(monkeypatch):
    monkeypatch.setattr(grounding, "reaches_owner", lambda *a, **k: True)
    frame = make_frame(CHURCH)
    born, answer, london = _church_picks()
    pick, _ = claimed(london, [london, answer, born], frame, GRAPH)
    assert pick is not None and pick.typed == ["Church of England"]


def test_without_dropping_the_first_hop_words_the_answer_is_not_bolded(monkeypatch):
    monkeypatch.setattr(claim_words, "first_hop_words", lambda doc: set())
    frame = make_frame(CHURCH)
    born, answer, london = _church_picks()
    pick, _ = claimed(answer, [answer, born, london], frame, GRAPH)
    assert pick is not None and pick.typed == []


# --- a list counted in the bold's own label -------------------------------------------------------------

def test_a_list_of_the_bolds_own_label_is_not_bolded():
    frame = make_frame("Who runs the most popular hotel in Windhoek?")
    hotels = _pick("The most popular hotel in Windhoek is run by Avani Group, Hilton Group and Protea Group.",
                   [("GPE", "Windhoek", "windhoek"), ("ORG", "Avani Group", "avani"), ("ORG", "Hilton Group", "hilton"),
                    ("ORG", "Protea Group", "protea")], ["Avani Group"], 3.0)
    assert claim._candidates(hotels, frame) == 3
    pick, note = claimed(hotels, [hotels], frame, GRAPH)
    assert pick is not None and pick.typed == [] and note == claim.NOTE_LIST


# --- the verb stated by its noun; the title naming the subject -------------------------------------------

INVADE = "When did the country of Izgoy's performer invade Manchuria?"


def test_a_verb_is_stated_by_its_noun_and_only_by_a_real_one():
    from core.answers.grounding import states_verb_noun, verb_nouns

    assert "invasion" in verb_nouns("invade") and "foundation" in verb_nouns("found")
    assert verb_nouns("die") == {"death"}  # never "dial"
    assert "starvation" not in verb_nouns("start")
    assert states_verb_noun("the Soviet invasion of Manchuria on 8 August 1945", "invade")
    assert not states_verb_noun("Japan occupied Manchuria in 1931", "invade")


def test_the_noun_of_the_verb_with_the_named_object_bolds_the_date_next_to_it():
    from core.answers.copular import nominal_verified

    frame = make_frame(INVADE, {"manchuria"})
    war = _pick("The war ended, accompanied by the Soviet invasion of Manchuria on 8 August 1945, resulting in "
                "the announcement of 15 August 1945.",
                [("NORP", "Soviet", "soviet"), ("GPE", "Manchuria", "manchuria"), ("DATE", "8 August 1945", ""),
                 ("DATE", "15 August 1945", "")], ["15 August 1945"])
    assert nominal_verified(war, frame, GRAPH) == ["8 August 1945"]
    other = _pick("Japan invaded Korea on 8 August 1905.", [("GPE", "Korea", "korea"), ("DATE", "8 August 1905", "")],
                  ["8 August 1905"])
    assert nominal_verified(other, frame, GRAPH) == []  # the verb, not its noun, and another object


def test_without_the_noun_of_the_verb_the_when_gate_refuses(monkeypatch):
    frame = make_frame(INVADE, {"manchuria"})
    war = _pick("The Soviet invasion of Manchuria began on 8 August 1945.",
                [("NORP", "Soviet", "soviet"), ("GPE", "Manchuria", "manchuria"), ("DATE", "8 August 1945", "")],
                ["8 August 1945"])
    assert grounding.states_asked_verb(war, frame)
    monkeypatch.setattr(grounding, "states_verb_noun", lambda *a, **k: False)
    assert not grounding.states_asked_verb(war, frame)


def test_the_documents_title_holds_the_questions_words_for_the_subject(monkeypatch):
    frame = make_frame("Where is the district that Knott is part of located in the UK?", {"knott"})
    cumbria = _pick("It is located entirely within the county of Cumbria.", [("GPE", "Cumbria", "cumbria")],
                    ["Cumbria"], doc="Lake District")
    assert claim.reason(cumbria, frame, claim.question_claim(frame)) == ""
    monkeypatch.setattr(claim, "_title", lambda pick: frozenset())
    assert claim.reason(cumbria, frame, claim.question_claim(frame)) == claim.NOTE_RELATION


# --- the person a "name of" phrase asks for ---------------------------------------------------------------

SISTER = "What was the name of Scrooge's little sister who came to bring him home from school?"


def _sister_picks() -> tuple[Pick, Pick]:
    nephew = _pick("Bob told them of the extraordinary kindness of Mr. Scrooge's nephew, whom he had scarcely seen "
                   "but once, and who, meeting him in the street, saw that he looked a little down.",
                   [("PERSON", "Bob", "bob"), ("PERSON", "Scrooge", "scrooge")], ["Bob"], 4.0)
    sister = _pick("Scrooge's little sister Fan came to bring him home from school.",
                   [("PERSON", "Scrooge", "scrooge"), ("PERSON", "Fan", "fan")], ["Fan"], 3.0)
    return nephew, sister


def test_the_name_of_a_named_persons_relative_asks_the_relation_noun():
    assert claim.named_role(SISTER) == "siste"
    assert claim.named_role("What was the name of the wife of Ada Lovelace?") == "wife"
    assert claim.named_role(AIRPORT) == ""  # a kind, no owner: the kind rule reads it
    frame = make_frame(SISTER)
    nephew, sister = _sister_picks()
    assert claim.reason(nephew, frame, claim.question_claim(frame)) == claim.NOTE_RELATION
    assert claim.reason(sister, frame, claim.question_claim(frame)) == ""


def test_without_the_role_noun_a_sentence_sharing_only_its_modifier_states_the_claim(monkeypatch):
    monkeypatch.setattr(claim, "named_role", lambda question: "")
    frame = make_frame(SISTER)
    nephew, _ = _sister_picks()
    assert claim.reason(nephew, frame, claim.question_claim(frame)) == ""  # "a little" stood for "little sister"


APPRENTICE = "Who was Scrooge's fellow apprentice at Fezziwig's warehouse?"


def test_the_role_a_named_persons_copular_question_asks_must_be_said():
    assert claim.named_role(APPRENTICE) == "appre"
    frame = make_frame(APPRENTICE)
    fred = _pick("'He's a comical old fellow,' said Scrooge's nephew, 'that's the truth.'",
                 [("PERSON", "Scrooge", "scrooge")], ["Fred"], 4.0)
    dick = _pick("Dick Wilkins, a fellow apprentice of Scrooge's.",
                 [("PERSON", "Dick Wilkins", "dick wilkins"), ("PERSON", "Scrooge", "scrooge")], ["Dick Wilkins"], 4.0)
    assert claim.reason(fred, frame, claim.question_claim(frame)) == claim.NOTE_RELATION  # "fellow" alone
    assert claim.reason(dick, frame, claim.question_claim(frame)) == ""


def test_a_book_label_title_does_not_say_the_passages_subject():
    label = _pick("Scrooge lay in this state until the chime had gone three-quarters more.", [], [],
                  doc="A Christmas Carol - Stave Two: The First of the Three Spirits")
    subject = _pick("It is located within the county of Cumbria.", [], [], doc="Lake District")
    assert claim._title(label) == frozenset()
    assert claim._title(subject) == sentence_stems("Lake District")


def test_a_named_place_that_sets_the_scene_is_no_hop():
    # "at Fezziwig's warehouse" says where Scrooge was an apprentice: its words stay in the claim and
    # Fezziwig is no owner the bold's sentence must reach; "in Gisvi's city of birth" is still a hop
    assert "wareh" in claim_terms(APPRENTICE) and hop_owners(APPRENTICE) == ()
    assert hop_owners("What is the most popular hotel in Gisvi's city of birth?") == (sentence_stems("Gisvi"),)
