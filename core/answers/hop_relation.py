"""The relation a multi-hop question's last hop asks, and the people its first hop's role leads to.

A MuSiQue-style question composes hops: "Who is the *spouse* of the director of Jump for Glory?", "What
*currency* predated the Euro in the country Signmark is from?", "When did the country of Izgoy's performer
*invade* Manchuria?". The last hop asks a relation of the bridge (the entity the earlier hops lead to), and
the sentence that answers it states that relation about the bridge, often in other words ("Walsh *married*
…", "the *currency* of Finland", "the Soviet *invasion* of Manchuria").

``last_relation`` reads the last hop's relation words from the question's cached parse
(``core.extraction.query_terms``): the content words of the question's outermost clause (the clauses that
describe a noun, ``relcl``/``acl``, are the earlier hops), without the names, the wh-phrase's type noun
("which *company*"), the noun a describing clause hangs on (the bridge: "the *country* where …"), the
"name of"/"part of" nouns (``question.OF_NOUNS``), and the first hop's own words (the noun owning a name,
"the *director* of Jump for Glory", or the verb a name is an argument of: ``one_hop``). Each word brings
its family (``FAMILIES``): a small closed table of general relations — kinship, office, location, creation,
ownership, birth and death, citizenship, membership — written from what the relations are, not read off
any question set; and a verb and its noun meet on their first four letters ("invade"/"invasion").
``says_relation`` checks a sentence's stems against them.

``first_role`` reads the first hop when a person's role noun owns a name ("the founding *director* of the
Centre for Coastal Oceanography", "Izgoy's *performer*"): the role's stem and the owner's name stems, so
that ``role_bridge.holders`` finds who the evidence says holds it ("Its founding director is Peter Okafor").
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Optional

from core.answers.one_hop import name_heads
from core.answers.question import OF_NOUNS, RANK_WORDS, STOP, WHERE, noun_types, said_stems, stem

# general relations, each a family of words that state it (verb, noun, role); a question word in a family
# is met by any word of that family in a sentence
FAMILIES: tuple[frozenset[str], ...] = tuple(frozenset(stem(w) for w in words.split()) for words in (
    # kinship
    "spouse wife husband married marry marriage wed wedded widow widower",
    "child children son sons daughter daughters offspring",
    "parent parents father mother",
    "sibling siblings brother brothers sister sisters",
    # office
    "leader leaders lead led head ruler ruled rule reign reigned president premier chancellor monarch king queen "
    "governor mayor chairman charge",
    "capital seat",
    # location
    "located location situated lies based headquartered headquarters",
    # creation
    "founder founders founded found establish established co-founded co-founder",
    "author wrote written write writer",
    "composer composed compose",
    "director directed direct",
    "producer produced produce",
    "performer performed perform sang singer band",
    "creator created create",
    # ownership
    "owner owned owns own acquired acquire bought purchased",
    # birth, death, citizenship, membership
    "born birth birthplace native",
    "died death",
    "citizen citizens citizenship nationality national",
    "member members membership joined join",
))
PLACE_RELATIONS = frozenset({"capital"})  # place nouns that name a relation ("the *capital* of X"), not a kind
LOCATION = frozenset(stem(w) for w in "located location situated lies based".split())  # what "where is X?" asks
DERIVATION = 4  # a relation word and a sentence word meet on this many first letters ("invad"/"invas")

_CLAUSES = frozenset({"relcl", "acl"})
_WH = frozenset("who whom whose what which when where how why".split())


def _parse(question: str) -> Any:
    from core.extraction.query_terms import parse_question

    return parse_question(question)


def _first_hop_words(doc: Any) -> set[int]:
    """Positions of the nouns tying a name to the question ("the *director* of X", "X's *performer*": the
    first hop, ``one_hop._relation_of``); a verb a name is an argument of may be the last hop's own ("when
    did … *invade* Manchuria")."""
    from core.answers.one_hop import _relation_of

    return {t.i for head in name_heads(doc) for t in _relation_of(head) if t.pos_ != "VERB"}


_ARGUMENTS = frozenset({"nsubj", "nsubjpass", "attr", "dobj", "acomp", "oprd"})
_LIGHT = frozenset({"be", "have", "do", "get", "make", "take", "become"})


