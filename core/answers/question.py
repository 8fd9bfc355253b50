"""What a question asks for, read once per question without parsing any document text.

* ``answer_types`` — the entity types an answer should have, one group per thing asked
  ("Which company acquired X, and for how much?" asks for an ORG and for MONEY):
  who → PERSON/ORG, where → GPE/LOC/FAC, when → DATE, how many/much → CARDINAL/MONEY/QUANTITY/PERCENT,
  and "what/which <noun>" by the noun ("which company" → ORG, "what year" → DATE, "what language" →
  LANGUAGE). Only interrogative wh-words count: a "where" or "who" after a noun ("the city where …",
  "the person who …") opens a relative clause and is skipped.
* ``question_terms`` — the question's content words as prefix stems with weights (longer, capitalised
  words weigh more), for the lexical match of candidate sentences.
* ``QuestionFrame`` — both, plus the question's entities linked to the knowledge graph.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Optional

WHO = ("PERSON", "ORG", "NORP")
WHERE = ("GPE", "LOC", "FAC")
WHEN = ("DATE",)
HOW_MANY = ("CARDINAL", "QUANTITY", "MONEY", "PERCENT")
HOW_MUCH = ("MONEY", "QUANTITY", "CARDINAL", "PERCENT")
HOW_LONG = ("DATE", "QUANTITY", "CARDINAL")

# head nouns of "what/which <noun>" questions -> wanted entity types (singular forms; plurals by "s")
_NOUN_TYPES: dict[str, tuple[str, ...]] = {}
for _types, _type_words in [
    (("PERSON",), "person people man woman author writer actor actress singer president founder director leader "
                  "player character king queen wife husband spouse son daughter child father mother brother sister "
                  "explorer composer scientist keeper chancellor chairman chair arbitrator artist poet producer "
                  "performer individual ruler minister governor mayor candidate captain coach manager owner "
                  "editor inventor architect painter musician member head chief emperor prince princess"),
    (("ORG",), "company organisation organization firm band team club university college school institute "
               "museum party association agency network label newspaper cooperative society council church "
               "corporation business airline brand publisher studio bank"),
    (("FAC", "ORG"), "hotel hospital stadium bridge prison"),
    # a structure is a facility first ("the *airport* in the city …": the airport, not the state it is in)
    (("FAC", "LOC"), "airport station building street"),
    # a body of water is a location, never a town or a county ("the *body of water* by …": not "Providence County")
    (("LOC", "FAC"), "river lake sea ocean body bay"),
    (("GPE", "LOC", "FAC"), "city town country state county island region place mountain location capital "
                            "province village continent district area territory nation "
                            "port harbour harbor valley coast park"),
    (("DATE",), "year date decade century day month season time period era"),
    (("CARDINAL", "QUANTITY", "MONEY", "PERCENT"), "number amount population price cost sum total percentage "
                                                   "height length distance size capacity code debt snowfall rainfall temperature depth "
                                                   "width weight"),
    (("LANGUAGE",), "language tongue"),
    (("NORP",), "nationality religion"),
    (("EVENT",), "festival war battle event tournament championship election"),
    (("WORK_OF_ART",), "book film movie song album novel play piece opera poem series show"),
    (("LAW",), "law act treaty agreement"),
]:
    for _word in _type_words.split():
        _NOUN_TYPES[_word] = _types

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_PREPOSITIONS = frozenset("in of to for from at by with on into during since until about".split())
_COPULA = frozenset("is was are were has have had can could will would".split())
_DO = frozenset("did does do".split())
OF_NOUNS = frozenset("name kind type sort part group amount number".split())  # "the name of the airport"
_WH = frozenset("who whom whose what which when where how".split())
STOP = frozenset(
    "the a an of in on at to for and or is was were be been being by with as from that which who whom whose what "
    "when where why how did does do done this these those it its his her their there than then also into about "
    "has have had are not no but if so such can could would should will may might one ones name named many much "
    "long old same other another most more".split())
FOCUS = 3.0  # weight multiplier of the focus terms (the words right after the question word)
# "How is A connected to B?", "What is the relationship between A and B?": the relation word says what
# form of answer is wanted (the link between the names), it is not a word the answer sentence shares
# ("Local speech retains many words *connected* with boats" led every mode's answer to such a question)
_RELATION_WORD = (r"(connect(?:s|ed|ion|ions)?|relat(?:ed|ion|ions|ionship)|link(?:s|ed)?|tie(?:s|d)?|"
                  r"associat(?:ed|ion))")
_CONNECTION = re.compile(
    rf"^\s*(?:(?:how|what|in what way)\b.*?\b{_RELATION_WORD}\b\s*(?:(?:to|with|between|and)\b|\?\s*$)"
    rf"|what\s+{_RELATION_WORD}\b)", re.IGNORECASE)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text or "")]


def connection_words(question: str) -> frozenset[str]:
    """Stems of the relation word of a question asking how two things are linked ("How is A
    *connected* to B?", "What is the *relationship* between A and B?"): not terms of its answer."""
    found = _CONNECTION.search(question or "")
    word = found and (found.group(1) or found.group(2))
    return frozenset({stem(word.lower())}) if word else frozenset()


def noun_types(word: str) -> Optional[tuple[str, ...]]:
    """The entity types a noun names ("company" → ORG, "cities" → places), None when it names none."""
    if word in _NOUN_TYPES:
        return _NOUN_TYPES[word]
    if word.endswith("ies") and word[:-3] + "y" in _NOUN_TYPES:
        return _NOUN_TYPES[word[:-3] + "y"]
    if word.endswith("s") and word[:-1] in _NOUN_TYPES:
        return _NOUN_TYPES[word[:-1]]
    return None


def _interrogative(words: list[str], i: int) -> bool:
    """Is the wh-word at ``i`` a question word (not a relative pronoun after a noun)?"""
    word = words[i]
    if word in ("what", "how") or i == 0 or i == len(words) - 1:
        return True
    before = words[i - 1]
    if before == "and":
        return True
    return before in _PREPOSITIONS and (i <= 2 or word == "what")


def _types_at(words: list[str], i: int) -> Optional[tuple[str, ...]]:
    """Wanted types of the wh-phrase starting at ``i`` (None: nothing typed is asked)."""
    word = words[i]
    nxt = words[i + 1] if i + 1 < len(words) else ""
    if word == "how":
        return {"many": HOW_MANY, "much": HOW_MUCH, "long": HOW_LONG, "old": HOW_LONG}.get(nxt)
    if word in ("who", "whom", "whose"):
        return WHO
    if word == "where":
        return WHERE
    if word == "when":
        return WHEN
    # what / which + a noun phrase: its head is the last of the first run of typed nouns
    # ("what is the native language of …" → language, "what is the area code for …" → code,
    # "what is the name of the airport in …" → airport); "what did/does …" asks about its subject's action
    j = i + 1
    if j < len(words) and words[j] in _DO:
        return None
    if j < len(words) and words[j] in _COPULA:
        j += 1
    found: Optional[tuple[str, ...]] = None
    for k in range(j, min(len(words), j + 8)):
        w = words[k]
        if w == "of" and k > j and words[k - 1] in OF_NOUNS:
            continue
        if w in _WH or w in _PREPOSITIONS or w in _COPULA or w in _DO:
            break
        types = noun_types(w)
        if types is None and found is not None:
            break  # the noun phrase ended ("which explorer accurately mapped …")
        found = types or found
    return found


def answer_types(question: str) -> list[tuple[str, ...]]:
    """Groups of wanted entity labels, one per thing asked, in question order (empty: untyped).

    The first interrogative wh-phrase is the question; a later one counts only when coordinated
    ("…, and when?", "…, and for how much?")."""
    words = _words(question)
    groups: list[tuple[str, ...]] = []
    asked = False
    for i, word in enumerate(words):
        if word not in _WH or not _interrogative(words, i):
            continue
        if asked and "and" not in words[max(0, i - 2):i]:
            continue
        asked = True
        types = _types_at(words, i)
        if types is not None and types not in groups:
            groups.append(types)
    return groups


_SUFFIXES = ("ing", "ed", "es", "s")


@lru_cache(maxsize=1 << 16)  # words recur in every sentence scored (issue 36: ~2,700 calls per Compare)
def stem(word: str) -> str:
    """A crude stem: an inflection suffix dropped, then the first five letters; enough to meet
    "appointed"/"appointment", "founded"/"founder", "join"/"joined"."""
    if len(word) >= 8:
        return word[:5]  # a suffix of at most three letters leaves the first five as they are
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:5]


