"""Alias merging within one document: short forms, acronyms and case variants of one name.

LightRAG leaves entity identity to the LLM and E2GraphRAG to spaCy's surface strings, so offline
"Tidewater" and "Tidewater Shipping Cooperative" were two entities. RAGScope merges, per document,
a name into a longer name of a compatible type when it is

* a token prefix of it ("Tidewater" → "Tidewater Shipping Cooperative"),
* its head, the last tokens ("County Council" → "Velmora County Council"), or for a person the
  surname ("Marlowe" → "Edwin Marlowe"; a one-word place is never a head: "York" ≠ "New York"),
* or its acronym ("VMI" → "Velmora Marine Institute", function words skipped),

and only when exactly one longer name qualifies (three Harlands in one article keep "Harland"
apart) and the types allow it (``may_shorten``: a place is never the short form of something named
after it). Case variants already share a key (``normalize_name`` casefolds). A document is always indexed in one batch, so the result never depends on batch
boundaries. The merged surface forms are kept on the entity (``EntityRecord.aliases``) and shown
in its profile; queries are matched against them (``core.retrieval.entity_linking``).
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping

from core.extraction.names import normalize_name
from core.types import ChunkExtraction, EntityRecord, MentionRecord, RelationRecord, SentenceRecord

PLACES = frozenset({"GPE", "LOC", "FAC"})
ACRONYM_SKIP = frozenset({"of", "the", "and", "for", "in", "on", "at", "to", "a", "an", "&", "de", "du", "la", "le"})
MAX_DESCRIPTION_SENTENCES = 3


def acronym(name: str) -> str:
    """Initials of the name's words, function words skipped ("Velmora Marine Institute" → "vmi")."""
    words = [w for w in name.replace("-", " ").split() if w.casefold() not in ACRONYM_SKIP]
    return "".join(w[0] for w in words if w[:1].isalpha()).casefold()


def _is_acronym(surface: str) -> bool:
    letters = surface.replace(".", "")
    return 2 <= len(letters) <= 8 and letters.isalpha() and letters.isupper()


