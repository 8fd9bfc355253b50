"""The last checks before a bold is shown: is the quoted sentence about the question at all, does it
state what the question asks *when/where/how* about, and is the span the kind of thing asked for?

``claim`` decides which sentence is quoted first and which span its parse or role check supports.
Every wrong bold left on both MuSiQue dev sets after those checks fell into one of three categories,
each a gate here (``docs/offline-answers.md`` has the counts):

1. **Not about the question (ungrounded).** The sentence shares the question's words but speaks of
   something else: "In the Championship game **Uceda** scored the first goal …" (the Spirit's, for
   "… for Peter Bonetti's team?"), "Its main base is **Jacksons International Airport**" (an airline's,
   for the birthplace of a director). A sentence is *grounded* when it, or its document's title (the
   title names the passage's subject), names one of the question's names or linked entities, or an
   entity the mode's own evidence links to one: named by a candidate sentence that names a question
   entity (the bridge of a multi-hop question, one hop out), or by a candidate sentence naming such a
   bridge (``HOPS`` = 2: "the university where the chief executive of Meridian Tidal Power studied"). A question with no names and no linked
   entities has nothing to check against, and its bold stands. A short name counts as the longer entity
   of the same type its chunk names ("Ruth" → Ruth Harland: ``aliases``).
2. **The asked verb is not stated.** "… another sport that was started *when*?": a *when*, *where* or
   "what year" wh-word hangs on a verb (not *be*, *have* or *do*); a sentence without that verb
   ("David Jones (**1881- 21 January 1933**) was a … footballer") gives a date or place of something
   else. Only the interrogative wh-word counts, not a relative one ("the state *where* X died"); for
   "who/what/how many" the relation's own checks in ``claim`` and ``support`` apply (their answers are
   stated with other verbs: "How many turbines *make up* …" by "whose **six** turbines").
3. **A count of something else.** A cardinal number followed by the plural noun it counts, a noun naming
   a kind of entity ("out of **207** countries": places; not a unit, "48 million euros", nor a
   duration, "19 years"), answers "how many countries", not a question whose own words ("debt load")
   do not hold that noun.

Each gate only removes a bold; the sentence is still quoted first, and the answer's note says why.
"""
from __future__ import annotations

import re
from typing import Any, Optional, Sequence

from core.answers.aliases import with_aliases
from core.answers.cache import parsed_once
from core.answers.question import STOP, QuestionFrame, noun_types, said_stems, sentence_stems, stem
from core.answers.scoring import Pick
from core.storage.graph_view import as_graph_view

NOTE_UNGROUNDED = ("No short answer is bolded: the quoted sentence names neither the question's subject nor an "
                   "entity the evidence links to it.")
NOTE_VERB = "No short answer is bolded: the quoted sentence does not state what the question asks when, where or how."
NOTE_COUNT = "No short answer is bolded: the number in the quoted sentence counts something the question does not ask."
NOTE_INNER = ("No short answer is bolded: the quoted sentence says this of an entity the question names only to "
              "identify what it asks about.")

HOPS = 2  # how far out from the question's entities, through the mode's evidence sentences, a grounding entity may lie
_WH = frozenset("who whom whose what which when where how".split())
_LIGHT_VERBS = frozenset({"be", "have", "do", "become"})  # "become": its complement ("a member") is the relation
_AFTER = re.compile(r"\s+([^\W\d_]+)", re.UNICODE)


def _title_stems(pick: Pick) -> frozenset[str]:
    title = pick.sentence.doc or pick.sentence.cite.rsplit(", ", 1)[0]
    return sentence_stems(title.replace("_", " "))


def _name_stems(question: str) -> list[frozenset[str]]:
    from core.extraction.query_terms import name_spans

    found = [sentence_stems(name) for name in name_spans(question)]
    return [name for name in found if name]


def _keys(pick: Pick, graph: Any = None, memo: Optional[dict] = None) -> frozenset[str]:
    """The entities the sentence names, each short name also read as the longer entity of its chunk it
    stands for ("Ruth" → Ruth Harland: ``aliases.stands_for``); the sentence's own keys without a graph."""
    if graph is None:
        return pick.sentence.keys
    return with_aliases(pick.sentence.keys, pick.sentence.chunk_id, graph, pick.sentence.text, memo)


def _alias_memo(cache: Any) -> dict:
    return parsed_once(cache, "alias_memo", "", lambda _: {})


