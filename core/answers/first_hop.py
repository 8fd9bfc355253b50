"""The question's first relation: the words that tie a name the question gives to the entity it leads to.

A multi-hop question composes relations around one named entity: "Who is the spouse of the *director of*
Jump for Glory?", "the state where Henry Worrall *died*", "the country that *released* Han Vodka", "Gisvi's
*city of birth*". The first hop's sentence is the one that states that relation about the name ("Jump for
Glory is a 1937 film *directed* by Raoul Walsh"); its other entities are the bridges the next hop follows
(``chain``). ``first_relation`` reads those words from the question's cached parse
(``core.extraction.query_terms``): for each proper name, the noun that owns it ("the *director* of X",
"X's *city* of *birth*") or the verb it is an argument of ("where X *died*", "that *released* X", "where X
is *licensed* to *broadcast*"), as stems (``question.stem``, the stems sentences are stored with). Light
verbs ("be", "have", "do") and stop words are left out; a name with no such word adds nothing.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from core.answers.question import STOP, stem

_LIGHT = frozenset({"be", "have", "do", "get", "make", "take", "become"})
_NAME_PARTS = frozenset({"compound", "flat", "nmod", "amod", "appos", "nummod"})
_ARGUMENTS = frozenset({"nsubj", "nsubjpass", "dobj", "attr", "oprd"})
_VERB_CHAINS = frozenset({"xcomp", "advcl", "conj"})


def _content(token: Any) -> bool:
    word = token.lower_
    return token.is_alpha and len(word) > 2 and word not in STOP and token.pos_ != "PROPN" \
        and not (token.pos_ in ("VERB", "AUX") and token.lemma_.lower() in _LIGHT)


def _noun_words(noun: Any) -> set[Any]:
    """A relation noun, its compound/adjective modifiers and the nouns of its "of" phrases that are not names
    ("*city* of *birth*", "*founding director*")."""
    out = {noun} | {c for c in noun.children if c.dep_ in ("compound", "amod")}
    out |= {o for p in noun.children if p.dep_ == "prep" and p.lower_ == "of"
            for o in p.children if o.dep_ == "pobj" and o.pos_ == "NOUN"}
    return out


def _verb_words(verb: Any) -> set[Any]:
    """A verb and the verbs it chains to ("*licensed* to *broadcast*")."""
    return {verb} | {c for c in verb.children if c.dep_ in _VERB_CHAINS and c.pos_ == "VERB"}


def _relation_of(name: Any) -> set[Any]:
    """The tokens that state the relation a name's head token takes part in (empty: none found)."""
    if name.dep_ == "poss" and name.head.pos_ == "NOUN":
        return _noun_words(name.head)
    if name.dep_ == "pobj":
        prep, owner = name.head, name.head.head
        if prep.lower_ == "of" and owner.pos_ == "NOUN":
            return _noun_words(owner)
        if owner.pos_ == "VERB":
            return _verb_words(owner)  # "was born *in* X", "died *in* X"
        return set()
    if name.dep_ in _ARGUMENTS and name.head.pos_ in ("VERB", "AUX"):
        return _verb_words(name.head)
    if name.dep_ == "agent" or (name.dep_ == "pobj" and name.head.dep_ == "agent"):
        return _verb_words(name.head.head)
    return set()


def _name_heads(doc: Any) -> list[Any]:
    """The head token of every proper-name phrase ("Jump for Glory" → its head within the phrase)."""
    heads: dict[int, Any] = {}
    for token in doc:
        if token.pos_ != "PROPN":
            continue
        head = token
        while head.dep_ in _NAME_PARTS and head.head.pos_ == "PROPN" and head.head.i != head.i:
            head = head.head
        heads[head.i] = head
    return list(heads.values())


@lru_cache(maxsize=256)
def first_relation(question: str) -> frozenset[str]:
    """Stems of the words tying the question's proper names to what they lead to (see the module docstring)."""
    if not (question or "").strip():
        return frozenset()
    from core.extraction.query_terms import parse_question

    doc = parse_question(question)
    words: set[str] = set()
    for head in _name_heads(doc):
        words |= {stem(t.lower_) for t in _relation_of(head) if _content(t)}
    return frozenset(words)

