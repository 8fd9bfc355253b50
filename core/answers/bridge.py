"""A short answer through the last hop's bridge: the mode's evidence resolved the first hop, and a
sentence keys the answer to the entity it resolved to.

A multi-hop question starts from an entity its describing clause names ("the country where *the
village of Clonbrook* is located"). A sentence of the mode's own evidence that names that start
entity states the first hop, and the other entities it names (of the type the clause asks for, when
the clause says one: "the *country* where …" → GPE) are where the chain goes next: the bridges
(``hop_bridges``). A second sentence that does not name the start entity but names one bridge with a
mention of the asked-for type right after it — nothing named in between, at most ``MAX_GAP``
characters apart — keys the answer to that bridge, as a table row or a list does ("… Guyana
**1 August 1973** …", "North Carolina (**35**)", "followed by Thessaloniki, which handled
**273,282** TEUs"). Such a sentence is the one quoted first, with that span bolded
(``keyed``), when the scorer's best sentence cannot carry a bold.

Checks kept from ``claim``: the sentence holds at least half of the question's own words for its
answer (``WORD_SHARE``; the question's verb is not required: a table row has none), and
exactly one bridge gives a span (two bridges keyed to two spans do not say which chain is the right
one). A bridge taken from a list sentence (more than two mentions of one label)
is not a resolved hop and is not used (``LIST_LIMIT``; an address "Wilmington, Delaware, United States" counts once, as its first place). A question without a describing clause, or whose start entity
no evidence sentence names, has no bridge: nothing changes.

The same bridges reorder the answer (``second_hop``): when the scorer's best sentence only states the
first hop (it names the start entity: "KVLM … broadcasting in Wilmington, Delaware") and carries no
bold, the best sentence within ``HOP_WINDOW`` that names a bridge and not the start entity is quoted
first ("Wilmington International Airport is … north of Wilmington"); it is bolded only by the claim
checks, its lead counted over the sentences that do not state the first hop (``claim``).

Bridges are no rival answers (``beside_bridges``): a sentence refused as a list only because it repeats the
entities the mode's other evidence reached one hop from the question ("The Representative of the *Falkland
Islands* in *London* is … in the **United Kingdom**") is bolded on the one mention of the asked-for type left.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Optional, Sequence

from core.answers.cache import parsed_once
from core.answers.question import QuestionFrame
from core.answers.scoring import Pick
from core.storage.graph_view import as_graph_view

MAX_GAP = 40  # characters between the bridge's mention and the keyed span
KEYED_WINDOW = 2.5  # a keyed sentence this close to the scorer's best may be quoted first
KEYED_TRIES = 12  # at most this many candidate sentences are read for a keyed span
HOP_WINDOW = 2.0  # a next-hop sentence this close to a best sentence stating only the first hop is quoted first
LIST_LIMIT = 2  # a sentence naming more mentions of one label than this is a list (as ``claim.MAX_CANDIDATES``)
WORD_SHARE = 0.5  # share of the question's own words the keyed sentence holds (as ``claim.MAIN_CLAUSE_SHARE``)


def _start(frame: QuestionFrame, cache: Any) -> tuple[list[frozenset[str]], Optional[frozenset[str]]]:
    from core.answers.support import bridge_names, bridge_types

    return parsed_once(cache, "hop_start", frame.text, lambda q: (bridge_names(q), bridge_types(q)))


def _states_start(pick: Pick, names: list[frozenset[str]]) -> bool:
    """Does the sentence name the entity the question starts from (``support.states_the_bridge`` on the
    stems the sentence record already holds)?"""
    stems = pick.sentence.stems
    return any(name and name <= stems for name in names)


def _kind(graph: Any, key: str) -> str:
    return str(graph.attributes(key).get("type", "")) if key and key in graph else ""


def _runs(pick: Pick, frame: QuestionFrame) -> list[list[tuple[str, str, str]]]:
    """The sentence's mentions not named by the question, in text order, grouped into runs joined only
    by a comma ("Wilmington, Delaware, United States" is one address: one run, its first mention the
    most specific place)."""
    text = pick.sentence.text
    lowered = text.lower()
    placed: list[tuple[int, int, tuple[str, str, str]]] = []
    start = 0
    for mention in pick.sentence.mentions:
        at = lowered.find(mention[1].lower(), start)
        if at < 0:
            continue
        start = at + len(mention[1])
        if (mention[2] and mention[2] in frame.entity_keys) or frame.names_in_question(mention[1]):
            continue
        placed.append((at, start, mention))
    runs: list[list[tuple[str, str, str]]] = []
    end = -1
    for at, stop, mention in placed:
        if runs and text[end:at].strip() == "," and mention[0] == runs[-1][-1][0]:
            runs[-1].append(mention)
        else:
            runs.append([mention])
        end = stop
    return runs


def hop_bridges(candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any = None) -> set[str]:
    """Entities the mode's evidence reached in one hop from where the question starts: named by a
    candidate sentence that names the start entity (not a list), of the describing clause's type."""
    if not frame.multi_hop:
        return set()
    graph = as_graph_view(graph)
    names, kinds = _start(frame, cache)
    if not names:
        return set()
    found: set[str] = set()
    seen: set[str] = set()
    for pick in candidates:
        text = pick.sentence.text
        if text in seen:
            continue
        seen.add(text)
        if not _states_start(pick, names):
            continue
        runs = _runs(pick, frame)
        for run in runs:
            label, _, key = run[0]  # an address's most specific place
            if not key:
                continue
            if kinds is not None and label not in kinds and _kind(graph, key) not in kinds:
                continue
            if sum(1 for other in runs if other[0][0] == label) > LIST_LIMIT:
                continue  # a list of places, people, …: no hop resolved
            found.add(key)
    return found


