"""Whom does a sentence say the question's verb of? The answering sentence first, not one that only shares the verb.

"Which company did the founding director of the Centre for Coastal Oceanography co-found?": "The cooperative
was founded in 1887 by Margaret Thorne" shares the verb with the question, but its founder is someone the
question does not lead to; "Meridian Tidal Power was founded in 2006 by … the oceanographer Peter Okafor" says
it of the person the mode's evidence resolved the founding director to (the bridge). The scorer sees the verb
in both; this module reads which entity fills each side of it.

The question is read once (``asked_relation``): its main verb (a do-support question "Which company did X
co-found?" and "In what year was the cooperative founded whose …?" included), which side the wh-phrase is
(doer, undergoer, or neither: *when/where/what year* ask for a circumstance), and each other side: *named*
("the Velmora Marine Institute": its proper names) or *described* ("the research institute later directed by
…": its head noun; the entity it stands for is a bridge the evidence resolves).

A candidate sentence holding the verb is parsed (at most ``ARGUMENT_TRIES`` per answer, the parse shared with
the other modes of the comparison) and each occurrence of the verb graded (``argument_fit``):

* ``NAMED`` — the sentence's side names what the question names, or holds the described side's head noun
  ("the naturalist Edwin Marlowe founded the Velmora Marine *Institute*" for "the research *institute* …");
* ``NEAR`` / ``FAR`` — it names an entity the mode's other evidence reaches one / two hops from the question's
  names (``grounding.hop_neighbours``; Peter Okafor, named with the Centre): the bridge;
* ``UNRELATED`` (below 0) — it names only entities the question and the evidence do not lead to: the verb
  attaches to an unrelated subject;
* 0 — no verb, or a side the parse does not fill.

An occurrence counts only when the asked-for side holds a mention of the asked-for type (for a circumstance:
anywhere under the verb outside the other sides). A pronoun or a definite description ("The project was …
operated by …") stands for the entity the sentence record resolved, or, when its noun is a word of the
document's title, for the document's subject (the Hollow Bay Tidal Project's page).

``argued``: when the scorer's best sentence grades below ``NAMED``, the candidate within ``ARGUMENT_WINDOW``
with the highest grade above it (ties: the higher score) is quoted first instead. A first-hop sentence ("Its
founding director is Peter Okafor") holds no asked verb: it grades 0 and goes below the sentence stating the
relation of the bridge. ``claim.claimed`` applies it only to a first line the claim checks left without a bold — a bold is never replaced — and bolds the new first line only when it passes checks
1-2 of ``claim``, the argument check of ``support`` and the last gates of ``grounding``, as any bold must.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

from core.answers.cache import parsed_once
from core.answers.question import QuestionFrame, said_stems, sentence_stems, stem
from core.answers.relation import main_verb
from core.answers.scoring import Pick
from core.storage.graph_view import as_graph_view

ARGUMENT_WINDOW = 2.0  # a sentence this close to the best may be quoted first when it says the verb of the bridge
ARGUMENT_TRIES = 4  # at most this many candidate sentences holding the verb are parsed per answer

NAMED = 3  # the side names the question's own name or the described side's head noun
NEAR = 2  # the side names an entity one hop from the question in the mode's evidence
FAR = 1  # … two hops
UNRELATED = -1  # the side names only entities the question does not lead to

Layers = Union[tuple[frozenset[Any], frozenset[Any]], Callable[[], tuple[frozenset[Any], frozenset[Any]]]]

_CIRCUMSTANCE = frozenset({"when", "where"})
_PRONOUNS = frozenset("it its they their he his she her this these".split())


@dataclass(frozen=True)
class Side:
    """A side of the question's verb that is not asked for: its proper names (stems) when it is named, else
    the stem of the noun that describes it ("institute" of "the research institute later directed by …")."""

    role: str  # "doer" | "undergoer"
    names: frozenset[str] = frozenset()
    head: str = ""


@dataclass(frozen=True)
class AskedRelation:
    """The question's main verb (its stem and lemma's stem), the asked-for side ("doer", "undergoer" or
    "circumstance") and the other sides."""

    verb: str
    lemma: str
    answer: str
    sides: tuple[Side, ...]


def _parse(text: str) -> Any:
    from core.answers.support import _parse as parse

    return parse(text)


def _is_wh(token: Any) -> bool:
    from core.answers.support import _is_wh as wh

    return bool(wh(token))


def _side(role: str, head: Any) -> Optional[Side]:
    """The question's side headed by ``head`` (None for a wh-phrase or a pronoun)."""
    from core.answers.question import noun_types
    from core.answers.support import _core_names, _np

    if _is_wh(head) or head.pos_ == "PRON":
        return None
    if head.pos_ == "PROPN":
        names = _core_names(_np(head))
        return Side(role, names) if names else None
    if head.pos_ == "NOUN" and noun_types(head.lower_) is not None:  # a kind of entity: "institute", "director"
        return Side(role, frozenset(), stem(head.lower_))
    return None  # "the first goal": a common noun says nothing of which entity is meant


