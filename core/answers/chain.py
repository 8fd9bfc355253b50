"""The next hop as an evidence line: a sentence about an entity the question's first hop leads to.

A multi-hop question composes hops ("Who is the spouse of the director of Jump for Glory?"): the best
sentences often state the first hop ("Jump for Glory is a 1937 film directed by Raoul Walsh …"), and
the answer sits in a sentence about the entity that hop leads to (the bridge, Raoul Walsh), which the
question does not name. The mode's evidence lines are ordered by score, and the best-scoring ones
mostly restate the first hop's neighbourhood, so the next hop's sentence often ranks far below the
three lines shown, or sits in a context chunk the builder does not read.

``chained`` puts the best next-hop sentence first among the evidence lines. The bridges are the
entities named (or referred to by an opening pronoun) by the best candidate naming a question entity
(the first hop; often the first line itself), except question entities and nationalities, dates and
numbers (``NOT_BRIDGES``). A next-hop sentence

* names a bridge and no question entity (it says something about the bridge, not the first hop again);
* sits in another chunk than the first line;
* holds a mention of the question's wanted answer type other than the bridge itself;

read from the mode's candidates and evidence lines (sentences already scored: no parse, no embedding),
ranked by score. It is inserted before the other evidence lines unless the last line it would push out
of the answer scores more than ``DISPLACE_MARGIN`` above it (a strong line stays). Nothing else moves:
the first line, its bold and the other evidence lines keep their order. ``CHAIN_LINES = 0`` turns it off.

Preferred to that next-hop sentence, when there is one: a sentence saying **the last hop's relation about a
bridge** (``relation_lines``; ``RELATION_LINE = False`` turns it off). The relation's words come from the
question's parse (``hop_relation.last_relation``: "spouse" with married/wife/husband …, "currency",
"invade"/"invasion", "where" → located/situated …); the bridges are what any sentence naming a question
entity the chain starts from (``hop_relation.start_names``: not the last hop's own object) leads to, and a
name made of the last words of a bridge's name counts ("the Lake District" for the English Lake District).
The sentence names a bridge and no question entity (linked or spelt), is no list (more than ``LIST_LIMIT``
mentions of one label), sits in another chunk than the first line and names something of the wanted type
other than a bridge; the same ``DISPLACE_MARGIN`` applies, and the next-hop sentence is looked for when it
fails. When the first hop is a person's role noun owning a name ("the founding *director* of the Centre …"),
the bridges are only whom the sentences about that owner say holds the role (``role_bridge.holders``;
``ROLE_HOLDERS = False``: the entities of the first hop's sentence), not any other entity that sentence
names ("Carrow Sound" in "Its founding director is Peter Okafor, whose measurements of … Carrow Sound …").

A question asking one relation of the entity it names ("Where is the terminus of the Velmora Coastal
Railway?", ``one_hop.single_relation``) has no bridge to follow: it gets no next-hop line
(``ONE_HOP_NO_CHAIN = False``: looked for as for any question).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Optional

from core.answers.hop_relation import first_role, last_relation, says_relation, start_names
from core.answers.layout import Entry, sentence_entry
from core.answers.one_hop import single_relation
from core.answers.scoring import Pick

if TYPE_CHECKING:
    from core.answers.inputs import AnswerInputs

CHAIN_LINES = 1  # next-hop sentences put first among the evidence lines (0: the mode's order alone)
DISPLACE_MARGIN = 1.0  # the line it pushes out keeps its place when it scores more than this above it
ONE_HOP_NO_CHAIN = True  # no next-hop line when the question asks one relation of a name (one_hop); False: always
RELATION_LINE = True  # prefer a sentence saying the last hop's relation about a bridge (hop_relation); False: off
ROLE_HOLDERS = True  # a first hop named by a role noun ("the director of X") leads only to its holders; False: off
HOLDER_LINE = True  # the sentence saying who holds the first hop's role, first when the first line names that holder
LIST_LIMIT = 2  # a sentence with more mentions of one label is a list (as ``bridge.LIST_LIMIT``)
NOT_BRIDGES = frozenset({"NORP", "DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT"})


def bridges(pick: Pick, question_keys: Iterable[str]) -> set[str]:
    """Entities a sentence leads to: those it names (or refers to) that the question does not."""
    keys = {key for label, _, key in pick.sentence.mentions if key and label not in NOT_BRIDGES}
    if pick.sentence.refers_to:
        keys.add(pick.sentence.refers_to)
    return keys - set(question_keys)


def _names(graph: Any, keys: set[str]) -> set[str]:
    return {str(graph.name(k)).lower() for k in keys if k in graph} | {k.lower() for k in keys}


def follows(pick: Pick, first: Pick, leads: set[str], lead_names: set[str], asked: set[str]) -> bool:
    """Does ``pick`` state the next hop: it names a bridge and no question entity, in another chunk
    than the first line, with a wanted-type mention that is not the bridge itself?"""
    keys = pick.sentence.keys
    if pick.sentence.chunk_id == first.sentence.chunk_id or not (keys & leads) or (keys & asked):
        return False
    return any(surface.lower() not in lead_names for surface in pick.typed)


def _last_shown_score(first: Pick, entries: list[Entry], lines: int) -> float:
    """The score of the last evidence line ``compose`` would show (the one a next-hop line pushes out);
    -inf when fewer lines than room are shown, or when that line is not a sentence (a path chain)."""
    shown = {(first.sentence.chunk_id, first.sentence.ord)}
    last: Optional[Entry] = None
    count = 0
    for entry in entries:
        if count >= lines - 1:
            break
        if entry.sentences and entry.sentences <= shown:
            continue
        shown |= entry.sentences
        count += 1
        last = entry
    if last is None or last.pick is None or count < lines - 1:
        return float("-inf")
    return last.pick.score


def _wanted_other(pick: Pick, leads: set[str], lead_names: set[str], inp: "AnswerInputs") -> bool:
    """Does the sentence name something of the wanted answer type (any of its mentions, not only the one the
    scorer would bold) other than a bridge and the question's own names? True when no type is wanted."""
    if not inp.frame.groups:
        return True
    wanted = inp.frame.groups[0]
    graph = inp.graph
    for label, surface, key in pick.sentence.mentions:
        kind = str(graph.attributes(key).get("type", "")) if key and key in graph else ""
        if (label in wanted or kind in wanted) and not (key and key in leads) \
                and surface.lower() not in lead_names and not inp.frame.names_in_question(surface):
            return True
    return False