def _names(pick: Pick, names: list[frozenset[str]], entity_keys: frozenset[str], graph: Any = None,
           memo: Optional[dict] = None) -> bool:
    said = pick.sentence.stems | _title_stems(pick)
    return bool(_keys(pick, graph, memo) & entity_keys) or any(name <= said for name in names)


def hop_neighbours(candidates: Sequence[Pick], frame: QuestionFrame, names: list[frozenset[str]], graph: Any = None,
                   memo: Optional[dict] = None) -> set[str]:
    """Entities one hop out from the question in the mode's own evidence: named by a candidate sentence
    that names (itself or through its document's title) a question name or linked entity (with a graph,
    a short name also counts as the longer entity it stands for in its chunk: ``aliases``)."""
    found: set[str] = set()
    seen: set[str] = set()
    for pick in candidates:
        if pick.sentence.text in seen:
            continue
        seen.add(pick.sentence.text)
        if _names(pick, names, frame.entity_keys, graph, memo):
            found |= _keys(pick, graph, memo)
    return found - frame.entity_keys


def _next_hop(candidates: Sequence[Pick], reached: set[str], graph: Any = None, memo: Optional[dict] = None
              ) -> set[str]:
    """Entities named by a candidate sentence that names one of ``reached``."""
    out: set[str] = set()
    for pick in candidates:
        keys = _keys(pick, graph, memo)
        if keys & reached:
            out |= keys
    return out


def _reached(candidates: Sequence[Pick], frame: QuestionFrame, names: list[frozenset[str]], graph: Any,
             memo: dict) -> set[str]:
    """Entities within ``HOPS`` of the question in the candidates' sentences, kept in ``memo`` per set of
    candidate sentences (``claim.promoted`` asks it of each lower sentence of one answer)."""
    spot = ("reached", frame.text, tuple((c.sentence.chunk_id, c.sentence.text) for c in candidates))
    if spot not in memo:
        neighbours = hop_neighbours(candidates, frame, names, graph, memo)
        for _ in range(HOPS - 1):
            neighbours |= _next_hop(candidates, neighbours, graph, memo) - frame.entity_keys
        memo[spot] = neighbours
    return memo[spot]


def grounded(pick: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any = None) -> bool:
    """Does the sentence (or its document's title) name the question's subject, one of its linked
    entities, or an entity one hop out in the mode's evidence? True when the question names nothing."""
    names: list[frozenset[str]] = parsed_once(cache, "grounding_names", frame.text, _name_stems)
    if not names and not frame.entity_keys:
        return True
    graph = as_graph_view(graph)
    memo = _alias_memo(cache)
    if _names(pick, names, frame.entity_keys, graph, memo):
        return True
    neighbours = _reached(candidates, frame, names, graph, memo)
    if _keys(pick, graph, memo) & neighbours:
        return True
    title = _title_stems(pick)
    for key in neighbours:
        name = sentence_stems(graph.name(key) if key in graph else key)
        if name and name <= title:
            return True
    return spells_one(pick.sentence.text, neighbours, graph)


def spells_one(text: str, keys: set[str], graph: Any) -> bool:
    """Does the sentence spell one of ``keys``' names as a capitalised whole word (at least four letters),
    where the tagger merged it into a longer mention ("Guyana 1 August" in a table row)?"""
    graph = as_graph_view(graph)
    for key in keys:
        name = graph.name(key) if key in graph else key
        if len(name) >= 4 and name[:1].isupper() and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text):
            return True
    return False


def _asks_time_or_place(token: Any) -> bool:
    """Is the wh-phrase "when", "where", or "what/which <a time noun>" ("In what *year* did …")?"""
    if token.lower_ in ("when", "where"):
        return True
    kinds = noun_types(token.head.lower_) if token.dep_ == "det" else None
    return bool(kinds and "DATE" in kinds)


_IRREGULAR_NOUNS = {"die": ("death",), "bear": ("birth",), "marry": ("marriage",), "sell": ("sale",),
                    "choose": ("choice",), "fly": ("flight",), "lose": ("loss",), "grow": ("growth",)}
_ENDING_SWAPS = (("ade", "asion"), ("ide", "ision"), ("ude", "usion"), ("ize", "ization"), ("ise", "isation"),
                 ("y", "ication"), ("y", "iage"), ("y", "ation"), ("e", "ion"), ("e", "ation"), ("e", "ance"),
                 ("e", "ence"))
_NOUN_ENDINGS = ("ment", "ion", "ation", "al", "ance", "ence", "ing", "age")