def _names_one(pick: Pick, bridges: set[str], graph: Any) -> bool:
    if pick.sentence.keys & bridges:
        return True
    lowered = pick.sentence.text.lower()
    return any((graph.name(k) if k in graph else k).lower() in lowered for k in bridges)


def _wanted(frame: QuestionFrame, graph: Any, label: str, key: str) -> bool:
    group = frame.groups[0] if frame.groups else ()
    return label in group or _kind(graph, key) in group


_PLACE_WORDS = ("Town|City|Village|County|Street|Road|Square|Park|Hill|Bridge|Lane|Island|Islands|River|Lake|Bay|"
                "Harbour|Harbor|Abbey|Castle|Hall|Church|Cathedral")
_PLACE_AFTER = re.compile(rf" (?:{_PLACE_WORDS})(?!\w)")


def completed(pick: Pick) -> Pick:
    """The bold's spans completed where the tagger cut them: a place with the capitalised place word right
    after it ("**Camden** Town" → "Camden Town"), a date with its year or its day and month (``whole_date``)."""
    text = pick.sentence.text
    labels = {surface: label for label, surface, _ in pick.sentence.mentions}
    spans = []
    for surface in pick.typed:
        at = text.find(surface)
        label = labels.get(surface, "")
        if at >= 0 and label == "DATE":
            surface = whole_date(text, at, surface)
        elif at >= 0 and label in ("GPE", "LOC", "FAC"):
            after = _PLACE_AFTER.match(text, at + len(surface))
            surface = text[at:after.end()] if after else surface
        spans.append(surface)
    return replace(pick, typed=spans) if spans != pick.typed else pick


def unmerged(placed: list[Any], start: int, end: int, bridges: set[str]) -> list[Any]:
    """``placed`` (mentions as (start, end, label, surface, key)) without a mention that opens with the
    bridge's name spelled at ``start``..``end`` and runs on into the row ("Guyana 1 August" in "Guyana 1 August
    1973"): the tagger merged the two, and the bridge ends where its name ends."""
    return [p for p in placed if not (p[0] == start and p[1] > end and p[4] not in bridges)]


def keyed_span(pick: Pick, bridges: set[str], frame: QuestionFrame, graph: Any) -> list[str]:
    """The mention of the asked-for type right after the one bridge the sentence names with one
    (``[]`` when none, or when two bridges key two spans)."""
    graph = as_graph_view(graph)
    text = pick.sentence.text
    lowered = text.lower()
    placed = []
    for label, surface, key in pick.sentence.mentions:
        at = lowered.find(surface.lower())
        if at >= 0:
            placed.append((at, at + len(surface), label, surface, key))
    for key in bridges:  # a bridge the sentence spells without its mention (a table row the tagger missed)
        name = graph.name(key) if key in graph else key
        for match in re.finditer(rf"(?<!\w){re.escape(name.lower())}(?!\w)", lowered) if name else ():
            placed = unmerged(placed, match.start(), match.end(), bridges)
            if not any(a < match.end() and match.start() < b for a, b, *_ in placed):
                placed.append((match.start(), match.end(), _kind(graph, key), name, key))
    placed.sort()
    spans: set[str] = set()
    for i, (_, end, bridge_label, _, key) in enumerate(placed):
        if key not in bridges:
            continue
        following = [p for p in placed[i + 1:] if p[0] >= end]
        if not following:
            continue
        at, _, label, surface, other = following[0]
        if at - end > MAX_GAP or other in bridges or other in frame.entity_keys:
            continue
        if label == bridge_label or (other and _kind(graph, other) == _kind(graph, key)):
            continue  # "Montana, United States": an address, the place the bridge lies in, not a keyed value
        if _wanted(frame, graph, label, other) and not frame.names_in_question(surface):
            spans.add(whole_date(text, at, surface) if label == "DATE" else surface)
    return sorted(spans) if len(spans) == 1 else []


_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
          r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_DAY_MONTH_BEFORE = re.compile(rf"(?:\d{{1,2}} {_MONTH}|{_MONTH} \d{{1,2}},?) $")
_YEAR_AFTER = re.compile(r"[ ,]+(\d{3,4})(?!\d)")