def _start_keys(inp: "AnswerInputs") -> set[str]:
    """The question entities its chain starts from (``hop_relation.start_names``); all of them when the
    parse shows none."""
    from core.answers.question import sentence_stems

    asked = set(inp.frame.entity_keys)
    names = start_names(inp.frame.text)
    if not names:
        return asked
    graph = inp.graph
    found = set()
    for key in asked:
        stems = sentence_stems(str(graph.name(key)) if key in graph else key)
        if any(stems and (stems <= name or name <= stems) for name in names):
            found.add(key)
    return found or asked


def _tails(names: set[str]) -> set[str]:
    """The last two or more words of each bridge name, shorter than the name ("lake district" of "english lake
    district"): a sentence naming an entity by one of them names the bridge."""
    out = set()
    for name in names:
        words = name.split()
        out |= {" ".join(words[i:]) for i in range(1, len(words) - 1)}
    return out


def _names_bridge(pick: Pick, wide: set[str], tails: set[str], graph: Any) -> bool:
    """Does the sentence name a bridge: its key, or a name of at least two words that ends a bridge's name
    ("the Lake District" for the English Lake District)?"""
    if pick.sentence.keys & wide:
        return True
    return bool(tails) and any((str(graph.name(key)) if key in graph else key).lower() in tails
                               for key in pick.sentence.keys)


def _spells(pick: Pick, names: set[str]) -> bool:
    """Does the sentence spell a question entity's name, linked or not ("The euro is …" for the Euro)?"""
    text = f" {' '.join(pick.sentence.text.lower().split())} "
    return any(len(name) > 2 and f" {name} " in text for name in names)


def _lists(pick: Pick) -> bool:
    """Is the sentence a list (more than ``LIST_LIMIT`` mentions of one label): no statement about one bridge?"""
    counts: dict[str, set[str]] = {}
    for label, surface, _ in pick.sentence.mentions:
        counts.setdefault(label, set()).add(surface.lower())
    return any(len(found) > LIST_LIMIT for found in counts.values())


def _holders(candidates: list[Pick], inp: "AnswerInputs") -> frozenset[str]:
    """The people the mode's evidence says hold the first hop's role ("Its founding director is Peter
    Okafor" for "the founding director of the Centre …"); empty when the first hop is no role noun."""
    role = first_role(inp.frame.text) if ROLE_HOLDERS else None
    if role is None or inp.graph is None:
        return frozenset()
    from core.answers.role_bridge import holders
    from core.storage.graph_view import as_graph_view

    starts = _start_keys(inp)  # the role said about the owner itself (named, or its opening pronoun resolved to it)
    return holders([p for p in candidates if p.sentence.keys & starts], role[0], role[1], as_graph_view(inp.graph))