def _asks_circumstance(doc: Any) -> bool:
    """Is the wh-phrase "when", "where" or "in what year" (a circumstance of the verb, not one of its sides)?"""
    from core.answers.question import noun_types

    for token in doc:
        if token.lower_ in _CIRCUMSTANCE and token.i <= 1:
            return True
        if token.dep_ == "det" and token.lower_ in ("what", "which") and token.head.dep_ in ("pobj", "pcomp", "npadvmod"):
            kinds = noun_types(token.head.lower_)
            if kinds and "DATE" in kinds:
                return True
    return False


def asked_relation(question: str) -> Optional[AskedRelation]:
    """The question's verb and sides (see the module docstring); None when it has no main verb of its own or
    no side to check."""
    if not (question or "").strip():
        return None
    doc = _parse(question)
    verb, fronted = main_verb(doc)
    if verb is None:
        return None
    root = next(t for t in doc if t.dep_ == "ROOT")
    sides: list[Side] = []
    answer = ""
    if fronted:  # wh-phrase before "did": the undergoer; the other noun phrase does it
        nominals = [c for c in list(root.children) + list(verb.children) if c.dep_ in ("nsubj", "dobj")]
        for head in nominals:
            if _is_wh(head):
                answer = "undergoer"
            else:
                side = _side("doer", head)
                sides += [side] if side else []
    else:
        passive = any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children) or verb.dep_ == "acl"
        heads: list[tuple[str, Any]] = []
        for child in verb.children:
            if child.dep_ in ("nsubj", "nsubjpass"):
                heads.append(("undergoer" if passive else "doer", child))
            elif child.dep_ == "dobj":
                heads.append(("undergoer", child))
            elif child.dep_ == "agent":
                heads += [("doer", g) for g in child.children if g.dep_ == "pobj"]
        if verb.dep_ == "acl":
            heads.append(("undergoer", verb.head))
        for role, head in heads:
            if _is_wh(head):
                answer = role
                continue
            side = _side(role, head)
            sides += [side] if side else []
    if not answer and _asks_circumstance(doc):
        answer = "circumstance"
    if not answer or not sides:
        return None
    lemma = verb.lower_ if fronted else verb.lemma_.lower()  # after "did" the verb is its own base form
    return AskedRelation(stem(verb.lower_), stem(lemma), answer, tuple(sides))


