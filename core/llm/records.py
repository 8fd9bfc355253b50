"""A forgiving parser for the entity/relation records an LLM writes during extraction.

The requested format is one record per line::

    entity | NAME | TYPE | DESCRIPTION
    relation | SOURCE | TARGET | KEYWORDS | DESCRIPTION | STRENGTH

Real (and tiny) models drift from it, so ``parse_records`` never raises and accepts: other
delimiters (``<|>``, ``||``, tabs, ``;``, LightRAG-style ``("entity", …)`` tuples) even mixed in
one line, quotes/brackets/bullets/numbering/markdown around fields, missing trailing fields,
repeated records, a truncated last line, prose or markdown fences around the records, and JSON
(an object with ``entities``/``relations`` lists, or a list of typed objects). Everything it
cannot use is reported in ``dropped`` with the reason.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable, Optional, cast

from core.extraction.names import normalize_name
from core.types import EntityRecord, RelationRecord

MAX_NAME_CHARS = 120
MAX_KEYWORDS = 10
_SPLIT = re.compile(r"\s*(?:<\|>|\|\||\||\t|;)\s*")
_KIND = re.compile(r"^\W*(entity|entities|relation|relationship|relations|relationships|edge|node)\W*$", re.I)
_BULLET = re.compile(r"^\s*(?:[-*•>]+|\d+[.)]|#+)\s*")
_FENCE = re.compile(r"^\s*```")
_END = re.compile(r"^\W*(?:end|done|complete|completed|finished|<\|complete\|>)\W*$", re.I)
_NUMBER = re.compile(r"\W*(?:strength\W*)?-?\d+(?:\.\d+)?\W*", re.I)
_STRIP = " \t\"'`*()[]{}<>“”‘’"
TYPE_ALIASES = {
    "PERSON": ("PERSON", "PEOPLE", "HUMAN", "INDIVIDUAL", "PER", "CHARACTER"),
    "ORG": ("ORG", "ORGANIZATION", "ORGANISATION", "COMPANY", "INSTITUTION", "AGENCY", "GROUP", "TEAM"),
    "GPE": ("GPE", "COUNTRY", "CITY", "STATE", "NATION", "GEO", "GEOPOLITICAL_ENTITY"),
    "LOC": ("LOC", "LOCATION", "PLACE", "REGION", "AREA", "GEOGRAPHY"),
    "NORP": ("NORP", "NATIONALITY", "RELIGION"),
    "FAC": ("FAC", "FACILITY", "BUILDING"),
    "EVENT": ("EVENT",),
    "WORK_OF_ART": ("WORK_OF_ART", "ARTWORK", "BOOK", "FILM", "SONG", "WORK"),
    "PRODUCT": ("PRODUCT", "TECHNOLOGY", "DEVICE", "SOFTWARE", "TOOL"),
    "LAW": ("LAW", "REGULATION", "TREATY", "ACT"),
    "LANGUAGE": ("LANGUAGE",),
}


def _clean(field: Any) -> str:
    text = _BULLET.sub("", str(field if field is not None else "")).strip()
    text = re.sub(r"\s*\[\d+\]$", "", text)  # a trailing citation marker
    return re.sub(r"\s+", " ", text.strip(_STRIP)).strip()


_TYPE_WORDS = frozenset(alias for aliases in TYPE_ALIASES.values() for alias in aliases)


def is_type_label(name: str) -> bool:
    """True for a 'name' that is an entity-type label (PERSON, City, …): a field in the wrong place."""
    return re.sub(r"[\s\-]+", "_", name.strip()).upper() in _TYPE_WORDS


def sentence_like(name: str) -> bool:
    """True for a 'name' that is really a phrase or sentence (a field slipped into the wrong place)."""
    words = name.split()
    return len(words) > 8 or (name.endswith(".") and len(words) >= 4)


def normalize_type(raw: str, entity_types: Optional[Iterable[str]] = None) -> str:
    """Map a model's type label onto the configured list (aliases included); else UNKNOWN."""
    label = re.sub(r"[\s\-]+", "_", _clean(raw)).upper()
    if entity_types is None:
        return label[:30] or "UNKNOWN"
    allowed = [t.upper() for t in entity_types]
    if label in allowed:
        return label
    for canonical, aliases in TYPE_ALIASES.items():
        if canonical in allowed and label in aliases:
            return canonical
    return "UNKNOWN"