def _relation_tokens(doc: Any) -> list[Any]:
    """The last hop's relation: the main verb (not "be"/"have"/…), the nouns it links or takes as its
    arguments, with their modifiers and the nouns of their "of" phrases ("the *name* of the southern *tip*"),
    and the noun a wh-word determines ("what *currency*")."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return []
    out = []
    if root.pos_ == "VERB" and root.lemma_.lower() not in _LIGHT:
        out.append(root)
    heads = [c for c in root.children if c.dep_ in _ARGUMENTS and c.pos_ in ("NOUN", "ADJ")]
    heads += [t for t in doc if t.pos_ == "NOUN" and any(c.dep_ == "det" and c.lower_ in _WH for c in t.children)]
    for head in heads:
        out.append(head)
        out += [c for c in head.children if c.dep_ in ("amod", "compound") and c.pos_ in ("NOUN", "ADJ")]
        if head.lower_ in OF_NOUNS:  # "the name of the southern tip": the tip is the relation
            for of in (c for c in head.children if c.dep_ == "prep" and c.lower_ == "of"):
                for noun in (o for o in of.children if o.dep_ == "pobj" and o.pos_ == "NOUN"):
                    out += [noun] + [c for c in noun.children if c.dep_ in ("amod", "compound")]
    return out


def _asks_where(doc: Any) -> bool:
    """Does the main clause ask "where" ("*Where* is the district … located?"): the location relation?"""
    return any(t.lower_ == "where" and t.i not in {d.i for c in doc if c.dep_ in _CLAUSES for d in c.subtree}
               for t in doc)


@lru_cache(maxsize=256)
def last_relation(question: str) -> frozenset[str]:
    """Stems of the words stating the relation the question's last hop asks (see the module docstring),
    each with its family; empty when the question has none (a one-word "what is X" question)."""
    if not (question or "").strip():
        return frozenset()
    doc = _parse(question)
    dropped: set[int] = set()
    bridge_nouns: set[int] = set()
    for token in doc:
        if token.dep_ in _CLAUSES and token.i not in dropped:
            dropped.update(t.i for t in token.subtree)
            bridge_nouns.add(token.head.i)
    dropped |= _first_hop_words(doc)
    words: set[str] = set()
    for token in _relation_tokens(doc):
        if token.i in dropped or token.i in bridge_nouns:
            continue
        word = token.lower_
        if word in STOP or word in _WH or word in OF_NOUNS or word in RANK_WORDS or len(word) < 3 \
                or not token.is_alpha:
            continue  # a rank ("the *first* president") says which holder, not which relation
        kind = noun_types(word) if token.pos_ == "NOUN" else None
        if kind is not None and kind != ("PERSON",) and word not in PLACE_RELATIONS:
            continue  # "which *company*", "the *country*": the answer's or the bridge's kind, not a relation
        words.add(stem(word))
    if _asks_where(doc):
        words |= LOCATION
    out = set(words)
    for family in FAMILIES:
        if family & words:
            out |= family
    return frozenset(out)


@lru_cache(maxsize=1 << 14)  # the same sentences are read by every mode of a comparison
def says_relation(text: str, stems: frozenset[str], relation: frozenset[str]) -> bool:
    """Does a sentence (its text and stored stems) say one of the relation's stems, directly, through its
    family, or as the same word in another part of speech (first ``DERIVATION`` letters)?"""
    if not relation:
        return False
    said = said_stems(text, stems)
    if said & relation:
        return True
    prefixes = {r[:DERIVATION] for r in relation if len(r) >= DERIVATION + 1}
    return any(len(s) >= DERIVATION + 1 and s[:DERIVATION] in prefixes for s in said)


@lru_cache(maxsize=256)
def first_role(question: str) -> Optional[tuple[str, frozenset[str]]]:
    """(role stem, owner's name stems) when a person's role noun owns a name in the question ("the founding
    *director* of the Centre …", "Izgoy's *performer*"); None otherwise."""
    if not (question or "").strip():
        return None
    doc = _parse(question)
    for head in name_heads(doc):
        owner = None
        if head.dep_ == "poss" and head.head.pos_ == "NOUN":
            owner = head.head
        elif head.dep_ == "pobj" and head.head.lower_ == "of" and head.head.head.pos_ == "NOUN":
            owner = head.head.head
        if owner is None or noun_types(owner.lower_) != ("PERSON",):
            continue
        names = frozenset(stem(t.lower_) for t in head.subtree if t.pos_ == "PROPN")
        if names:
            return stem(owner.lower_), names
    return None


@lru_cache(maxsize=256)
def start_names(question: str) -> tuple[frozenset[str], ...]:
    """Name stems of the names the question's chain starts from: inside a clause describing a noun ("the
    country *Signmark* is from") or owned by a noun ("the author of *Brand*", "*Izgoy*'s performer"). A
    name the last hop itself takes ("invade *Manchuria*", "an institution like a German *Fachhochschule*")
    is no start: what a sentence naming it leads to is no bridge."""
    if not (question or "").strip():
        return ()
    doc = _parse(question)
    inside: set[int] = set()
    for token in doc:
        if token.dep_ in _CLAUSES:
            inside.update(t.i for t in token.subtree)
    out = []
    for head in name_heads(doc):
        owned = (head.dep_ == "poss" and head.head.pos_ == "NOUN") or (
            head.dep_ == "pobj" and head.head.lower_ == "of" and head.head.head.pos_ == "NOUN")
        if head.i in inside or owned:
            out.append(frozenset(stem(t.lower_) for t in head.subtree if t.pos_ == "PROPN" or t.i == head.i))
    return tuple(out)