def alias_map(names: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """Short key → long key for one document. ``names``: key → (display surface, voted type)."""
    keys = sorted(names, key=lambda k: (len(k.split()), k))
    tokens = {k: k.split() for k in keys}
    mapping: dict[str, str] = {}
    for short in keys:
        surface, short_type = names[short]
        short_tokens = tokens[short]
        candidates = []
        for long in keys:
            long_tokens = tokens[long]
            if long == short or len(long_tokens) <= len(short_tokens) or not may_shorten(short_type, names[long][1]):
                continue
            prefix = long_tokens[: len(short_tokens)] == short_tokens
            # a one-word head is a surname only for people
            head = long_tokens[-len(short_tokens):] == short_tokens and (short_type == "PERSON"
                                                                         or len(short_tokens) > 1)
            if prefix or head:
                candidates.append(long)
        if not candidates and _is_acronym(surface):
            candidates = [k for k in keys if k != short and len(tokens[k]) >= 2 and names[k][1] != "PERSON"
                          and acronym(names[k][0]) == short]
        # a candidate that is itself a short form of another candidate counts once (chains)
        roots = {c for c in candidates if not any(c != o and _extends(tokens[o], tokens[c]) for o in candidates)}
        if len(roots) == 1:
            mapping[short] = roots.pop()
    return {short: _final(short, mapping) for short in mapping}


def may_shorten(short_type: str, long_type: str) -> bool:
    """Can a name of ``short_type`` be a short form of a longer name of ``long_type``? People: first
    name or surname of a person. Places never: organisations, buildings and events are named after
    places ("Carrow Sound" → "Carrow Sound Fisheries Committee" is another thing). Other names: when
    the voted types agree ("Tidewater" ORG → "Tidewater Shipping Cooperative" ORG)."""
    if short_type in PLACES:
        return False
    return short_type == long_type or long_type == "UNKNOWN"  # a title entity has no type evidence of its own


def _extends(longer: list[str], shorter: list[str]) -> bool:
    n = len(shorter)
    return len(longer) > n and (longer[:n] == shorter or longer[-n:] == shorter)


def _final(key: str, mapping: Mapping[str, str]) -> str:
    seen = {key}
    while key in mapping and mapping[key] not in seen:
        key = mapping[key]
        seen.add(key)
    return key


def document_names(extractions: Iterable[ChunkExtraction]) -> dict[str, tuple[str, str]]:
    """key → (most frequent surface, type by vote over all mentions) for one document's chunks."""
    surfaces: dict[str, Counter] = {}
    votes: dict[str, Counter] = {}
    for ex in extractions:
        for ent in ex.entities:
            key = normalize_name(ent.name)
            if not key:
                continue
            weight = sum(ent.type_votes.values()) or 1
            surfaces.setdefault(key, Counter())[ent.name] += weight
            votes.setdefault(key, Counter()).update(ent.type_votes or {ent.type: 1})
    return {k: (surfaces[k].most_common(1)[0][0], _vote(votes[k])) for k in surfaces}


def _vote(counter: Counter) -> str:
    named = Counter({label: n for label, n in counter.items() if label != "UNKNOWN"})
    return (named or counter).most_common(1)[0][0] if counter else "UNKNOWN"


def resolve_document(extractions: list[ChunkExtraction]) -> dict[str, str]:
    """Merge aliases across the chunks of one document, in place; return the map applied."""
    names = document_names(extractions)
    mapping = alias_map(names)
    if mapping:
        canonical = {long: names[long][0] for long in set(mapping.values())}
        alias_surfaces: dict[str, list[str]] = {}
        for short, long in mapping.items():
            alias_surfaces.setdefault(long, []).append(names[short][0])
        for ex in extractions:
            apply(ex, mapping, canonical, alias_surfaces)
    return mapping


def apply(ex: ChunkExtraction, mapping: Mapping[str, str], canonical: Mapping[str, str],
          alias_surfaces: Mapping[str, list[str]]) -> None:
    """Rename aliased entities of one chunk to their long form and merge what collides."""
    def key_of(name: str) -> str:
        key = normalize_name(name)
        return mapping.get(key, key)

    def name_of(name: str) -> str:
        key = key_of(name)
        return canonical.get(key, name)

    merged: dict[str, EntityRecord] = {}
    for ent in ex.entities:
        key = key_of(ent.name)
        name = canonical.get(key, ent.name)
        target = merged.get(key)
        if target is None:
            merged[key] = target = EntityRecord(name, ent.type, ent.description, dict(ent.type_votes), list(ent.aliases))
        else:
            target.description = _join(target.description, ent.description)
            for label, n in ent.type_votes.items():
                target.type_votes[label] = target.type_votes.get(label, 0) + n
        if key in alias_surfaces:
            for alias in alias_surfaces[key]:
                if alias not in target.aliases and alias != target.name:
                    target.aliases.append(alias)
    for target in merged.values():
        if target.type_votes:
            target.type = _vote(Counter(target.type_votes))
    ex.entities = list(merged.values())
    relations: dict[tuple[str, str], RelationRecord] = {}
    for rel in ex.relations:
        a, b = key_of(rel.source), key_of(rel.target)
        if a == b:
            continue
        pair = (a, b) if a <= b else (b, a)
        names_ = (name_of(rel.source), name_of(rel.target)) if a <= b else (name_of(rel.target), name_of(rel.source))
        found = relations.get(pair)
        if found is None:
            relations[pair] = RelationRecord(names_[0], names_[1], list(rel.keywords), rel.description, rel.weight)
        else:
            found.keywords = list(dict.fromkeys(found.keywords + rel.keywords))
            found.description = _join(found.description, rel.description)
            found.weight += rel.weight
    ex.relations = list(relations.values())
    ex.mentions = _rename_mentions(ex.mentions, mapping)
    ex.sentences = [SentenceRecord(s.text, [[label, text, mapping.get(key, key)] for label, text, key in s.mentions])
                    for s in ex.sentences]


def _join(a: str, b: str) -> str:
    parts = [p for p in dict.fromkeys([a, b]) if p]
    return " ".join(parts) if len(" ".join(parts).split(". ")) <= MAX_DESCRIPTION_SENTENCES * 2 else parts[0]


def _rename_mentions(record: MentionRecord, mapping: Mapping[str, str]) -> MentionRecord:
    counts: dict[str, int] = {}
    labels: dict[str, str] = {}
    for term, n in record.counts.items():
        new = mapping.get(term, term)
        counts[new] = counts.get(new, 0) + n
        if new == term or new not in labels:
            labels[new] = record.labels.get(new if new in record.labels else term, "")
    pairs: dict[tuple[str, str], int] = {}
    for (a, b), n in record.cooccurrence.items():
        a, b = mapping.get(a, a), mapping.get(b, b)
        if a == b:
            continue
        pair = (a, b) if a < b else (b, a)
        pairs[pair] = pairs.get(pair, 0) + n
    return MentionRecord(counts=counts, labels=labels, cooccurrence=pairs)