_OBJECTS = frozenset("dobj oprd attr acomp xcomp dative".split())
_COPULA_ARGS = frozenset("attr nsubj acomp ccomp".split())  # ccomp: a passive the small model parses as a clause


def focus_terms(question: str) -> set[str]:
    """Stems of what the question asks about its answer, read from the question's parse (the one
    the keywords came from): the main verb and its objects ("Who *founded* …", "Which company
    *acquired* …", "… receive its *charter*?"), or with "to be" the nouns it links ("What is the
    *native language* of …", "Who was the *last resident keeper* of …"), with their modifiers.
    Nouns a wh-word determines ("which company"), nouns a clause describes ("the company founded
    by …", the bridge of a multi-hop question) and names are left out."""
    from core.extraction.query_terms import parse_question

    if not (question or "").strip():
        return set()
    doc = parse_question(question)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return set()
    picked = []
    copular = root.lemma_.lower() in ("be", "have", "do") or root.pos_ == "AUX"
    if not copular and root.pos_ in ("VERB", "ADJ"):
        picked.append(root)  # ("When did the Admiral Twin open …": the small model tags "open" ADJ)
    elif root.pos_ in ("NOUN", "PROPN"):  # a fragment parse: its verb ended up a modifier
        picked += [g for g in root.children if g.dep_ == "amod" and g.pos_ in ("VERB", "ADJ")]
    for child in root.children:
        if child.dep_ not in (_COPULA_ARGS if copular else _OBJECTS) or child.pos_ not in ("NOUN", "ADJ", "VERB"):
            continue
        if any((g.dep_ == "det" and g.lower_ in _WH) or g.dep_ in ("relcl", "acl") for g in child.children):
            continue  # "which company" is the answer; "the company founded by X" describes the bridge
        picked.append(child)
        picked += [g for g in child.children if g.dep_ in ("amod", "compound") and g.pos_ in ("NOUN", "ADJ", "VERB")]
    form = connection_words(question)
    return {key for t in picked for w in _words(t.text) if w not in STOP and w not in _WH
            and (key := stem(w)) not in form}


