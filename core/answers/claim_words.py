"""The question's own words for its answer, apart from the words that name its first hop.

A sentence answering "Who is the wife of the director of *Meehan Bonnar's* film?" speaks of the bridge (the
director) and need not repeat how the question reached it. ``claim_terms`` is what the answer's sentence must
hold (``claim`` check 1): the main clause's words without the noun a wh-word determines and without the words
of a relation noun owned by a name nested in the main clause (``first_hop_words``: "the *birthplace of* Meehan
Bonnar", "*the founding director of* the Centre … co-found"); ``hop_owners`` are the names such a noun is
owned by (the bold's sentence must reach the bridge from them); ``named_role`` is the relation noun a "name of"
question asks the answer's own sentence to say ("the name of Scrooge's *sister*").
"""
from __future__ import annotations

from typing import Any

from core.answers.question import OF_NOUNS

def _of_phrase(token: Any) -> list[Any]:
    """The nouns of ``token``'s "of" phrases ("body *of water*", "the birthplace *of Meehan Bonnar*")."""
    return [obj for prep in token.children if prep.dep_ == "prep" and prep.lower_ == "of"
            for obj in prep.children if obj.dep_ == "pobj"]


def _owned_by_a_name(token: Any) -> bool:
    """Is ``token`` a relation noun whose owner is named: a possessor or "of" phrase holding a proper
    name ("Gisvi's *city of birth*", "the *birthplace* of Meehan Bonnar", "the *country* of Izgoy's
    performer")?"""
    from core.answers.support import _np

    owners = [c for c in token.children if c.dep_ == "poss"] + _of_phrase(token)
    return any(t.pos_ == "PROPN" for owner in owners for t in _np(owner))


def _nested(token: Any) -> bool:
    """Is the noun inside another noun phrase ("the Diocese of *the birthplace* …", "*Gisvi's city*") or the
    subject of the question's verb ("*the country* of Izgoy's performer invade …"), outside a describing
    clause?"""
    if any(t.dep_ in ("relcl", "acl", "ccomp", "advcl") for t in token.ancestors):
        return False  # a describing clause: the bridge rules (``bridge``, ``support``) read it
    if token.dep_ == "pobj" and token.head.head.lower_ in OF_NOUNS:
        return False  # "the name of Scrooge's sister": the relation noun names the answer itself, not a bridge
    if token.dep_ == "pobj" and token.head.lower_ != "of" and not _of_phrase(token):
        return False  # "apprentice *at Fezziwig's warehouse*" sets the scene; "in Gisvi's city *of birth*" is a hop
    return (token.dep_ == "pobj" and token.head.head.pos_ in ("NOUN", "PROPN")) or token.dep_ == "poss" \
        or (token.dep_ == "nsubj" and token.head.pos_ == "VERB" and token.head.dep_ == "ROOT") \
        or _do_support_subject(token)


def _do_support_subject(token: Any) -> bool:
    """Is the noun the subject of a do-support question, which the small parser reads as the object of "did"
    ("Which company did *the founding director* of the Centre … co-found?")?"""
    from core.answers.relation import main_verb
    from core.answers.support import _is_wh

    root = token.head
    return (token.dep_ in ("nsubj", "dobj") and root.dep_ == "ROOT" and root.lemma_.lower() == "do"
            and not _is_wh(token) and any(_is_wh(c) for c in root.children if c.dep_ in ("nsubj", "dobj"))
            and main_verb(token.doc)[0] is not None)  # a verb follows "did": the parse is read as do-support


def first_hop_words(doc: Any) -> set[str]:
    """Stems of the noun phrases that name the bridge of a question through a relation noun owned by a
    name, nested in the main clause ("the Diocese of *the birthplace of Meehan Bonnar*", "the most popular
    hotel in *Gisvi's city of birth*", "*the country of Izgoy's performer* invade …"): the answer's sentence
    speaks of the bridge itself and does not repeat how it was reached."""
    from core.answers.question import stem

    out: set[str] = set()
    for token in doc:
        if token.pos_ != "NOUN" or not _owned_by_a_name(token):
            continue
        if _nested(token):
            out |= {stem(t.lower_) for t in token.subtree if t.is_alpha and t.pos_ != "PROPN"}
    return out


def named_role(question: str) -> str:
    """The stem of the relation noun a "name of" phrase asks for when a name owns it ("the name of Scrooge's
    little *sister*", "the name of the *wife* of Ada Lovelace"): the answer is that person, so its sentence
    must say the noun; its modifiers alone ("a *little*") do not state it. "" for any other question. Only a
    person's role is asked of the sentence (``reason``): "Gisvi's *city* of birth" is stated by "born in"."""
    from core.answers.question import stem
    from core.answers.support import _parse

    for token in _parse(question):
        if token.pos_ == "NOUN" and token.dep_ == "pobj" and token.head.lower_ == "of" \
                and token.head.head.lower_ in OF_NOUNS and _owned_by_a_name(token):
            return stem(token.lower_)
        if token.pos_ == "NOUN" and token.dep_ == "attr" and token.head.dep_ == "ROOT" \
                and token.head.lemma_ == "be" and any(c.dep_ == "poss" and c.pos_ == "PROPN" for c in token.children):
            return stem(token.lower_)  # "Who was Scrooge's fellow *apprentice* …": the answer's own role
    return ""


def hop_owners(question: str) -> tuple[frozenset[str], ...]:
    """Name stems of the owners of the relation nouns ``first_hop_words`` leaves out ("Meehan Bonnar" of
    "the birthplace of Meehan Bonnar"): the bold's sentence must reach the bridge from them
    (``grounding.reaches_owner``)."""
    from core.answers.question import sentence_stems
    from core.answers.support import _np, _parse

    out: list[frozenset[str]] = []
    for token in _parse(question):
        if token.pos_ != "NOUN" or not _owned_by_a_name(token) or not _nested(token):
            continue
        owners = [c for c in token.children if c.dep_ == "poss"] + _of_phrase(token)
        for owner in owners:
            name = " ".join(t.text for t in _np(owner) if t.pos_ == "PROPN")
            if sentence_stems(name):
                out.append(sentence_stems(name))
    return tuple(out)


def claim_terms(question: str) -> frozenset[str]:
    """The main clause's own words (``support.main_clause_terms``) without the noun a wh-word
    determines ("what *year*", "which *company*", "what *body of water*" name the
    answer's type, not what it states), nor the words naming a bridge through a relation noun owned by
    a name (``first_hop_words``: "the *birthplace of* Meehan Bonnar")."""
    from core.answers.question import stem
    from core.answers.support import _parse, main_clause_terms

    doc = _parse(question)
    typed: set[str] = set()
    for t in doc:
        if any(c.dep_ == "det" and c.lower_ in ("what", "which", "whose") for c in t.children):
            typed |= {stem(t.lower_)} | ({stem(o.lower_) for o in _of_phrase(t)} if t.lower_ == "body" else set())
    return main_clause_terms(question) - typed - first_hop_words(doc)