def verb_nouns(lemma: str) -> frozenset[str]:
    """The nouns a verb is stated by ("invade" → invasion, "found" → foundation, "establish" →
    establishment, "die" → death), as whole lower-case words: "the Soviet *invasion* of Manchuria on **8 August
    1945**" states when the Soviet Union invaded. Built by regular English endings, no stem guessing, so
    "start" never meets "starvation"."""
    lemma = (lemma or "").lower()
    if len(lemma) < 3 or not lemma.isalpha() or lemma in _LIGHT_VERBS:
        return frozenset()
    if lemma in _IRREGULAR_NOUNS:
        return frozenset(_IRREGULAR_NOUNS[lemma])
    out: set[str] = set()
    for ending, noun in _ENDING_SWAPS:
        if lemma.endswith(ending):
            out.add(lemma[: -len(ending)] + noun)
    if not lemma.endswith("e"):
        out |= {lemma + ending for ending in _NOUN_ENDINGS}
        if len(lemma) > 3 and lemma[-1] not in "aeiouwxy" and lemma[-2] in "aeiou" and lemma[-3] not in "aeiou":
            out.add(lemma + lemma[-1] + "ing")  # "begin" → "beginning"
    return frozenset(out)


def states_verb_noun(text: str, lemma: str) -> bool:
    """Does the sentence hold a noun of the verb ``lemma`` (``verb_nouns``; a plural too)?"""
    nouns = verb_nouns(lemma)
    words = {w.lower() for w in re.findall(r"[^\W\d_]+", text or "")}
    return bool(nouns) and any(w in nouns or (w.endswith("s") and w[:-1] in nouns) for w in words)


def _asked_head(question: str) -> Any:
    """The verb token the question's interrogative *when/where/what year* hangs on (None: see ``asked_verb``)."""
    from core.answers.question import _interrogative
    from core.extraction.query_terms import parse_question

    if not (question or "").strip():
        return None
    doc = parse_question(question)
    tokens = [t for t in doc if t.is_alpha]
    words = [t.lower_ for t in tokens]
    for i, token in enumerate(tokens):
        if token.lower_ not in _WH or not _interrogative(words, i):
            continue
        if not _asks_time_or_place(token):
            return None  # "who/what/how many …": the relation's own checks (``claim``, ``support``) hold
        head = token
        while head.pos_ != "VERB" and head.head.i != head.i:
            head = head.head
        if head.pos_ != "VERB" or head.lemma_.lower() in _LIGHT_VERBS:
            return None
        return head
    return None


def asked_verb(question: str) -> Optional[tuple[str, str]]:
    """(stem of the word, stem of its lemma) of the verb the question's interrogative *when/where/what
    year* hangs on ("… that was *started* when?", "When did the university *receive* its charter?");
    None for other wh-words, a light verb (be, have, do) or no verb above it in the parse."""
    head = _asked_head(question)
    return None if head is None else (stem(head.lower_), stem(head.lemma_.lower()))


def _asked_lemma(question: str) -> str:
    head = _asked_head(question)
    return "" if head is None else head.lemma_.lower()


def states_asked_verb(pick: Pick, frame: QuestionFrame, cache: Any = None) -> bool:
    """Does the sentence hold the verb the question's wh-word asks about, or a noun of it ("the Soviet
    *invasion* of Manchuria" for "When did … invade Manchuria?")? True when there is none."""
    verb: Optional[tuple[str, str]] = parsed_once(cache, "asked_verb", frame.text, asked_verb)
    if verb is None or set(verb) & said_stems(pick.sentence.text, pick.sentence.stems):
        return True
    return states_verb_noun(pick.sentence.text, parsed_once(cache, "asked_lemma", frame.text, _asked_lemma))


def counts_another_thing(pick: Pick, frame: QuestionFrame, main_terms: frozenset[str]) -> bool:
    """Is a bolded cardinal followed by a plural noun ("**207** countries") that the question's own
    words for its answer (``main_terms``) do not hold? Then it counts something else."""
    text = pick.sentence.text
    lowered = text.lower()
    cardinals = {surface for label, surface, _ in pick.sentence.mentions if label == "CARDINAL"}
    for surface in pick.typed:
        if surface not in cardinals:
            continue
        at = lowered.find(surface.lower())
        following = _AFTER.match(text, at + len(surface)) if at >= 0 else None
        if following is None:
            continue
        noun = following.group(1)
        kinds = noun_types(noun) if noun.islower() and noun.endswith("s") and noun not in STOP else None
        if kinds and "DATE" not in kinds and stem(noun) not in main_terms and stem(noun) not in frame.focus:
            return True
    return False


