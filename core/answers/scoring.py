"""How good a candidate sentence is as an answer, from lexical, graph, type and stored-vector signals
(no sentence is parsed or embedded per query).

score = LEXICAL × (share of the question's term weight found among its words outside the question's
                  names; terms weighted by IDF over the chunks, the focus terms ×3, see ``question``)
      + LEXICAL_NAMES × (the same share for the words of the question's names)
      + ROLE[role]  (what the mode's evidence says of the sentence: it states a bridge relation, it is
                     about the bridge's other entity, it supports a path edge, …)
      + QUESTION_ENTITY if it names a question entity (QUESTION_ENTITY_MULTI for a multi-hop question,
        whose answer sentence rarely names them)
      + TYPE × (wanted-type match) when the sentence is *near the question*: it names a question
        entity, states a bridge, is about a bridge entity or shares a term with the question
      + FOCUS × (share of the focus terms it holds: "Who *founded* …") + DIRECT × the same share when it
        also holds a wanted-type mention (the shape of a direct answer)
      + SIMILARITY × (cosine to the question of the stored vector of a relation between two entities it
        names, or 0.5 × that of the one entity it names: what the index embedded for what it states)
      + LINK × (for "How is A connected to B?": 1 when it names two of the question's entities, 0.5 when
        it names one in a chunk that names another; the link asked about, ``AnswerInputs.link``)
      + MEANING × (cosine of the question's vector to the sentence's own vector, pooled from the chunk
        window's token outputs at indexing, ``core.sentence_vectors``; 0 for a sentence without one)
      + RANKED × (share of the last hop's rank pairs it says the same way: "the *first* principal keeper"
        for "Who was the first principal keeper of the lighthouse where …?", ``rank_agreement``)
      − RANK × (its place in the mode's own evidence order)

The first line (``first_choice``) is the best by score plus ``KIND`` for a sentence giving its wanted-type
mention as one of the question's kind ("Which annual *festival* …": a mention named "… *Festival*", or the
sentence says "festival"; ``asked_kind``, ``of_the_kind``); the scores themselves, and so the evidence lines'
order and the bold's margin, do not count it.

A wanted-type match is a mention whose NER label or knowledge-graph type is in the first group of
wanted types (1.0; a later label of the group ``LATER_LABEL``), plus half that per further group (a
"…, and for how much?" part); never a mention the question names (also in other order: "Leader of
Opposition" for "the current opposition leader"), nor an entity the caller excludes (the bridge entity a
sentence is about). The entity an opening pronoun refers to counts as a mention.
The weights were set by hand on the dev_musique_full questions and checked on the sample corpus's
questions (README, "Offline answers"); there is no held-out question set, so expect ±1 question.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from functools import lru_cache

from core.answers.question import (_NOUN_TYPES, _WORD, RANK_REACH, STOP, QuestionFrame, _interrogative, _words, noun_types,
                                   stem)
from core.answers.sentences import Sentence, head_noun
from core.types import display_name

LEXICAL = 2.0
LEXICAL_NAMES = 0.5
FOCUS = 1.0
TYPE = 1.5
QUESTION_ENTITY = 0.5
QUESTION_ENTITY_MULTI = 0.0  # the same for a multi-hop question (its answer sentence rarely names them)
DIRECT = 0.5  # a wanted-type mention next to a focus term of the question ("founded … by **X**")
LATER_LABEL = 0.6
SIMILARITY = 1.0  # × cosine to the question of what the sentence states (stored relation / entity vectors)
RANK = 0.01
MEANING = 0.5  # × cosine of the question to the sentence's own vector (0 without one: the score of before)
RANKED = 1.0  # × share of the last hop's rank pairs ("the *first* keeper") the sentence says the same way
KIND = 0.5  # the first line: a sentence giving a wanted-type mention as one of the asked kind ("Which *festival* …")
LINK = 1.0  # × how directly the sentence links two question entities (connection questions only)
ROLE = {"bridge": 1.0, "about": 0.8, "edge": 0.8, "relation": 0.6, "node": 0.4, "summary": 0.3, "leaf": 0.4,
        "chunk": 0.0}


@dataclass
class Pick:
    """A scored sentence in the role a mode gave it, with the wanted-type mentions to bold."""

    sentence: Sentence
    score: float
    role: str
    label: str  # shown before the sentence in the answer ("bridge A → B", "about B", "chunk #2", …)
    typed: list[str] = field(default_factory=list)  # surfaces of wanted-type mentions (one per group)


def lexical(frame: QuestionFrame, sentence: Sentence) -> tuple[float, float]:
    """Shares of the question's term weight found in the sentence (0..1 each): (terms outside the
    question's names, terms of the names)."""
    total = sum(frame.terms.values())
    if not total:
        return 0.0, 0.0
    found = [(t, w) for t, w in frame.terms.items() if t in sentence.stems]
    names = sum(w for t, w in found if t in frame.name_stems)
    return (sum(w for _, w in found) - names) / total, names / total


