"""Does a sentence state a "Who/What was the <role> of <subject>?" answer outright?

Most questions of the dev sets have no verb to check ("Who was the first keeper of Kestrel Point
Lighthouse?", "What is the capital of …"): they ask for whoever fills a role noun. A sentence states
that answer when it says the role with a copula or an apposition and the other side holds a mention
of the asked-for type:

* "The first principal keeper **was** Josiah Harland" — the role noun ("keeper") with at least the
  question's rank modifiers ("first", "last", "current", …; more, "principal", may be added), as the
  subject or the complement of *be*; the answer is the other side;
* "Josiah Harland, the first keeper of …" — the role noun in apposition to the answer.

The subject of the role must be the question's: a name of the role's "of" phrase in the sentence must
be the question's (else it is another entity's keeper), and when the sentence names none, the
question's subject must be named by the sentence or by its document's title ("the title names the
passage's subject"). A question whose subject is only described ("the lighthouse where …") has no
name to check, and nothing is stated beyond doubt.

A "what/which <kind>" question ("Of what *church* is the Diocese …", "What is the name of the *airport* …",
"What *body of water* is near …") is answered outright by a sentence that names exactly one entity whose
own name carries that kind ("the **Anglican Church of Canada**", "**Wilmington International Airport**",
"on the **Fulda River**"): the name says what it is (``kind_verified``). A kind of person ("which
explorer") or of a number or date is never in a name; a plural ("Hilton *Hotels*") names a chain, not one.

A question's verb may be stated by its noun: "When did … *invade* Manchuria?" by "the Soviet *invasion of
Manchuria* on **8 August 1945**" (``nominal_verified``): the noun of the verb (``grounding.verb_nouns``)
with the question's named object in its "of" phrase and the span of the asked-for type hanging on the noun.

``copular_verified``, ``kind_verified`` and ``nominal_verified`` only ever find a bold; ``claim.claimed``
decides whether to show it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from core.answers.cache import parsed_once
from core.answers.question import QuestionFrame, noun_types, sentence_stems, stem
from core.answers.scoring import Pick

_WH = frozenset("who whom what which".split())
_MODIFIERS = frozenset({"amod", "compound", "nummod", "npadvmod"})
# modifiers that pick one holder of a role among several ("the *first* keeper", "the *current* leader"):
# the sentence's role noun must carry them; others ("the *usual average* snowfall") may be worded otherwise
_RANK = frozenset(stem(w) for w in (
    "first second third fourth fifth last final founding original inaugural current former previous "
    "next latest earliest present incumbent interim acting deputy vice assistant chief principal head").split())


@dataclass(frozen=True)
class RoleQuestion:
    """The role the question asks about: its noun (stem), the noun's rank modifiers (stems: first,
    last, current, …) and the stems of the subject's name (its "of" phrase)."""

    noun: str
    modifiers: frozenset[str]
    subject: frozenset[str]


_WATER = frozenset("river lake sea ocean bay gulf strait canal creek sound lagoon reservoir".split())
_LIGHT = frozenset({"name", "kind", "type", "sort"})  # "the *name* of the airport": the kind is the airport
_NOT_IN_NAMES = frozenset({"PERSON", "DATE", "CARDINAL", "QUANTITY", "MONEY", "PERCENT", "LANGUAGE", "NORP"})
_NEXT_TO = re.compile(r"\s+(?:on|in|at|during|from)\s+", re.IGNORECASE)
_NAME_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def _parse(text: str) -> Any:
    from core.answers.support import _parse as parse

    return parse(text)


def _of_names(token: Any, named_only: bool = False) -> frozenset[str]:
    """Name stems of whose role ``token`` is: its "of" phrase or its possessor ("Kim Il-sung's first
    wife"). ``named_only``: only a phrase that is itself a name ("the director of Jump for Glory" is
    described, not named: empty)."""
    from core.answers.support import _core_names

    owners = [c for c in token.children if c.dep_ == "poss"]
    owners += [obj for prep in token.children if prep.dep_ == "prep" and prep.lower_ == "of"
               for obj in prep.children if obj.dep_ == "pobj"]
    out: set[str] = set()
    for owner in owners:
        if named_only and owner.pos_ != "PROPN":
            continue
        out |= _core_names(list(owner.subtree))
    return frozenset(out)


def _modifiers(token: Any) -> frozenset[str]:
    return frozenset(stem(c.lower_) for c in token.children if c.dep_ in _MODIFIERS and c.is_alpha)