def _keywords(raw: Any) -> list[str]:
    items = raw if isinstance(raw, list) else re.split(r"[,;/]", str(raw or ""))
    out = [_clean(k).lower() for k in items]
    return list(dict.fromkeys(k for k in out if k and len(k) <= 60))[:MAX_KEYWORDS]


def _strength(raw: Any) -> Optional[float]:
    match = re.search(r"-?\d+(?:\.\d+)?", str(raw if raw is not None else ""))
    if not match:
        return None
    return min(10.0, max(0.1, float(match.group())))


class _Collector:
    """Accumulates records, de-duplicating by key and remembering what was dropped and why."""

    def __init__(self, entity_types: Optional[Iterable[str]]) -> None:
        self.entity_types = list(entity_types) if entity_types is not None else None
        self.entities: dict[str, EntityRecord] = {}
        self.relations: dict[tuple[str, str], RelationRecord] = {}
        self.dropped: list[str] = []

    def drop(self, reason: str, raw: Any) -> None:
        self.dropped.append(f"{reason}: {str(raw).strip()[:200]}")

    def entity(self, name: Any, etype: Any, description: Any, raw: Any) -> None:
        name = _clean(name)
        key = normalize_name(name) if name else ""
        if not key:
            self.drop("entity without a name", raw)
        elif len(name) > MAX_NAME_CHARS or sentence_like(name):
            self.drop("entity name looks like a sentence", raw)
        elif is_type_label(name):
            self.drop("entity name is a type label", raw)
        elif key in self.entities:
            self.drop("repeated entity", raw)
        else:
            self.entities[key] = EntityRecord(name, normalize_type(str(etype or ""), self.entity_types),
                                              _clean(description))

    def relation(self, source: Any, target: Any, keywords: Any, description: Any, strength: Any, raw: Any) -> None:
        source, target = _clean(source), _clean(target)
        a, b = normalize_name(source) if source else "", normalize_name(target) if target else ""
        if not a or not b:
            self.drop("relation without two endpoints", raw)
        elif a == b:
            self.drop("relation of an entity with itself", raw)
        elif max(len(source), len(target)) > MAX_NAME_CHARS or sentence_like(source) or sentence_like(target):
            self.drop("relation endpoint looks like a sentence", raw)
        elif is_type_label(source) or is_type_label(target):
            self.drop("relation endpoint is a type label", raw)
        elif tuple(sorted((a, b))) in self.relations:
            self.drop("repeated relation", raw)
        else:
            weight = _strength(strength)
            self.relations[cast(tuple[str, str], tuple(sorted((a, b))))] = RelationRecord(source, target, _keywords(keywords),
                                                                   _clean(description),
                                                                   weight if weight is not None else 1.0)

    def fields(self, fields: list[str], raw: str) -> bool:
        """Interpret a split line; True when it was a record (kept or dropped)."""
        while fields and not _clean(fields[0]):
            fields.pop(0)
        if not fields:
            return False
        kind = _KIND.match(_BULLET.sub("", fields[0]).strip())
        if not kind:
            return False
        word = kind.group(1).lower()
        rest = fields[1:]
        if word in ("entity", "entities", "node"):
            if len(rest) < 2 or not _clean(rest[1]):
                self.drop("entity with missing fields (truncated?)", raw)
            else:
                etype, description = rest[1], " ".join(rest[2:]) if len(rest) > 2 else ""
                if not description.strip() and len(etype.split()) >= 3:  # a description in the type's place
                    etype, description = "", etype
                self.entity(rest[0], etype, description, raw)
        else:
            if len(rest) < 2:
                self.drop("relation with missing fields (truncated?)", raw)
            else:
                extra = rest[2:]
                strength = extra[-1] if len(extra) >= 2 and _NUMBER.fullmatch(extra[-1].strip()) else None
                body = extra[:-1] if strength is not None else extra
                keywords = body[0] if body else ""
                description = " ".join(body[1:]) if len(body) > 1 else ""
                self.relation(rest[0], rest[1], keywords, description, strength, raw)
        return True


