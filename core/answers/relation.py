"""The relation a question asks about: its main verb, the side of it the wh-phrase asks for, and the other side.

Read once per question from its spaCy parse (``core.extraction.query_terms``: the same cached parse the keywords
come from). ``question_relation`` covers "Who *founded* X", "Which company *operates* …", "Whom did X *succeed*",
and the do-support questions the small parser hangs around "did" ("Which company did the founding director of
X *co-found*?", "Which cooperative did the daughter of X *found*?"): the verb after "did" (``main_verb``), the
wh-phrase its undergoer. The other side's proper names are the question's subject; a person's role noun owned
by a name ("the founding *director* of X", "X's *wife*") describes a person the names only lead to, so that side
has no names of its own and keeps the role and the owner (``Relation.described_by``, read by ``role_bridge``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from core.answers.question import noun_types, stem

_WH = frozenset("who whom whose what which".split())
_SUBJECTS = frozenset({"nsubj"})
_CLAUSES = frozenset({"relcl", "acl", "advcl", "ccomp"})
_LIGHT = frozenset({"be", "have", "do", "become", "get", "make", "take"})


@dataclass(frozen=True)
class Relation:
    """What the question asks about its answer: the verb (stem), the answer's side of it, and the
    name stems of the other side (empty: the other side is described, not named)."""

    verb: str
    role: str  # "doer" | "undergoer"
    other_names: frozenset[str] = frozenset()
    described_by: tuple[str, frozenset[str]] = ("", frozenset())  # the other side's role noun and its owner's names


def _parse(text: str) -> Any:
    from core.extraction.query_terms import parse_question

    return parse_question(text)


def _names(tokens: Any) -> frozenset[str]:
    return frozenset(stem(t.lower_) for t in tokens if t.pos_ == "PROPN")


def _np(token: Any) -> list[Any]:
    """A noun phrase's tokens without the clauses hanging on it (relative clauses, participles)."""
    skipped: set[int] = set()
    for child in token.children:
        if child.dep_ in _CLAUSES:
            skipped |= {t.i for t in child.subtree}
    return [t for t in token.subtree if t.i not in skipped]


def _is_wh(token: Any) -> bool:
    return token.lower_ in _WH or any(c.dep_ == "det" and c.lower_ in _WH for c in token.children)


def question_relation(question: str) -> Optional[Relation]:
    """The relation a "who/which … <verb> …" question asks about (None: copular or no verb found)."""
    if not (question or "").strip():
        return None
    doc = _parse(question)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ != "VERB":
        return None
    relation = _do_support_relation(doc, root) if root.lemma_.lower() == "do" else _fronted_object(doc, root)
    if relation is not None:
        return relation
    passive = any(c.dep_ in ("nsubjpass", "auxpass") for c in root.children)
    doer = [c for c in root.children if c.dep_ in _SUBJECTS]
    undergoer = [c for c in root.children if c.dep_ in ("dobj", "nsubjpass")]
    agent = [g for c in root.children if c.dep_ == "agent" for g in c.children if g.dep_ == "pobj"]
    if passive:
        doer, undergoer = agent, [c for c in root.children if c.dep_ == "nsubjpass"]
    verb = stem(root.lower_)
    if doer and _is_wh(doer[0]):
        return Relation(verb, "doer", *_other_side(undergoer[0] if undergoer else None))
    if undergoer and _is_wh(undergoer[0]):
        return Relation(verb, "undergoer", *_other_side(doer[0] if doer else None))
    return None


def _other_side(head: Any) -> tuple[frozenset[str], tuple[str, frozenset[str]]]:
    """(name stems, (role noun stem, owner's name stems)) of the side of the question's verb headed by ``head``.
    A person's role noun owned by a name ("the founding *director* of the Centre …", "X's *wife*") describes
    a person the names only lead to (the bridge): no names of its own, and the role and owner for
    ``role_bridge`` to find whom the evidence says holds that role."""
    if head is None:
        return frozenset(), ("", frozenset())
    if head.pos_ == "NOUN" and noun_types(head.lower_) == ("PERSON",):
        owners = [c for c in head.children if c.dep_ == "poss"] + [
            o for p in head.children if p.dep_ == "prep" and p.lower_ == "of" for o in p.children if o.dep_ == "pobj"]
        names = frozenset().union(*(_names(_np(o)) for o in owners))
        if names:
            return frozenset(), (stem(head.lower_), names)
    return _names(_np(head)), ("", frozenset())


def _do_support_relation(doc: Any, root: Any) -> Optional[Relation]:
    """"Which company did the founding director of X co-found?": the small parser hangs the question around
    "did" (the wh-phrase its subject, the real subject its object, "found" a clause); the relation is the
    verb after "did" (``main_verb``), its undergoer asked for, its doer the other noun phrase. None when
    no verb follows "did" in the parse (the relation stays "did": no sentence states it, nothing is bolded on it)."""
    verb, fronted = main_verb(doc)
    if verb is None or not fronted:
        return None
    nominals = [c for c in list(root.children) + list(verb.children) if c.dep_ in ("nsubj", "dobj")]
    if not any(_is_wh(n) for n in nominals):
        return None  # "When did X found Y?": a circumstance, not a side
    others = [n for n in nominals if not _is_wh(n)]
    return Relation(stem(verb.lower_), "undergoer", *_other_side(others[0] if others else None))


def _fronted_object(doc: Any, root: Any) -> Optional[Relation]:
    """"Which cooperative did the daughter of X found?" parsed with the real verb as the root and the wh-phrase
    hung on "did" (its auxiliary or clause): the wh-phrase is the verb's undergoer, the other noun phrase under
    "did" or the verb its doer."""
    if root.lemma_.lower() in ("be", "have", "do") or any(c.dep_ in ("dobj", "nsubjpass") for c in root.children):
        return None
    for do in (t for t in doc if t.lemma_.lower() == "do" and t.i < root.i and t.head.i == root.i):
        nominals = [c for c in list(do.children) + list(root.children) if c.dep_ in ("nsubj", "dobj")]
        if any(_is_wh(n) for n in nominals if n.head.i == do.i):
            others = [n for n in nominals if not _is_wh(n)]
            return Relation(stem(root.lower_), "undergoer", *_other_side(others[0] if others else None))
    return None


def main_verb(doc: Any) -> tuple[Any, bool]:
    """(the question's main verb or None, whether a do-support question puts its wh-phrase before "did")."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return None, False
    if root.pos_ == "VERB" and root.lemma_.lower() not in _LIGHT:
        return root, False
    if root.lemma_.lower() == "do":  # "Which company did X co-found?" parsed around "did"
        verbs = [t for t in root.children if t.pos_ == "VERB" and t.i > root.i and t.is_alpha and len(t) > 2
                 and t.lemma_.lower() not in _LIGHT and t.dep_ in ("advcl", "xcomp", "ccomp", "conj", "dep")]
        return (verbs[-1], True) if verbs else (None, False)  # the last: "co-found" is parsed "co", "-", "found"
    if root.lemma_.lower() == "be":  # "In what year was the cooperative founded whose …?"
        for subject in (c for c in root.children if c.dep_ in ("nsubj", "nsubjpass", "attr")):
            verb = next((c for c in subject.children if c.dep_ == "acl" and c.tag_ in ("VBN", "VBD")), None)
            if verb is not None:
                return verb, False
    return None, False
