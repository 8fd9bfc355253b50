"""The question's bridge named by a role noun: the sentence stating the verb must be about whoever holds that role.

"Which company did *the founding director of the Centre for Coastal Oceanography* co-found?" describes the
doer by a person's role noun owned by a name (``relation.Relation.described_by``): a person the question does
not name. "Meridian Tidal Power was founded in 2006 by … the oceanographer Peter Okafor" answers it only if
the evidence says Peter Okafor is that director ("Its founding director is Peter Okafor" on the Centre's
page); "The cooperative was founded in 1887 by Margaret Thorne" does not, although it shares the verb.

Rule (read from the mode's own candidate sentences and the parse the claim check already made):

- the role's holders are the people named by a candidate sentence that says the role noun (its stem) and is
  about the owner: it names the owner, or its opening pronoun was resolved to the owner (the sentence
  record's keys), or the owner's names are words of its document title; a person named as the owner is none;
- a bold whose sentence holds the question's verb with the other side filled stands only when that side
  names a holder (or a short name standing for one, ``aliases``); an occurrence whose other side the parse
  leaves empty decides nothing, as in ``support``; a sentence without the verb is left to the other checks.

Without the described role (the other side named, or no side) nothing changes.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional, Sequence

from core.answers.cache import parsed_once
from core.answers.question import QuestionFrame, said_stems, sentence_stems, stem
from core.answers.scoring import Pick
from core.storage.graph_view import as_graph_view

NOTE_ROLE = "No short answer is bolded: the quoted sentence is not about the person the question describes."


def _about_owner(pick: Pick, owner: frozenset[str], graph: Any) -> bool:
    """Is the sentence about the owner: named in it, its opening pronoun resolved to it, or its document's title?"""
    named = set(pick.sentence.stems)
    for key in pick.sentence.keys:
        if key in graph:
            named |= sentence_stems(graph.name(key))
    title = pick.sentence.doc or pick.sentence.cite.rsplit(", ", 1)[0]
    return owner <= named or owner <= sentence_stems(title.replace("_", " ").replace("-", " "))


def holders(candidates: Sequence[Pick], role: str, owner: frozenset[str], graph: Any) -> frozenset[str]:
    """Keys of the people the candidates say hold ``role`` (a noun stem) of ``owner`` (name stems)."""
    out: set[str] = set()
    for pick in candidates:
        if role not in said_stems(pick.sentence.text, pick.sentence.stems) or not _about_owner(pick, owner, graph):
            continue
        for label, _, key in pick.sentence.mentions:
            if label == "PERSON" and key and key in graph and not sentence_stems(graph.name(key)) <= owner:
                out.add(key)
    return frozenset(out)


def _names_holder(tokens: list[Any], held: frozenset[str], pick: Pick, graph: Any) -> bool:
    """Does the side (parse tokens, with their conjuncts) name one of the holders, by its full name or a short
    name standing for it?"""
    from core.answers.aliases import stands_for

    joined = [c for t in tokens for conj in t.conjuncts for c in conj.subtree]  # "by X and the oceanographer Y"
    said = {stem(t.lower_) for t in [*tokens, *joined] if t.pos_ == "PROPN"}
    for label, surface, key in pick.sentence.mentions:
        if label != "PERSON" or not key or not sentence_stems(surface) <= said:
            continue
        if key in held or stands_for(key, pick.sentence.chunk_id, graph, pick.sentence.text) in held:
            return True
    return False


def tied(pick: Optional[Pick], candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any = None
         ) -> tuple[Optional[Pick], str]:
    """(``pick``, "") when its bold may stand by the rule above; else (``pick`` without a bold, ``NOTE_ROLE``)."""
    from core.answers.arguments import _sentence_sides
    from core.answers.relation import _parse, question_relation

    if pick is None or not pick.typed or graph is None:
        return pick, ""
    relation = parsed_once(cache, "verified_relation", frame.text, question_relation)
    if relation is None or not relation.described_by[0]:
        return pick, ""
    role, owner = relation.described_by
    view = as_graph_view(graph)
    held = holders(candidates, role, owner, view)
    filled = False
    for verb in (t for t in _parse(pick.sentence.text) if t.pos_ == "VERB"
                 and relation.verb in (stem(t.lower_), stem(t.lemma_.lower()))):
        other = _sentence_sides(verb)["undergoer" if relation.role == "doer" else "doer"]
        if other:  # "by the engineer X and the oceanographer Y": the small parser joins Y's noun to the verb
            last = max(t.i for t in other)
            other = other + [c for k in verb.children if k.dep_ == "conj" and k.pos_ in ("NOUN", "PROPN")
                             and k.i > last for c in k.subtree]
        if not other:
            continue
        filled = True
        if _names_holder(other, held, pick, view):
            return pick, ""
    return (replace(pick, typed=[]), NOTE_ROLE) if filled else (pick, "")