def whole_date(text: str, at: int, surface: str) -> str:
    """A date span completed with what the tagger left of it in a neighbouring mention: the day and month
    just before a bare year ("Guyana 1 August **1973**" → "1 August 1973"), the year just after a day and
    month ("**1 August** 1973"); the span itself otherwise."""
    start, end = at, at + len(surface)
    if re.fullmatch(r"\d{3,4}", surface):
        before = _DAY_MONTH_BEFORE.search(text, 0, at)
        start = before.start() if before else start
    elif not re.search(r"\d{3,4}", surface):
        year = _YEAR_AFTER.match(text, end)
        end = year.end() if year else end
    return text[start:end]


def keyed(best: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any = None,
          terms: frozenset[str] = frozenset()) -> Optional[Pick]:
    """The best candidate within ``KEYED_WINDOW`` of ``best`` whose sentence keys a span to a hop
    bridge and holds at least ``WORD_SHARE`` of ``terms`` (the question's own words for its answer,
    ``claim.QuestionClaim.main_terms``), bolded; or None (see the module docstring)."""
    if not frame.multi_hop or not frame.groups:
        return None
    graph = as_graph_view(graph)
    bridges = hop_bridges(candidates, frame, graph, cache)
    if not bridges:
        return None
    names, _ = _start(frame, cache)
    seen: set[str] = set()
    for pick in sorted(candidates, key=lambda c: -c.score):
        if pick.score < best.score - KEYED_WINDOW or len(seen) >= KEYED_TRIES:
            break
        if pick.sentence.text in seen:
            continue
        seen.add(pick.sentence.text)
        if not _names_one(pick, bridges, graph) or _states_start(pick, names):
            continue
        if terms and len(terms & pick.sentence.stems) < WORD_SHARE * len(terms):
            continue
        span = keyed_span(pick, bridges, frame, graph)
        if span:
            return replace(pick, typed=span)
    return None


def second_hop(best: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any,
               cache: Any = None) -> Optional[Pick]:
    """When ``best`` only states the first hop (it names the start entity), the best candidate within
    ``HOP_WINDOW`` of it that names a hop bridge and not the start entity: the next hop, where the
    answer is ("Wilmington International Airport is … north of Wilmington" after "WILM … broadcasting in
    Wilmington"); None otherwise."""
    if not frame.multi_hop:
        return None
    names, _ = _start(frame, cache)
    if not names or not _states_start(best, names):
        return None
    graph = as_graph_view(graph)
    bridges = hop_bridges(candidates, frame, graph, cache)
    if not bridges:
        return None
    for pick in sorted(candidates, key=lambda c: -c.score):
        if pick.score < best.score - HOP_WINDOW:
            break
        if _states_start(pick, names) or not _names_one(pick, bridges, graph):
            continue
        return pick
    return None


def rivals(pick: Pick, frame: QuestionFrame, bridges: frozenset[str] = frozenset()) -> dict[str, set[str]]:
    """Per label, the mentions of the asked-for type in the sentence that the question does not name (nor
    links), nor the evidence reached as a bridge (``bridges``): the first label of the first wanted group
    (who → PERSON: the organisation a sentence also names is no rival name), and the bold's own label
    ("such as A Hotels, B Hotels and C" for a hotel: ORG rivals)."""
    wanted = set(frame.groups[0][:1] if frame.groups else ())
    wanted |= {label for label, surface, _ in pick.sentence.mentions if pick.typed and surface == pick.typed[0]}
    counts: dict[str, set[str]] = {}
    for label, surface, key in pick.sentence.mentions:
        if label in wanted and not frame.names_in_question(surface) and not (key and key in frame.entity_keys) \
                and not (key and key in bridges):
            counts.setdefault(label, set()).add(surface.lower())
    return counts


def _bridges_beside(pick: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any
                    ) -> frozenset[str]:
    """Entities the mode's *other* evidence sentences reach one hop from the question (``grounding.
    hop_neighbours``): for a multi-hop question, the bridges its answer's sentence may repeat."""
    from core.answers.grounding import _alias_memo, _name_stems, hop_neighbours

    if not frame.multi_hop:
        return frozenset()
    names = parsed_once(cache, "grounding_names", frame.text, _name_stems)
    others = [c for c in candidates if c.sentence.text != pick.sentence.text]
    return frozenset(hop_neighbours(others, frame, names, as_graph_view(graph), _alias_memo(cache)))


def beside_bridges(pick: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any = None
                   ) -> tuple[Optional[Pick], frozenset[str]]:
    """A sentence refused as a list only because it repeats the question's bridges ("The Representative of
    the *Falkland Islands* in *London* is … in the **United Kingdom**" for the country of the
    representative of Mount Sulivan's country in the conference's city): with the bridges the evidence
    reached left out, one mention of the asked-for type is left — the sentence with that span, and the
    bridges (``claim`` then asks its checks 1 and 2 with them left out); (None, bridges) otherwise."""
    bridges = _bridges_beside(pick, candidates, frame, graph, cache)
    if not bridges:
        return None, bridges
    found = rivals(pick, frame, bridges)
    wanted = frame.groups[0][0] if frame.groups else ""
    left = found.get(wanted, set())
    if len(left) != 1 or any(len(names) > 1 for names in found.values()):
        return None, bridges
    (surface,) = left
    span = next(s for label, s, _ in pick.sentence.mentions if label == wanted and s.lower() == surface)
    return replace(pick, typed=[span]), bridges