def role_question(question: str) -> Optional[RoleQuestion]:
    """The role a "Who/What was the <role> of <name>?" question asks about (None: another form)."""
    if not (question or "").strip():
        return None
    doc = _parse(question)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.lemma_.lower() != "be":
        return None
    sides = [c for c in root.children if c.dep_ in ("nsubj", "attr")]
    if len(sides) != 2 or not any(s.lower_ in _WH for s in sides):
        return None
    role = next(s for s in sides if s.lower_ not in _WH)
    if role.pos_ not in ("NOUN",):
        return None
    return RoleQuestion(stem(role.lower_), _modifiers(role) & _RANK, _of_names(role, named_only=True))


def _np_spans(token: Any) -> list[tuple[int, int]]:
    skipped = {t.i for c in token.children if c.dep_ in ("relcl", "acl", "appos") for t in c.subtree}
    return [(t.idx, t.idx + len(t.text)) for t in token.subtree if t.i not in skipped]


def _answer_side(noun: Any) -> Optional[Any]:
    """The token naming whoever fills the role ``noun`` in its sentence (None: not stated outright)."""
    head = noun.head
    if noun.dep_ == "appos":
        return head
    if head.lemma_.lower() == "be" and noun.dep_ in ("nsubj", "attr"):
        other = [c for c in head.children if c.dep_ in ("nsubj", "attr") and c.i != noun.i]
        return other[0] if len(other) == 1 else None
    appos = [c for c in noun.children if c.dep_ == "appos"]
    return appos[0] if len(appos) == 1 else None


def copular_verified(pick: Pick, frame: QuestionFrame, graph: Any, cache: Any = None) -> list[str]:
    """The wanted-type mention the sentence states as the filler of the question's role about the
    question's named subject (``[]`` when it does not; see the module docstring)."""
    from core.answers.support import _inside, _replacements

    role: Optional[RoleQuestion] = parsed_once(cache, "role_question", frame.text, role_question)
    if role is None or not role.subject:
        return []
    text = pick.sentence.text
    if role.noun not in pick.sentence.stems:
        return []
    wanted = list(dict.fromkeys(list(pick.typed) + _replacements(pick, frame, graph)))
    if not wanted:
        return []
    title = sentence_stems((pick.sentence.doc or pick.sentence.cite.rsplit(", ", 1)[0]))
    for noun in _parse(text):
        if noun.pos_ not in ("NOUN", "PROPN") or stem(noun.lower_) != role.noun:
            continue
        if not role.modifiers <= _modifiers(noun):
            continue
        named = _of_names(noun)
        if named and not role.subject <= named:
            continue  # the role of another entity
        if not named and not role.subject <= (pick.sentence.stems | title):
            continue  # the subject is neither named here nor the document's title
        side = _answer_side(noun)
        if side is None:
            continue
        spans = _np_spans(side)
        inside = [s for s in wanted if _inside(text, s, spans)]
        if inside:
            return inside[:1]
    return []


def states_another_role(pick: Pick, frame: QuestionFrame, cache: Any = None) -> bool:
    """Does the sentence speak of the question's role noun only with other modifiers ("Ruth Harland,
    the *principal* keeper …", "succeeded his father as principal keeper" for "Who was the *first*
    keeper …?")? Then whom it names holds another role, and nothing in it is bolded."""
    role: Optional[RoleQuestion] = parsed_once(cache, "role_question", frame.text, role_question)
    if role is None or not role.modifiers or role.noun not in pick.sentence.stems:
        return False
    nouns = [t for t in _parse(pick.sentence.text) if t.pos_ in ("NOUN", "PROPN") and stem(t.lower_) == role.noun]
    return bool(nouns) and not any(role.modifiers <= _modifiers(t) for t in nouns)


def _wh_noun(doc: Any) -> Optional[Any]:
    """The noun a "what/which" determines ("what *church*"), or the other side of "What is the <noun> …"."""
    for token in doc:
        if token.pos_ == "NOUN" and any(c.dep_ == "det" and c.lower_ in ("what", "which") for c in token.children):
            return token
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.lemma_.lower() != "be":
        return None
    sides = [c for c in root.children if c.dep_ in ("nsubj", "attr")]
    if len(sides) != 2 or not any(s.lower_ in ("what", "which") for s in sides):
        return None
    other = next(s for s in sides if s.lower_ not in ("what", "which"))
    return other if other.pos_ == "NOUN" else None


