"""Does the answer line support its bold short answer for the relation the question asks about?

The scorer bolds the wanted-type mention of the best sentence nearest to the question's focus words
(``scoring.typed_mentions``). That is right when the sentence states the relation with the mention in
the asked-for place, and wrong when it names two people around the verb ("X … was succeeded by **Y**"
with X bolded), or states the verb about another subject ("Z was founded by **A**" for "Who founded
Brannock Instruments?"). ``checked`` reads the question's relation once and parses only the chosen
sentence (one short spaCy parse per mode, memoised per question):

* ``question_relation`` — the question's main verb, whether the wh-phrase is its subject (the doer:
  "Who *founded* X", "Which company *operates* …") or its object ("Whom did X *succeed*"), and the
  proper names of the verb's other argument without its relative clauses ("Brannock Instruments"; none
  for "the organisation whose …").
* In the sentence, each occurrence of that verb gives the doer (active subject; agent of a passive or of
  a participle "founded by …"; the noun a "who …" clause hangs on) and the undergoer (object; passive
  subject; the noun a participle modifies). The bold must lie in the asked-for argument; otherwise a
  wanted-type mention inside it is bolded instead, or nothing. When the other argument names something
  other than the question's name, the occurrence is about another entity and supports nothing. An answer the
  sentence names only by its opening reference ("Since 1985 *the festival* has been organised by the museum",
  ``sentences.opening_reference``) lies in the asked-for argument when those words do (``REFERRED``).
* A sentence without the verb keeps the scorer's bold (a paraphrase may still state the relation).
* A multi-hop question starts from an entity its relative clause names ("the country that released
  *Han Vodka*"): a sentence naming it states the first hop, so its wanted-type mention is the bridge
  (the country), not the answer (``bridge_names``, ``states_the_bridge``): no bold.
* "What year …" wants a year: a date without a three- or four-digit number ("each summer", "15
  February") is not bolded.

Everything here is a refusal or a narrowing: a bold is kept, moved inside the asked-for argument, or
dropped — no bold rather than a wrong one.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Optional

from core.answers.cache import answer_cache, parsed_once
from core.answers.relation import _CLAUSES, _SUBJECTS, _WH, Relation, _is_wh, _names, _np, _parse, question_relation  # noqa: F401 (re-exported)
from core.answers.question import QuestionFrame, noun_types, sentence_stems, setting_words, stem
from core.answers.scoring import Pick
from core.retrieval.query import QuestionState
from core.storage.graph_view import as_graph_view
from core.types import display_name

_YEAR_QUESTION = re.compile(r"\b(?:what|which)\s+year\b", re.IGNORECASE)
_YEAR = re.compile(r"\b\d{3,4}\b")
REFERRED = True  # an answer the sentence's opening only refers to ("the festival") may be in the asked-for side


def bridge_names(question: str) -> list[frozenset[str]]:
    """Stems of each proper name inside the clauses that describe the question's subject ("the country
    that released *Han Vodka*", "the district that *Knott* is part of"): the entity a multi-hop
    question starts from, one hop before its answer. Names of the main clause are not among them."""
    if not (question or "").strip():
        return []
    doc = _parse(question)
    clauses = [t for t in doc if t.dep_ in ("relcl", "acl")]
    inside: set[int] = set()
    for clause in clauses:  # the innermost clauses: where a chain of descriptions starts
        span = {t.i for t in clause.subtree}
        if not any(other.i != clause.i and other.i in span for other in clauses):
            inside |= span
    names: list[frozenset[str]] = []
    run: list[Any] = []
    for token in list(doc) + [None]:
        if token is not None and token.i in inside and token.pos_ == "PROPN":
            run.append(token)
            continue
        if run:
            names.append(frozenset(stem(t.lower_) for t in run))
            run = []
    return names


def bridge_types(question: str) -> Optional[frozenset[str]]:
    """The entity types the bridge of a multi-hop question can have, read from the nouns its innermost
    clauses describe ("the *company* that Peter Okafor co-founded" → ORG); None when a clause's noun
    says nothing of a type ("the *one* that …") or there is no such clause."""
    if not (question or "").strip():
        return None
    doc = _parse(question)
    clauses = [t for t in doc if t.dep_ in ("relcl", "acl")]
    kinds: set[str] = set()
    for clause in clauses:
        span = {t.i for t in clause.subtree}
        if any(other.i != clause.i and other.i in span for other in clauses):
            continue  # not innermost
        found = noun_types(clause.head.lower_)
        if found is None:
            return None
        kinds |= set(found)
    return frozenset(kinds) if kinds else None


def may_be_the_bridge(frame: QuestionFrame, kinds: Optional[frozenset[str]]) -> bool:
    """Can the question's wanted answer type also be its bridge's ("Which airport …" through "the
    city where …": both places)? When the types are disjoint ("How many turbines …" through "the
    company that …"), a sentence stating the first hop may state the answer too, and its bold stands."""
    if kinds is None or not frame.groups:
        return True
    return bool(set(frame.groups[0]) & kinds)


def main_clause_terms(question: str) -> frozenset[str]:
    """Stems of the question's own words for its answer: common words (not names, not numbers) outside
    the clauses that describe the bridge ("How many *turbines* make up the power station developed by
    …": turbines, make, power, station) and outside the clauses that set the scene (``question.setting_words``)."""
    doc = _parse(question)
    describing = {t.i for c in doc if c.dep_ in ("relcl", "acl") for t in c.subtree}

    def words(inside: set[int]) -> frozenset[str]:
        return frozenset(stem(t.lower_) for t in doc if t.i not in inside and t.is_alpha and not t.is_stop
                         and t.pos_ not in ("PROPN", "NUM") and t.lower_ not in _WH)

    # a main clause left with no word of its own ("How old was Tom *when he died*?") is asked by its clause
    return words(describing | setting_words(doc)) or words(describing | setting_words(doc, clauses=False))


def _clause_of(doc: Any, text: str, surface: str) -> Any:
    at = text.lower().find(surface.lower())
    token = next((t for t in doc if t.idx <= at < t.idx + len(t.text)), None) if at >= 0 else None
    return None if token is None else (token, _own_verb(token))


def second_hop_clause(text: str, surface: str, terms: frozenset[str]) -> bool:
    """Does the clause holding ``surface`` share a word with the question's main clause ("whose *six*
    seabed turbines began …" for "How many turbines …")? Then it states the second hop, not only the first."""
    found = _clause_of(_parse(text), text, surface)
    if found is None:
        return False
    return bool(terms & {stem(t.lower_) for t in found[1].subtree})


def about_the_start(text: str, surface: str, names: list[frozenset[str]]) -> bool:
    """Does the clause that holds ``surface`` speak of the entity the multi-hop question starts from:
    the name is an argument of that clause's verb or the noun the clause hangs on ("Meridian Tidal
    Power, *founded in 2006* …": 2006 is Meridian's, for a question about the cooperative)? Not so
    for "… built the Hollow Bay Tidal Project, whose *six* seabed turbines …" (the project's)."""
    found = _clause_of(_parse(text), text, surface)
    if found is None:
        return True  # unknown: the first-hop rule stands
    verb = found[1]
    near: list[Any] = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass", "dobj", "agent")]
    if verb.dep_ in ("acl", "relcl"):
        near.append(verb.head)
    said = frozenset(stem(t.lower_) for n in near for t in _np(n) if t.pos_ == "PROPN")
    return any(name and name <= said for name in names)


def states_the_bridge(text: str, names: list[frozenset[str]]) -> bool:
    """Does the sentence name the entity a multi-hop question starts from? Then it states the first hop,
    and its wanted-type mention is the bridge ("Jump for Glory … directed by Raoul Walsh" for "Who is
    the spouse of the director of Jump for Glory?"), not the answer."""
    if not names:
        return False
    said = sentence_stems(text)
    return any(name and name <= said for name in names)


def _own_verb(token: Any) -> Any:
    """The nearest verb above ``token`` (the clause it belongs to)."""
    head = token.head
    while head.pos_ not in ("VERB", "AUX") and head.head.i != head.i:
        head = head.head
    return head


def _sides(verb: Any) -> tuple[list[Any], list[Any]]:
    """(doer tokens, undergoer tokens) of one verb occurrence in a sentence."""
    children = list(verb.children)
    # "by X" may hang on a noun of the clause ("founded in the spring of 1887 by X"): any agent of this clause
    agent = [g for t in verb.subtree if t.dep_ == "agent" and _own_verb(t).i == verb.i
             for g in t.children if g.dep_ == "pobj"]
    passive_subject = [c for c in children if c.dep_ == "nsubjpass"]
    if verb.dep_ == "acl" and verb.tag_ == "VBN":  # "X, founded in 2006 by A": X undergoes, A does
        return [t for a in agent for t in a.subtree], _np(verb.head)
    if passive_subject or any(c.dep_ == "auxpass" for c in children):
        return [t for a in agent for t in a.subtree], [t for s in passive_subject for t in _np(s)]
    subjects = [c for c in children if c.dep_ in _SUBJECTS]
    anchor = verb
    while not subjects and anchor.dep_ == "conj":  # "X founded A and ran B": the first verb's subject
        anchor = anchor.head
        subjects = [c for c in anchor.children if c.dep_ in _SUBJECTS]
    doer: list[Any] = []
    for s in subjects:
        if s.tag_ in ("WP", "WDT") and verb.dep_ == "relcl":  # "Y, who succeeded X": Y does
            doer += _np(verb.head)
        else:
            doer += _np(s)
    undergoer = [t for c in children if c.dep_ == "dobj" for t in c.subtree]
    return doer, undergoer


def _span(tokens: list[Any]) -> list[tuple[int, int]]:
    return [(t.idx, t.idx + len(t.text)) for t in tokens]


def _inside(text: str, surface: str, spans: list[tuple[int, int]]) -> bool:
    at = text.lower().find(surface.lower())
    if at < 0:
        return False
    end = at + len(surface)
    return any(a < end and at < b for a, b in spans)


def _referred_inside(pick: Pick, surface: str, graph: Any, spans: list[tuple[int, int]]) -> bool:
    """Is ``surface`` the entity the sentence's opening refers to, unspelt, with those opening words ("the
    festival" in "Since 1985 the festival has been organised by the museum") in the asked-for side? Then the
    sentence states the relation about it as if it named it (``REFERRED``; the answer line names it first)."""
    key = pick.sentence.refers_to
    if not REFERRED or not key or surface.lower() in pick.sentence.text.lower():
        return False
    if display_name(key, as_graph_view(graph).attributes(key) if key in graph else {}) != surface:
        return False
    from core.answers.sentences import opening_reference

    where = opening_reference(pick.sentence.text)
    return where is not None and any(a < where[1] and where[0] < b for a, b in spans)


def _replacements(pick: Pick, frame: QuestionFrame, graph: Any) -> list[str]:
    """Mentions of the sentence with a wanted type of the first group that the question does not name."""
    group = frame.groups[0] if frame.groups else ()
    out = []
    for label, surface, key in pick.sentence.mentions:
        kind = str(as_graph_view(graph).attributes(key).get("type", "")) if key and key in graph else ""
        if (label in group or kind in group) and not frame.names_in_question(surface) \
                and not (key and key in frame.entity_keys):
            out.append(surface)
    return out


def _year_checked(pick: Pick, frame: QuestionFrame, graph: Any) -> list[str]:
    if not _YEAR_QUESTION.search(frame.text):
        return list(pick.typed)
    kept = [s for s in pick.typed if _YEAR.search(s)]
    if kept or not pick.typed:
        return kept
    return [s for s in _replacements(pick, frame, graph) if _YEAR.search(s)][:1]


def supported_surfaces(pick: Pick, frame: QuestionFrame, graph: Any, cache: Any = None) -> list[str]:
    """The surfaces of ``pick.typed`` the sentence supports as the answer (see the module docstring)."""
    typed = _year_checked(pick, frame, graph)
    if not typed:
        return []
    if isinstance(cache, QuestionState):  # the comparison's shared per-question state
        store: dict = answer_cache(cache).relations
        key: Any = frame.text
    else:
        store = cache if cache is not None else {}
        key = ("answer_relation", frame.text)
    if key not in store:
        store[key] = question_relation(frame.text)
    relation: Optional[Relation] = store[key]
    text = pick.sentence.text
    bridge_key = ("bridge_names", frame.text)
    if frame.multi_hop and bridge_key not in store:
        store[bridge_key] = (bridge_names(frame.text), bridge_types(frame.text), main_clause_terms(frame.text))
    # unless the question's verb is there to check, a sentence naming where a multi-hop question starts
    # states the first hop: what it names is the bridge, not the answer; unless the sentence states
    # the second hop too: the bridge cannot have the answer's type, the bold's clause is not about the
    # start entity and shares a word with the question's main clause ("whose six seabed turbines" in
    # the sentence naming Peter Okafor's company, for "How many turbines …")
    first_hop = frame.multi_hop and states_the_bridge(text, store[bridge_key][0]) and not (
        not may_be_the_bridge(frame, store[bridge_key][1])
        and not about_the_start(text, typed[0], store[bridge_key][0])
        and second_hop_clause(text, typed[0], store[bridge_key][2]))
    if relation is None:
        return [] if first_hop else typed
    doc = _parse(text)
    verbs = [t for t in doc if t.pos_ == "VERB" and relation.verb in (stem(t.lower_), stem(t.lemma_.lower()))]
    if not verbs:
        return [] if first_hop else typed  # else the sentence words the relation otherwise: the bold stands
    first, rest = typed[0], typed[1:]
    undetermined = False
    for verb in verbs:
        doer, undergoer = _sides(verb)
        answer_side, other_side = (doer, undergoer) if relation.role == "doer" else (undergoer, doer)
        if not answer_side:
            undetermined = True  # the parse does not show who fills that side here
            continue
        other_names = _names(other_side)
        if relation.other_names and other_names and not other_names & relation.other_names:
            continue  # this occurrence is about another entity ("Z was founded by A")
        spans = _span(answer_side)
        if _inside(text, first, spans) or _referred_inside(pick, first, graph, spans):
            return [first] + rest
        inside = [s for s in _replacements(pick, frame, graph) if _inside(text, s, spans)]
        if inside:
            return [inside[0]] + [s for s in rest if s != inside[0]]
    return typed if undetermined and not first_hop else []


def checked(pick: Optional[Pick], frame: QuestionFrame, graph: Any, cache: Any = None) -> Optional[Pick]:
    """``pick`` with only the short answer its sentence supports bolded (None stays None)."""
    if pick is None or not pick.typed:
        return pick
    return replace(pick, typed=supported_surfaces(pick, frame, graph, cache))


def _core_names(tokens: list[Any]) -> frozenset[str]:
    """Name stems of an argument itself: its proper nouns not inside a prepositional phrase (other than
    "of") or a clause hanging on it ("a sailing club *near the Velmora Marine Institute*" names a club)."""
    ids = {t.i for t in tokens}
    out: set[str] = set()
    for token in tokens:
        if token.pos_ != "PROPN":
            continue
        head, inside = token, True
        while head.head.i in ids and head.head.i != head.i:
            if (head.dep_ == "prep" and head.lower_ != "of") or head.dep_ in _CLAUSES:
                inside = False
                break
            head = head.head
        if inside:
            out.add(stem(token.lower_))
    return frozenset(out)


def parse_verified(pick: Pick, frame: QuestionFrame, graph: Any, cache: Any = None) -> list[str]:
    """The short answer the sentence states beyond doubt (``[]`` when not shown): the question has a
    "who/which … <verb> <name>" relation whose other side is named, the sentence holds that verb with the
    question's name on the other side, and a wanted-type mention of the sentence lies in the asked-for
    side ("The Velmora Marine Institute was founded in 1921 by **Agnes Marlowe**" for "Who founded the
    Velmora Marine Institute?"). The strong evidence ``claim.claimed`` may bold even when the sentence
    does not lead the others by a clear margin."""
    if not pick.typed and not pick.sentence.mentions:
        return []
    relation: Optional[Relation] = parsed_once(cache, "verified_relation", frame.text, question_relation)
    if relation is None or not relation.other_names:
        return []
    text = pick.sentence.text
    typed = _year_checked(pick, frame, graph) if pick.typed else []
    wanted = list(dict.fromkeys(typed + _replacements(pick, frame, graph)))
    if not wanted:
        return []
    for verb in (t for t in _parse(text) if t.pos_ == "VERB"
                 and relation.verb in (stem(t.lower_), stem(t.lemma_.lower()))):
        doer, undergoer = _sides(verb)
        answer_side, other_side = (doer, undergoer) if relation.role == "doer" else (undergoer, doer)
        if not answer_side or not relation.other_names <= _core_names(other_side):
            continue  # the other side must name the question's subject itself, not something near it
        spans = _span(answer_side)
        inside = [s for s in wanted if _inside(text, s, spans)]
        if _YEAR_QUESTION.search(frame.text):
            inside = [s for s in inside if _YEAR.search(s)]
        if inside:
            return inside[:1]
    return []