def inner_names(question: str) -> list[frozenset[str]]:
    """Stems of the names the question holds only inside a relative clause ("the organisation *whose
    former warehouse … houses the Velmora Maritime Museum*"): they identify the bridge the question asks
    about, so the question's relation is not asked of them."""
    from core.extraction.query_terms import name_spans, parse_question

    if not (question or "").strip():
        return []
    doc = parse_question(question)
    spans = [(t.left_edge.idx, t.right_edge.idx + len(t.right_edge)) for t in doc if t.dep_ == "relcl"]
    if not spans:
        return []
    out = []
    for name in name_spans(question):
        places = [m.start() for m in re.finditer(re.escape(name), question)]
        if places and all(any(a <= at < b for a, b in spans) for at in places):
            stems = sentence_stems(name)
            if stems:
                out.append(stems)
    return out


def _subject_stems(pick: Pick, graph: Any) -> frozenset[str]:
    """Stems of the entity the sentence is about: the one its opening "the museum" / pronoun refers to,
    else a name it opens with ("Daniel Harland, the last resident keeper, …")."""
    sentence = pick.sentence
    if sentence.refers_to:
        graph = as_graph_view(graph)
        key = sentence.refers_to
        return sentence_stems(graph.name(key) if key in graph else key)
    for _, surface, _ in sentence.mentions:
        if surface and sentence.text.startswith(surface):
            return sentence_stems(surface)
    return frozenset()


def about_inner_entity(pick: Pick, frame: QuestionFrame, graph: Any, cache: Any = None) -> bool:
    """Does the sentence state the question's relation (a focus term) of an entity the question names
    only inside a relative clause? "The museum's **founding** director was Helen Castellan" answers who
    founded the museum, not "Who founded the organisation whose … houses the museum?"."""
    if not frame.multi_hop or not (frame.focus & pick.sentence.stems):
        return False
    inner: list[frozenset[str]] = parsed_once(cache, "inner_names", frame.text, inner_names)
    subject = _subject_stems(pick, graph) if inner else frozenset()
    return bool(subject) and any(subject <= name or name <= subject for name in inner)


def reaches_owner(pick: Pick, candidates: Sequence[Pick], owners: Sequence[frozenset[str]], graph: Any,
                  memo: Optional[dict] = None) -> bool:
    """Does the sentence (or its title) name an owner of the question's relation noun ("Meehan Bonnar" of
    "the birthplace of Meehan Bonnar") or an entity the mode's evidence links to one within ``HOPS``
    (Fredericton, named with him)? The question does not repeat that relation in the answer's sentence
    (``claim.hop_owners``), so a sentence about another diocese must not pass on the word "Diocese"."""
    if not owners:
        return True
    said = pick.sentence.stems | _title_stems(pick)
    if any(owner <= said for owner in owners):
        return True
    graph = as_graph_view(graph)
    reached: set[str] = set()
    for other in candidates:
        if any(owner <= other.sentence.stems | _title_stems(other) for owner in owners):
            reached |= _keys(other, graph, memo)
    for _ in range(HOPS - 1):
        reached |= _next_hop(candidates, reached, graph, memo)
    if _keys(pick, graph, memo) & reached:
        return True
    title = _title_stems(pick)
    return any(name and name <= title for name in
               (sentence_stems(graph.name(key) if key in graph else key) for key in reached))


def about_question(pick: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any = None,
                   owners: Sequence[frozenset[str]] = ()) -> bool:
    """The gates of ``stand_behind`` that do not read the span (grounded, reaches the owner): a sentence
    failing them would lose any bold, so ``claim.promoted`` spends no parse on it."""
    return grounded(pick, candidates, frame, graph, cache) and reaches_owner(pick, candidates, owners, graph,
                                                                             _alias_memo(cache))


def stand_behind(pick: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any,
                 main_terms: frozenset[str], cache: Any = None, owners: Sequence[frozenset[str]] = ()) -> str:
    """Why the bolded ``pick`` must lose its bold ("" when it may keep it): the gates of the module
    docstring, in order."""
    if not pick.typed:
        return ""
    if not about_question(pick, candidates, frame, graph, cache, owners):
        return NOTE_UNGROUNDED
    if not states_asked_verb(pick, frame, cache):
        return NOTE_VERB
    if counts_another_thing(pick, frame, main_terms):
        return NOTE_COUNT
    if about_inner_entity(pick, frame, graph, cache):
        return NOTE_INNER
    return ""