def _sentence_sides(verb: Any) -> dict[str, list[Any]]:
    """The doer and undergoer tokens of one occurrence of the verb (``support._sides``), with the subject of
    the first verb for a passive second one ("The project was developed and is *operated* by …")."""
    from core.answers.support import _np, _own_verb, _sides

    doer, undergoer = _sides(verb)
    passive = verb.tag_ == "VBN" and (verb.dep_ == "acl" or any(c.dep_ == "auxpass" for c in verb.children))
    if not doer and passive:  # "founded in the spring of 1887 by X": "by" parsed as a preposition of a noun
        doer = [t for by in verb.subtree if by.lower_ == "by" and by.dep_ in ("prep", "agent") and _own_verb(by).i == verb.i
                for g in by.children if g.dep_ == "pobj" for t in g.subtree]
    if not undergoer and verb.dep_ == "conj" and any(c.dep_ == "auxpass" for c in verb.children):
        undergoer = [t for c in verb.head.children if c.dep_ == "nsubjpass" for t in _np(c)]
    return {"doer": _with_name_after(doer), "undergoer": _with_name_after(undergoer)}


def _with_name_after(tokens: list[Any]) -> list[Any]:
    """The side with the proper name right after it that the parser hung elsewhere ("by the oceanographer
    *Tomas Reyes*", "Reyes" parsed as an adverb of the verb)."""
    if not tokens:
        return tokens
    last = max(tokens, key=lambda t: t.i)
    doc = last.doc
    extra = []
    i = last.i + 1
    while i < len(doc) and doc[i].pos_ == "PROPN":
        extra.append(doc[i])
        i += 1
    return tokens + extra


def _said_names(tokens: list[Any], pick: Pick, graph: Any, title: frozenset[str]) -> frozenset[str]:
    """Name stems a side of the sentence says: its own proper names, the entity an opening pronoun or "the
    company" was resolved to, and the document's subject for a definite noun that is a word of its title."""
    from core.answers.support import _core_names

    names = set(_core_names(tokens))
    words = {t.lower_ for t in tokens}
    key = pick.sentence.refers_to
    if key and words & (_PRONOUNS | {"the"}) and any(t.i <= 1 for t in tokens):
        names |= sentence_stems(graph.name(key) if key in graph else key)
    if not names and title:
        heads = [t for t in tokens if t.pos_ == "NOUN" and t.head.i not in {x.i for x in tokens}]
        if any(stem(t.lower_) in title and any(c.lower_ in ("the", "its") for c in t.children) for t in heads):
            names |= title
    return frozenset(names)


def _wanted_in(pick: Pick, frame: QuestionFrame, graph: Any, tokens: list[Any]) -> bool:
    from core.answers.support import _inside, _replacements, _span

    spans = _span(tokens)
    return any(_inside(pick.sentence.text, surface, spans) for surface in _replacements(pick, frame, graph))


def _side_grade(side: Side, tokens: list[Any], pick: Pick, graph: Any, title: frozenset[str], layers: Layers) -> int:
    """How the sentence's side of the verb fits the question's ``side`` (the grades of the module docstring)."""
    if not tokens:
        return 0
    said = _said_names(tokens, pick, graph, title)
    if side.names:
        if side.names <= said:
            return NAMED
        return UNRELATED if said else 0
    words = {stem(t.lower_) for t in tokens}
    if side.head and side.head in words:
        return NAMED
    near, far = layers() if callable(layers) else layers  # read only when a bridge is needed
    for grade, layer in ((NEAR, near), (FAR, far)):
        if any(names and names <= said for names in layer):
            return grade
    return UNRELATED if said else 0


def _ceiling(pick: Pick, asked: AskedRelation, frame: QuestionFrame, graph: Any, layers: Layers) -> int:
    """The highest grade the sentence could reach, read without a parse (0: none above 0). It must hold the
    verb and a mention of the asked-for type the question does not name; then ``NAMED`` when it holds a side's
    names or head noun, ``NEAR`` / ``FAR`` when it names an entity of that layer (in the sentence, its title, or
    the entity it refers to)."""
    from core.answers.grounding import _title_stems
    from core.answers.support import _replacements

    sentence = pick.sentence
    if not {asked.verb, asked.lemma} & said_stems(sentence.text, sentence.stems) or not _replacements(pick, frame, graph):
        return 0
    said = sentence.stems | _title_stems(pick)
    if sentence.refers_to:
        said = said | sentence_stems(graph.name(sentence.refers_to) if sentence.refers_to in graph else sentence.refers_to)
    if any((side.names and side.names <= said) or (side.head and side.head in said) for side in asked.sides):
        return NAMED
    if all(side.names for side in asked.sides):
        return 0  # named sides only: no bridge reads for them
    near, far = layers() if callable(layers) else layers
    for grade, layer in ((NEAR, near), (FAR, far)):
        if any(names and names <= said for names in layer):
            return grade
    return 0