def rank_agreement(frame: QuestionFrame, sentence: Sentence) -> float:
    """Share of the last hop's rank pairs ("the *first* keeper", ``QuestionFrame.ranks``) the sentence says
    the same way: the noun with the rank word at most ``RANK_REACH`` words before it. A sentence that names
    the noun without the rank loses nothing (an answer sentence often does not repeat "last season")."""
    if not frame.ranks:
        return 0.0
    pairs = [(rank, noun) for rank, noun in frame.ranks if noun in sentence.stems]
    if not pairs:
        return 0.0
    words = [m.group(0).lower() for m in _WORD.finditer(sentence.text)]
    said = 0
    for rank, noun in pairs:
        said += any(word.startswith(noun[:3]) and stem(word) == noun and rank in words[max(0, i - RANK_REACH):i]
                    for i, word in enumerate(words))
    return said / len(frame.ranks)


def typed_mentions(frame: QuestionFrame, sentence: Sentence, graph: Any, exclude: frozenset[str] = frozenset()
                   ) -> tuple[float, list[str]]:
    """(type score, surfaces to bold): for each wanted group, its best mention not named in the
    question; a group's first label counts 1.0, later ones ``LATER_LABEL`` (who → a PERSON before
    an ORG), and groups after the first count half. Among equals, the mention nearest to a focus
    term of the question is the one bolded."""
    score = 0.0
    surfaces: list[str] = []
    anchors = _focus_offsets(frame, sentence.text)
    for g, group in enumerate(frame.groups):
        found: tuple[float, float, str] = (0.0, 0.0, "")  # (value, -distance to a focus word, surface)
        for label, surface, key in _mentions(sentence, graph):
            # the mention's NER label or its entity's voted type: both are often wrong on their own
            # ("Dunmore" labelled and voted PERSON, the Lantern Tide Festival voted LAW)
            kind = str(graph.attributes(key).get("type", "")) if key and key in graph else ""
            position = min((group.index(x) for x in (label, kind) if x in group), default=None)
            if position is None:
                continue
            if (key and (key in frame.entity_keys or key in exclude)) or frame.names_in_question(surface) \
                    or surface in surfaces or _question_words(frame, surface):
                continue
            value = 1.0 if position == 0 else LATER_LABEL
            at = sentence.text.find(surface)
            end = at + len(surface)
            nearness = -min((max(a - end, at - b, 0) for a, b in anchors), default=0) if at >= 0 else -1e9
            if (value, nearness) > found[:2]:
                found = (value, nearness, surface)
        if found[2]:
            score += found[0] * (1.0 if g == 0 else 0.5)
            surfaces.append(found[2])
    return score, surfaces


_UNNAMED = frozenset({"DATE", "TIME", "CARDINAL", "QUANTITY", "MONEY", "PERCENT"})


@lru_cache(maxsize=1024)
def asked_kind(question: str) -> str:
    """The kind noun a "what/which" question asks for, singular ("Which annual *festival* …" → festival, "In what
    *county* …" → county); "" when the question asks none."""
    words = _words(question)
    for i, word in enumerate(words):
        if word not in ("what", "which") or not _interrogative(words, i):
            continue
        found = ""
        for w in words[i + 1:i + 6]:
            if noun_types(w) is None:
                if found:
                    break
                continue
            found = next((s for s in (w, w[:-3] + "y", w[:-1]) if s in _NOUN_TYPES), w)
        if found and set(noun_types(found) or ()) & _UNNAMED:
            return ""  # a year, a number, a code: no name to be headed by it
        return found
    return ""


def _says_kind(text: str, kind: str) -> bool:
    """Does the sentence say the kind noun as a common noun ("notable *hotels* in Windhoek such as …")?"""
    plural = kind[:-1] + "ies" if kind.endswith("y") else kind + "s"
    return any(word in (kind, plural) for word in _WORD.findall(text))


def of_the_kind(pick: Pick, frame: QuestionFrame) -> bool:
    """Does the sentence give a mention of the wanted type as one of the question's kind: its name is headed by
    the kind noun ("Lantern Tide *Festival*" for "Which annual *festival* …") or the sentence says the kind noun
    ("notable *hotels* in Windhoek such as …")? (``asked_kind``; False when the question asks no kind.)"""
    kind = asked_kind(frame.text) if KIND else ""
    return bool(kind) and bool(pick.typed) and (any(head_noun(s) == kind for s in pick.typed)
                                                or _says_kind(pick.sentence.text, kind))