def asked_kind(question: str) -> frozenset[str]:
    """The words (lower case, singular) a name of the asked-for kind carries: {"church"} for "Of what church
    …", {"airport"} for "What is the name of the airport …", the water words for "body of water"; empty
    when the question asks for no such kind (a person, a number, a date, or no "what/which <noun>")."""
    if not (question or "").strip():
        return frozenset()
    noun = _wh_noun(_parse(question))
    while noun is not None and noun.lower_ in _LIGHT | {"body"}:
        inner = [o for p in noun.children if p.dep_ == "prep" and p.lower_ == "of" for o in p.children
                 if o.dep_ == "pobj"]
        if noun.lower_ == "body" and inner and inner[0].lower_ == "water":
            return _WATER
        noun = inner[0] if inner else None
    if noun is None or noun.lemma_.lower() != noun.lower_:
        return frozenset()  # no noun, or a plural ("which rivers"): one name does not answer it
    kinds = noun_types(noun.lower_)
    if not kinds or set(kinds) & _NOT_IN_NAMES:
        return frozenset()
    return frozenset({noun.lower_})


def kind_verified(pick: Pick, frame: QuestionFrame, cache: Any = None) -> list[str]:
    """The one mention of the sentence whose own name carries the asked-for kind (``asked_kind``), not
    named by the question (``[]`` when there is none or more than one)."""
    kinds: frozenset[str] = parsed_once(cache, "asked_kind", frame.text, asked_kind)
    if not kinds:
        return []
    found: dict[str, None] = {}
    for label, surface, key in pick.sentence.mentions:
        if label in _NOT_IN_NAMES or (key and key in frame.entity_keys) or frame.names_in_question(surface):
            continue
        if any(w[:1].isupper() and w.lower() in kinds for w in _NAME_WORD.findall(surface)):
            found[surface] = None
    return list(found) if len(found) == 1 else []


def _verb_object(question: str) -> tuple[str, frozenset[str]]:
    """(lemma of the question's main verb, name stems of its object): ("invade", {manchuria}) for "When did
    the country of Izgoy's performer invade Manchuria?"; ("", ∅) without a verb and a named object."""
    from core.answers.support import _np

    doc = _parse(question) if (question or "").strip() else []
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ != "VERB":
        return "", frozenset()
    objects = [c for c in root.children if c.dep_ == "dobj"]
    names = frozenset(stem(t.lower_) for o in objects for t in _np(o) if t.pos_ == "PROPN")
    return (root.lemma_.lower(), names) if names else ("", frozenset())


def nominal_verified(pick: Pick, frame: QuestionFrame, graph: Any, cache: Any = None) -> list[str]:
    """The wanted-type mention hanging on the noun of the question's verb whose "of" phrase names the
    question's object ("the Soviet *invasion of Manchuria* on **8 August 1945**"); ``[]`` otherwise."""
    from core.answers.grounding import verb_nouns
    from core.answers.support import _inside, _replacements

    lemma, names = parsed_once(cache, "verb_object", frame.text, _verb_object)
    nouns = verb_nouns(lemma)
    if not nouns or not any(n in pick.sentence.text.lower() for n in nouns):
        return []
    wanted = list(dict.fromkeys(list(pick.typed) + _replacements(pick, frame, graph)))
    text = pick.sentence.text
    for noun in _parse(text):
        word = noun.lower_
        if noun.pos_ != "NOUN" or not (word in nouns or (word.endswith("s") and word[:-1] in nouns)):
            continue
        of = [o for p in noun.children if p.dep_ == "prep" and p.lower_ == "of" for o in p.children if o.dep_ == "pobj"]
        if not of or not names <= frozenset(stem(t.lower_) for o in of for t in o.subtree if t.pos_ == "PROPN"):
            continue
        named = {t.i for o in of for t in o.subtree if t.pos_ == "PROPN"}  # the object's name is not the answer
        spans = [(t.idx, t.idx + len(t.text)) for t in noun.subtree if t.i not in named and t.i != noun.i]
        inside = [s for s in wanted if _inside(text, s, spans)]
        if inside:
            return inside[:1]
        right = noun.right_edge.idx + len(noun.right_edge.text)  # "… of Manchuria *on* 8 August 1945": the parse
        after = _NEXT_TO.match(text, right)                      # may hang the date on the clause's verb
        if after and any(text.startswith(s, after.end()) for s in wanted):
            return [next(s for s in wanted if text.startswith(s, after.end()))]
    return []