def relation_lines(first: Pick, pool: list[Pick], hop: list[Pick], held: frozenset[str], inp: "AnswerInputs"
                   ) -> list[Pick]:
    """Sentences saying the last hop's relation (``hop_relation.last_relation``) about a bridge: they name
    an entity a sentence naming a question entity leads to (or a holder of the first hop's role), no
    question entity, sit in another chunk than the first line and name something of the wanted type; best first."""
    relation = last_relation(inp.frame.text)
    if not relation:
        return []
    asked = set(inp.frame.entity_keys)
    starts = _start_keys(inp)
    wide = set(held) if held else set().union(*(bridges(p, asked) for p in hop if p.sentence.keys & starts))
    if not wide:
        return []
    names = _names(inp.graph, wide)
    tails = _tails(names)
    asked_names = _names(inp.graph, asked)
    best: dict[tuple[str, int], Pick] = {}  # each sentence once, at its best score
    for p in pool:
        where = (p.sentence.chunk_id, p.sentence.ord)
        if where not in best or p.score > best[where].score:
            best[where] = p
    found = [p for p in best.values() if p.sentence.chunk_id != first.sentence.chunk_id
             and p.sentence.text != first.sentence.text and not (p.sentence.keys & asked)
             and _names_bridge(p, wide, tails, inp.graph) and not _lists(p) and not _spells(p, asked_names)
             and says_relation(p.sentence.text, p.sentence.stems, relation) and _wanted_other(p, wide, names, inp)]
    return sorted(found, key=lambda p: -p.score)


def next_hop_lines(first: Pick, candidates: list[Pick], pool: list[Pick], held: frozenset[str],
                   inp: "AnswerInputs") -> list[Pick]:
    """Sentences that follow the first hop (``follows``): the entities the best candidate naming a question
    entity leads to (or the first hop's role holders) named with something of the wanted type; best first."""
    asked = set(inp.frame.entity_keys)
    hop = [p for p in candidates if p.sentence.keys & asked]
    if not hop:
        return []
    leads = set(held) if held else bridges(max(hop, key=lambda p: p.score), asked)  # the first hop leads there
    if not leads:
        return []
    lead_names = _names(inp.graph, leads)
    seen: set[tuple[str, int]] = {(first.sentence.chunk_id, first.sentence.ord)}
    found: list[Pick] = []
    for pick in pool:
        where = (pick.sentence.chunk_id, pick.sentence.ord)
        if where in seen or pick.sentence.text == first.sentence.text:
            continue
        seen.add(where)
        if follows(pick, first, leads, lead_names, asked):
            found.append(pick)
    return sorted(found, key=lambda p: -p.score)


def chained(first: Optional[Pick], candidates: list[Pick], entries: list[Entry], inp: "AnswerInputs") -> list[Entry]:
    """``entries`` with the best ``CHAIN_LINES`` next-hop sentences (see the module docstring) first."""
    if first is None or CHAIN_LINES <= 0:
        return entries
    if ONE_HOP_NO_CHAIN and single_relation(inp.frame.text):
        return entries  # one relation of a named entity: its answer names that entity, no bridge to follow
    asked = set(inp.frame.entity_keys)
    pool = [e.pick for e in entries if e.pick is not None] + candidates
    hop = [p for p in pool if p.sentence.keys & asked]
    if not hop:
        return entries
    held = _holders(pool, inp)
    holding = holder_lines(first, pool, held, inp)[:1]
    floor = _last_shown_score(first, entries, inp.lines) - DISPLACE_MARGIN  # a line below it leaves a strong line be
    chosen = relation_lines(first, pool, hop, held, inp)[:CHAIN_LINES] if RELATION_LINE else []
    if not chosen or chosen[0].score < floor:  # none, or a strong line stays: look for the next hop as before
        chosen = next_hop_lines(first, candidates, pool, held, inp)[:CHAIN_LINES]
    if not chosen or chosen[0].score < floor:
        chosen = []
    return [sentence_entry(p) for p in holding + chosen] + entries


def holder_lines(first: Pick, pool: list[Pick], held: frozenset[str], inp: "AnswerInputs") -> list[Pick]:
    """When the first line names a holder of the first hop's role ("… founded by … Peter Okafor" for "the
    founding director of the Centre …"), the sentences saying that role about the owner and naming that holder
    ("Its founding director is Peter Okafor"): the first hop that shows why the first line answers; best first."""
    named = first.sentence.keys & held
    if not HOLDER_LINE or not named:
        return []
    from core.answers.question import said_stems

    role = first_role(inp.frame.text)
    starts = _start_keys(inp)
    found = {(p.sentence.chunk_id, p.sentence.ord): p for p in sorted(pool, key=lambda p: p.score)
             if p.sentence.text != first.sentence.text and p.sentence.keys & starts and p.sentence.keys & named
             and role is not None and role[0] in said_stems(p.sentence.text, p.sentence.stems)}
    return sorted(found.values(), key=lambda p: -p.score)