def _question_words(frame: QuestionFrame, surface: str) -> bool:
    """Is the mention made only of the question's own words, in any order ("Leader of Opposition" for "the
    current opposition leader")? Then it restates what is asked, it is not the answer."""
    words = {stem(w) for w in _WORD.findall(surface.lower()) if w not in STOP}
    return bool(words) and words <= frame.own_words


def _mentions(sentence: Sentence, graph: Any) -> list[tuple[str, str, str]]:
    """The sentence's mentions, plus the entity its opening pronoun or "the festival" refers to
    (as the entity's name, which the sentence does not spell: the answer line then names it first)."""
    key = sentence.refers_to
    if not key or key not in graph or any(k == key for _, _, k in sentence.mentions):
        return sentence.mentions
    data = graph.attributes(key)
    return sentence.mentions + [(str(data.get("type", "")), display_name(key, data), key)]


def _focus_offsets(frame: QuestionFrame, text: str) -> list[tuple[int, int]]:
    """Character offsets of the sentence's words that are focus terms of the question: the wanted-type
    mention nearest to one is the short answer ("joined the institute in **1923**", not the lifespan)."""
    if not frame.focus:
        return []
    return [m.span() for m in _WORD.finditer(text) if stem(m.group(0).lower()) in frame.focus]


def score_sentence(frame: QuestionFrame, sentence: Sentence, graph: Any, role: str, rank: int = 0,
                   label: Optional[str] = None, similarity: float = 0.0, exclude: frozenset[str] = frozenset(),
                   memo: Optional[dict[Any, Any]] = None, link: float = 0.0, meaning: float = 0.0) -> Pick:
    """Score one sentence in a role (see the module docstring). ``exclude``: entities that cannot be
    the answer here (the bridge entity a sentence is about: the question asks about it, not for it).
    ``memo``: the question's store of the parts that depend only on the question, the sentence and
    ``exclude`` (its lexical shares and typed mentions), so the modes of one comparison that meet the
    same sentence score those once. ``meaning``: the cosine of the question to the sentence's own vector
    (``AnswerInputs.meaning``; 0 when the workspace has none)."""
    key = (id(frame), id(sentence), exclude)
    parts = memo.get(key) if memo is not None else None
    if parts is None:
        parts = (frame, sentence, lexical(frame, sentence), typed_mentions(frame, sentence, graph, exclude),
                 rank_agreement(frame, sentence))
        if memo is not None:
            memo[key] = parts  # holds the frame and the sentence: their ids stay theirs while the memo lives
    (lex, lex_names), (type_score, shared) = parts[2], parts[3]
    surfaces = list(shared)
    names_question = bool(sentence.keys & frame.entity_keys)
    near = names_question or lex + lex_names > 0 or role in ("bridge", "about", "edge")
    focus = len(frame.focus & sentence.stems) / len(frame.focus) if frame.focus else 0.0
    entity = QUESTION_ENTITY_MULTI if frame.multi_hop else QUESTION_ENTITY
    score = (LEXICAL * lex + LEXICAL_NAMES * lex_names + ROLE.get(role, 0.0)
             + (entity if names_question else 0.0) + (TYPE * type_score if near else 0.0)
             + FOCUS * focus + (DIRECT * focus if type_score > 0 else 0.0)
             + SIMILARITY * similarity + MEANING * meaning + LINK * link - RANK * rank
             + RANKED * parts[4])
    return Pick(sentence, round(score, 6), role, label or role, surfaces if near else [])


def first_choice(picks: list[Pick], frame: QuestionFrame) -> Optional[Pick]:
    """The sentence quoted first: the best by score plus ``KIND`` for one giving its wanted-type mention as one of
    the question's kind (``of_the_kind``); ties go to the earlier one. Only the first line's choice: the
    scores, and so the evidence lines' order and the bold's margin, are the scorer's."""
    if not KIND or not asked_kind(frame.text):
        return best(picks)
    top: Optional[Pick] = None
    top_value = 0.0
    for pick in picks:
        value = pick.score + (KIND if of_the_kind(pick, frame) else 0.0)
        if top is None or value > top_value:
            top, top_value = pick, value
    return top


def best(picks: list[Pick]) -> Optional[Pick]:
    """The highest-scoring pick; ties go to the earlier one (the mode's own order)."""
    top: Optional[Pick] = None
    for pick in picks:
        if top is None or pick.score > top.score:
            top = pick
    return top