def is_multi_hop(question: str) -> bool:
    """Does the question describe its subject through another entity ("the company *founded by* X",
    "the island *whose* main town …")? Then the answer sentence rarely names the question's own
    entities. Read from the question's parse: a relative clause or a verb modifying a noun."""
    from core.extraction.query_terms import parse_question

    if not (question or "").strip():
        return False
    return any(t.dep_ in ("relcl", "acl") for t in parse_question(question))


_CLAUSE_DEPS = frozenset({"relcl", "acl"})


def last_hop(question: str) -> str:
    """The question's last hop: its outermost clause with every clause describing one of its nouns
    removed ("Who was the first keeper of the lighthouse on the island *whose main town is …*?" → "Who was
    the first keeper of the lighthouse on the island"), i.e. the relation asked about and the answer's type,
    without the chain that leads to its subject. "" when the question has no such clause (one hop, or
    hops the parse shows only as "of" phrases: the whole question is then the last hop)."""
    from core.extraction.query_terms import parse_question

    if not (question or "").strip():
        return ""
    doc = parse_question(question)
    dropped: set[int] = set()
    for token in doc:
        if token.dep_ in _CLAUSE_DEPS and token.i not in dropped:
            dropped.update(t.i for t in token.subtree)
    if not dropped:
        return ""
    kept = [t for t in doc if t.i not in dropped and not t.is_punct]
    while kept and (kept[-1].dep_ in ("prep", "agent", "cc", "det") or kept[-1].pos_ in ("ADP", "CCONJ", "DET")):
        kept.pop()  # a preposition left hanging by the clause it led ("… station in which …" → "… station")
    words = [t.text for t in kept]
    return " ".join(words) if sum(1 for t in kept if t.is_alpha) >= 3 else ""


# words that rank a role or a thing among others: the sentence must say the same rank of it ("the *first*
# keeper", not "the principal keeper" nor "the last keeper")
RANK_WORDS = frozenset(
    "first second third fourth fifth last final current founding former original earliest latest oldest "
    "youngest largest biggest smallest highest lowest longest shortest tallest deepest busiest".split())
RANK_REACH = 3  # a rank word modifies a noun at most this many words after it


def rank_pairs(text: str) -> frozenset[tuple[str, str]]:
    """(rank word, noun stem) of each rank word and the content words right after it ("the first principal
    keeper" → (first, princ), (first, keepe)); read from the last hop when the question has one."""
    words = _words(text)
    out = set()
    for i, word in enumerate(words):
        if word in RANK_WORDS:
            for w in words[i + 1:i + 1 + RANK_REACH]:
                if w in _WH or w in _PREPOSITIONS or w in _COPULA:
                    break
                if w not in STOP and w not in RANK_WORDS:
                    out.add((word, stem(w)))
    return frozenset(out)


def question_terms(question: str, idf: Optional[Callable[[str], float]] = None) -> dict[str, float]:
    """Content-word stems of the question with weights (1 + 0.5 if capitalised + 0.5 if long, times
    ``idf(stem)`` when given), the focus terms (``focus_terms``) weighing ``FOCUS`` times more."""
    focus = focus_terms(question)
    form = connection_words(question)
    terms: dict[str, float] = {}
    for raw in _WORD.findall(question or ""):
        word = raw.lower()
        if word in STOP or word in _WH or len(word) < 3 and not word.isdigit() or stem(word) in form:
            continue
        weight = 1.0 + (0.5 if raw[:1].isupper() else 0.0) + (0.5 if len(word) >= 8 else 0.0)
        key = stem(word)
        weight *= (FOCUS if key in focus else 1.0) * (idf(key) if idf is not None else 1.0)
        terms[key] = max(terms.get(key, 0.0), weight)
    return terms


