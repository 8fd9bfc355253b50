"""Does a question ask a single relation of a name, with no hop to a bridge entity?

"Where is the *terminus* of the Velmora Coastal Railway?" and "Who *directed* Jump for Glory?" ask one relation
of the entity they name: the answer's sentence names that entity, and there is no bridge to follow. "Who is the
spouse of the *director* of Jump for Glory?" asks a relation ("spouse") of an entity reached through another
("director of"). ``single_relation`` reads this from the question's cached parse (``core.extraction.query_terms``):
for each proper name, the word tying it to the rest of the question — the noun that owns it ("the *terminus* of
X", "X's *wife*") or the verb it is an argument of ("who *directed* X", "where X *died*") — must be the main verb,
or with "to be" the noun it links to the wh-phrase; the main verb must have no other noun argument, and no
preposition may be left stranded ("Which state is the birthplace of X *in*?").
``chain`` adds no next-hop evidence line for such a question.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

_NAME_PARTS = frozenset({"compound", "flat", "nmod", "amod", "appos", "nummod"})
_ARGUMENTS = frozenset({"nsubj", "nsubjpass", "dobj", "attr", "oprd"})
_VERB_CHAINS = frozenset({"xcomp", "advcl", "conj"})
_ROOT_ARGUMENTS = frozenset({"nsubj", "nsubjpass", "attr", "dobj"})
_WH = frozenset({"who", "whom", "what", "which", "where", "when", "whose"})


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
            return _verb_words(owner)  # "died *in* X", "directed *by* X"
        return set()
    if name.dep_ in _ARGUMENTS and name.head.pos_ in ("VERB", "AUX"):
        return _verb_words(name.head)
    return set()


def name_heads(doc: Any) -> list[Any]:
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


def _asked_directly(word: Any, root: Any, copular: bool) -> bool:
    """Is a name's relation word the question's own relation: the main verb ("Who *directed* X?"), or with "to
    be" the noun it links to the wh-phrase ("Who is the *wife* of X?")? A noun that is the object of another
    verb ("Who married the *director* of X?") or has a second relation in apposition ("the *author* of X a
    citizen of") names a bridge."""
    if word.i == root.i:
        return word.pos_ == "VERB"
    return copular and word.head.i == root.i and word.dep_ in ("nsubj", "attr") \
        and not any(c.dep_ == "appos" for c in word.children)


@lru_cache(maxsize=256)
def single_relation(question: str) -> bool:
    """Does the question ask one relation of a name ("Where is the *terminus* of the Velmora Coastal Railway?",
    "Who *founded* X?"): every name's relation word is asked directly (``_asked_directly``), the main verb has
    no other noun argument than those words, the names and the wh-phrase, and no stranded preposition?"""
    if not (question or "").strip():
        return False
    from core.extraction.query_terms import parse_question

    doc = parse_question(question)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    heads = name_heads(doc)
    if root is None or not heads:
        return False
    if any(c.dep_ == "prep" and not list(c.children) for c in root.children):
        return False  # "Which state is the birthplace of X *in*?": the answer is reached from the birthplace
    copular = root.lemma_.lower() == "be"
    owners: set[int] = {head.i for head in heads}  # the names and their relation words
    for head in heads:
        main = [t for t in _relation_of(head) if _asked_directly(t, root, copular)]
        if not main:
            return False
        owners |= {t.i for t in main}
    others = [c for c in root.children if c.dep_ in _ROOT_ARGUMENTS and c.i not in owners and c.lower_ not in _WH
              and not any(d.lower_ in _WH for d in c.children)]
    return not others