def _split_line(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("(") and body.rstrip("#").rstrip().endswith(")"):
        body = body.rstrip("#").rstrip()[1:-1]
    fields = _SPLIT.split(body)
    if len(fields) < 3 and "," in body:  # ("entity", "Alice", "PERSON", "…") tuples
        quoted = re.findall(r'"([^"]*)"', body)
        if len(quoted) >= 3:
            return quoted
        fields = [f for f in body.split(",")]
    return fields


def _json_candidates(text: str) -> list[Any]:
    body = "\n".join(line for line in text.splitlines() if not _FENCE.match(line)).strip()
    starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
    if not starts:
        return []
    start = min(starts)
    end = max(body.rfind("}"), body.rfind("]"))
    if end <= start:
        return []
    try:
        return [json.loads(body[start:end + 1])]
    except ValueError:
        return []


def _first(item: dict, *names: str) -> Any:
    lowered = {str(k).lower(): v for k, v in item.items()}
    for name in names:
        if name in lowered and lowered[name] not in (None, ""):
            return lowered[name]
    return None


def _from_json(data: Any, out: _Collector) -> bool:
    """Collect records from JSON-ish output; True when the JSON held any usable record."""
    before = len(out.entities) + len(out.relations)
    if isinstance(data, dict):
        ents = _first(data, "entities", "nodes")
        rels = _first(data, "relations", "relationships", "edges")
        items = [("entity", e) for e in (ents if isinstance(ents, list) else [])]
        items += [("relation", r) for r in (rels if isinstance(rels, list) else [])]
        if not items and (_first(data, "name", "entity_name", "source", "src_id")):
            items = [("", data)]
    elif isinstance(data, list):
        items = [("", item) for item in data]
    else:
        return False
    for kind, item in items:
        raw = json.dumps(item, ensure_ascii=False)
        if not isinstance(item, dict):
            out.drop("JSON item that is not an object", raw)
            continue
        declared = str(_first(item, "record", "kind") or "").lower()
        is_relation = kind == "relation" or "relation" in declared or (
            kind == "" and _first(item, "source", "src_id", "source_entity", "head", "from") is not None)
        if is_relation:
            out.relation(_first(item, "source", "src_id", "source_entity", "head", "from"),
                         _first(item, "target", "tgt_id", "target_entity", "tail", "to"),
                         _first(item, "keywords", "relationship_keywords", "relation", "type") or "",
                         _first(item, "description", "relationship_description", "summary") or "",
                         _first(item, "strength", "weight", "relationship_strength"), raw)
        else:
            out.entity(_first(item, "name", "entity_name", "entity", "title"),
                       _first(item, "type", "entity_type", "label", "category") or "",
                       _first(item, "description", "entity_description", "summary") or "", raw)
    return len(out.entities) + len(out.relations) > before


def parse_records(text: Optional[str], entity_types: Optional[Iterable[str]] = None
                  ) -> tuple[list[EntityRecord], list[RelationRecord], list[str]]:
    """(entities, relations, dropped) from a model's reply; never raises."""
    out = _Collector(entity_types)
    try:
        _parse_into(text or "", out)
    except Exception as exc:  # noqa: BLE001 - a parser bug must not break indexing
        out.drop(f"parser error {type(exc).__name__}", text or "")
    return list(out.entities.values()), list(out.relations.values()), out.dropped


def _parse_into(text: str, out: _Collector) -> None:
    if "{" in text:
        for data in _json_candidates(text):
            trial = _Collector(out.entity_types)
            if _from_json(data, trial):
                out.entities, out.relations, out.dropped = trial.entities, trial.relations, trial.dropped
                return
    records = re.split(r"\n|##|<\|record\|>", text)
    for line in records:
        raw = line.strip()
        if not raw or _FENCE.match(raw) or _END.match(raw):
            continue
        if not out.fields(_split_line(raw), raw) and not (raw.startswith("{") and any(
                _from_json(data, out) for data in _json_candidates(raw))):
            out.drop("not a record", raw)