def sentence_stems(text: str) -> frozenset[str]:
    """The stems of a sentence's words (same stemming as ``question_terms``)."""
    return frozenset(stem(w) for w in _words(text))


_IRREGULAR = dict(pair.split(":") for pair in (
    "ran:run went:go gone:go came:come gave:give given:give took:take taken:take made:make wrote:write "
    "written:write began:begin begun:begin became:become brought:bring bought:buy built:build caught:catch "
    "chose:choose chosen:choose drove:drive driven:drive fought:fight flew:fly grew:grow grown:grow held:hold "
    "kept:keep knew:know known:know led:lead lost:lose met:meet paid:pay rode:ride sang:sing sung:sing sat:sit "
    "seen:see sent:send sold:sell stood:stand taught:teach thought:think told:tell threw:throw thrown:throw "
    "won:win wore:wear worn:wear spent:spend sought:seek slid:slide hid:hide drew:draw drawn:draw ate:eat "
    "eaten:eat fled:flee felt:feel dealt:deal spoke:speak spoken:speak struck:strike swam:swim").split())


def said_stems(text: str, stems: frozenset[str]) -> frozenset[str]:
    """``stems`` (the sentence's) with what the crude stem misses of a verb it states: the base of an
    irregular past ("*ran* home" states "run"), and a stem without its final e ("slide" meets "sliding")."""
    bases = {stem(_IRREGULAR[w]) for w in _words(text) if w in _IRREGULAR}
    return stems | bases | {s[:-1] for s in stems if s.endswith("e") and len(s) >= 4}


@dataclass
class QuestionFrame:
    """Everything the answer builders need to know about the question."""

    text: str
    groups: list[tuple[str, ...]] = field(default_factory=list)  # wanted types per asked item
    terms: dict[str, float] = field(default_factory=dict)
    focus: frozenset[str] = frozenset()  # stems of the focus terms
    name_stems: frozenset[str] = frozenset()  # stems of the words of the names in the question
    multi_hop: bool = False  # the question reaches its answer through another entity (``is_multi_hop``)
    entity_keys: frozenset[str] = frozenset()  # question entities (knowledge-graph keys)
    plain: str = ""  # the question lower-cased with single spaces, to skip answers it already names
    connection: bool = False  # "How is A connected to B?": the answer is what links its entities
    hop: str = ""  # the last hop's clause (``last_hop``; "" for a question that is its own last hop)
    ranks: frozenset[tuple[str, str]] = frozenset()  # the last hop's (rank word, noun) pairs (``rank_pairs``)
    own_words: frozenset[str] = frozenset()  # stems of the question's terms and names (a mention made only of them restates it)

    @property
    def wanted(self) -> frozenset[str]:
        return frozenset(label for group in self.groups for label in group)

    def names_in_question(self, surface: str) -> bool:
        """Is this surface form already said in the question (then it is not the answer)?"""
        text = " ".join(surface.lower().split())
        return bool(text) and f" {text} " in f" {self.plain} "


def make_frame(question: str, entity_keys: Iterable[str] = (), idf: Optional[Callable[[str], float]] = None
               ) -> QuestionFrame:
    """The frame of a question (answer types, terms weighted by ``idf``) with its linked entity keys."""
    from core.extraction.query_terms import name_spans

    plain = " ".join(_words(question))
    names = frozenset(stem(w) for name in name_spans(question) for w in _words(name))
    hop = last_hop(question)
    terms = question_terms(question, idf)
    return QuestionFrame(question, answer_types(question), terms, frozenset(focus_terms(question)),
                         names, is_multi_hop(question), frozenset(entity_keys), plain, bool(connection_words(question)),
                         hop, rank_pairs(hop or question), frozenset(terms) | names)


SETTING_MARKS = frozenset("when whenever while after before because since until once".split())  # scene-setting clauses


def setting_words(doc: Any, clauses: bool = True) -> set[int]:
    """Token positions of the words that only set the scene of the asked relation: the measure word of a
    "how" phrase ("how *long*", "how *old*"), which asks the answer's kind, not its relation, and (with
    ``clauses``) an adverbial clause opened by a time or reason word ("How long had Marley been dead
    *when the gentlemen came collecting for the poor*?", "… *because he had a cold*"). The answering
    sentence rarely repeats them."""
    out: set[int] = set()
    for t in doc:
        if clauses and t.dep_ == "advcl" and any(c.dep_ in ("mark", "advmod") and c.lower_ in SETTING_MARKS
                                                 and c.i < t.i for c in t.children):
            out |= {w.i for w in t.subtree}
        if t.lower_ == "how" and t.dep_ == "advmod" and t.head.pos_ in ("ADJ", "ADV"):
            out.add(t.head.i)
    return out