def argument_fit(pick: Pick, asked: AskedRelation, frame: QuestionFrame, graph: Any,
                 layers: Layers = (frozenset(), frozenset())) -> int:
    """The best grade of an occurrence of the question's verb in the sentence (0 when it cannot fit: no verb,
    or no mention of the asked-for type); ``layers``: name stems of the entities one and two hops from the
    question in the mode's evidence (or a function giving them, called only when a bridge is needed)."""
    from core.answers.grounding import _title_stems

    graph = as_graph_view(graph)
    if not _ceiling(pick, asked, frame, graph, layers):
        return 0
    title = _title_stems(pick)
    grades: list[int] = []
    for verb in (t for t in _parse(pick.sentence.text) if t.pos_ == "VERB"
                 and {stem(t.lower_), stem(t.lemma_.lower())} & {asked.verb, asked.lemma}):
        sides = _sentence_sides(verb)
        found = [_side_grade(side, sides[side.role], pick, graph, title, layers) for side in asked.sides]
        if any(g < 0 for g in found):
            grades.append(UNRELATED)
            continue
        if asked.answer == "circumstance":
            other = {t.i for side in asked.sides for t in sides[side.role]}
            answer_tokens = [t for t in verb.subtree if t.i not in other]
        else:
            answer_tokens = sides[asked.answer]
        positive = [g for g in found if g > 0]
        grades.append(min(positive) if positive and _wanted_in(pick, frame, graph, answer_tokens) else 0)
    return max(grades, default=0)


def _layers(candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any
            ) -> tuple[frozenset[str], frozenset[str]]:
    """Name stems of the entities one and two hops from the question's names in the candidates' sentences."""
    from core.answers.grounding import _alias_memo, _name_stems, _next_hop, hop_neighbours

    names = parsed_once(cache, "grounding_names", frame.text, _name_stems)
    memo = _alias_memo(cache)
    first = hop_neighbours(candidates, frame, names, graph, memo)
    second = _next_hop(candidates, first, graph, memo) - first - frame.entity_keys

    def stems(keys: set[str]) -> frozenset[Any]:
        return frozenset(sentence_stems(graph.name(k) if k in graph else k) for k in keys)

    return stems(first), stems(second)


def argued(best: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any = None) -> Pick:
    """``best``, or the candidate within ``ARGUMENT_WINDOW`` that says the question's verb of what the
    question leads to with a higher grade (see the module docstring)."""
    asked: Optional[AskedRelation] = parsed_once(cache, "asked_relation", frame.text, asked_relation)
    if asked is None or not frame.groups:
        return best
    graph = as_graph_view(graph)
    layers = functools.cache(lambda: _layers(candidates, frame, graph, cache))
    top = argument_fit(best, asked, frame, graph, layers)
    if top >= NAMED:
        return best
    chosen, grade = best, max(top, 0)
    seen = {best.sentence.text}
    tries = 0
    for pick in sorted(candidates, key=lambda c: -c.score):
        if pick.score < best.score - ARGUMENT_WINDOW or tries >= ARGUMENT_TRIES:
            break
        if pick.sentence.text in seen:
            continue
        seen.add(pick.sentence.text)
        if _ceiling(pick, asked, frame, graph, layers) <= grade:
            continue  # it cannot beat the grade held: no parse spent on it
        tries += 1
        fit = argument_fit(pick, asked, frame, graph, layers)
        if fit > grade:
            chosen, grade = pick, fit
        if grade >= NAMED:
            break
    return chosen
