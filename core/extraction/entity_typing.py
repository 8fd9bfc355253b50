"""An entity's type from what its mentions and its name agree on.

spaCy's small model labels each mention; summing those labels alone (the old rule) typed towns as
PERSON ("Ashcombe", "Greywick"), a lighthouse as ORG and a flood as ORG. Two more witnesses are
asked here, both read from what indexing already stores (the name and the mention sentences), so an
existing workspace is re-typed by re-merging its fragments, without re-extraction:

* **The name's head word** ("… Lighthouse" is a facility, "River …" a location, "University of …"
  an organisation, "… Flood" an event). A head word decides unless most mentions call the entity a
  title (a work of art, a product): "Star Wars" keeps WORK_OF_ART.
* **For a name with no such head word that some mentions call PERSON**, the mention sentences: a
  person is written with life dates "(1897–1979)", a title ("Dr", "Sir") or a family word after the
  name — that makes it PERSON; a place follows "in", "at", "near", "the towns of", or is called
  "a … town". When most mentions say PERSON but there is place evidence and no person evidence, the
  entity takes the place label its mentions gave most (GPE when none did); a one-word name written as
  a place with "the" ("the mouth of the Anwen", "up the Anwen") is never a person either (LOC).

Otherwise the mentions' vote stands (UNKNOWN only when nothing else was voted; ties go to the
label seen first), as before.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Mapping, Optional

PLACE_LABELS = ("GPE", "LOC", "FAC")
TITLE_LIKE_LABELS = frozenset({"WORK_OF_ART", "PRODUCT"})

# Last word of the name (before any "of"/"for" complement) -> type.
HEAD_WORD_TYPES: dict[str, str] = {
    **dict.fromkeys(("lighthouse", "viaduct", "bridge", "quay", "wall", "mill", "cutting", "junction",
                     "station", "halt", "pier", "dock", "docks", "canal", "tunnel", "cathedral", "chapel", "abbey", "tower", "castle", "airport", "road", "street", "lane", "avenue",
                     "square", "stadium", "breakwater", "embankment", "barrage", "dam", "reservoir"), "FAC"),
    **dict.fromkeys(("valley", "bay", "sound", "island", "islands", "isle", "hill", "hills", "head",
                     "coast", "sea", "ocean", "lake", "mountain", "mountains", "forest", "estuary",
                     "peninsula", "marsh", "moor", "beach", "creek", "gulf", "strait", "river"), "LOC"),
    **dict.fromkeys(("university", "college", "institute", "council", "board", "committee",
                     "association", "cooperative", "co-operative", "company", "museum", "fund", "society",
                     "school", "faculty", "centre", "center", "department", "ministry", "parliament",
                     "trust", "club", "bank", "agency", "authority", "commission", "corporation",
                     "foundation", "league", "party", "ltd", "inc", "plc", "academy"), "ORG"),
    **dict.fromkeys(("flood", "war", "festival", "dispute", "blockade", "procession", "storm", "battle",
                     "strike", "revolution", "election", "disaster", "earthquake", "riot", "siege",
                     "launch", "fair", "regatta", "games", "championship", "crisis", "massacre", "bombing",
                     "scandal", "incident", "expedition", "tournament"), "EVENT"),
    **dict.fromkeys(("agreement", "act", "treaty", "accord", "convention"), "LAW"),
}
# First word of a name of two words or more -> type.
PREFIX_TYPES: dict[str, str] = {"river": "LOC", "mount": "LOC", "lake": "LOC", "cape": "LOC", "isle": "LOC",
                                "port": "GPE"}
# Only titles that are hardly ever the first word of anything but a person's name ("General Office",
# "Queen Elisabeth Medical Foundation", "Admiral Twin" are not people).
HONORIFICS = frozenset({"mr", "mrs", "ms", "miss", "dr", "sir", "dame", "lady", "lord", "captain", "capt",
                        "professor", "prof", "reverend", "rev"})

_COMPLEMENT = re.compile(r"\s+(?:of|for)\s+", re.IGNORECASE)
_WORD = re.compile(r"[\w'’-]+")


def _words(name: str) -> list[str]:
    return [w.lower().removesuffix("'s").removesuffix("’s") for w in _WORD.findall(name)]


def name_type(name: str) -> Optional[str]:
    """The type the name itself states (by its head word, a place prefix or an honorific), or None."""
    words = _words(name)
    if len(words) < 2:
        return None
    head_words = _words(_COMPLEMENT.split(name, maxsplit=1)[0])
    if head_words and head_words[-1] in HEAD_WORD_TYPES:
        return HEAD_WORD_TYPES[head_words[-1]]
    if words[0] in PREFIX_TYPES:
        return PREFIX_TYPES[words[0]]
    if words[0].rstrip(".") in HONORIFICS and not _COMPLEMENT.search(name):
        return "PERSON"
    return None


def _cues(name: str) -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    n = re.escape(name)
    person = re.compile(
        rf"{n}\s*\((?:born\s+|b\.\s*)?\d{{3,4}}|"
        rf"\b(?:{'|'.join(sorted(HONORIFICS))})\.?\s+{n}\b|"
        rf"{n}(?:'s|’s)\s+(?:wife|husband|son|daughter|father|mother|brother|sister|widow|career|death|birth)\b|"
        rf"{n},\s+(?:who|whose)\b", re.IGNORECASE)
    place = re.compile(
        rf"\b(?:in|at|near|around|across)\s+{n}\b(?!['’]s)|"
        rf"\b(?:towns?|villages?|cities|city|settlements?|ports?)\s+of\s+(?:[A-Z][\w'-]*,?\s+(?:and\s+)?)*{n}\b|"
        rf"{n},\s+(?:an?|the)\s+(?:[\w-]+\s+){{0,3}}(?:town|village|city|port|settlement|island|river)\b")
    definite = re.compile(rf"\b(?:up|down|over|along|across|beside|into|(?:mouth|banks?|source|valley|estuary)\s+of)"
                          rf"\s+the\s+{n}\b(?!\s+[A-Z])")
    return person, place, definite


def vote_with_name(name: str, votes: Mapping[str, int], sentences: list[str]) -> str:
    """The type an entity's name and its mentions agree on (see the module docstring).

    ``votes`` are the mentions' labels (label -> count, insertion order = first seen); ``sentences``
    the mention sentences (the entity's fragment descriptions)."""
    by_vote = mentions_vote(votes)
    stated = name_type(name)
    if stated is not None:
        return by_vote if by_vote in TITLE_LIKE_LABELS else stated
    if "PERSON" not in votes or not sentences:
        return by_vote
    person, place, definite = _cues(name)
    text = "\n".join(sentences)
    if person.search(text):
        return "PERSON"
    if by_vote != "PERSON":
        return by_vote
    one_word = len(_words(name)) == 1
    if place.search(text) or (one_word and definite.search(text)):
        place_votes = [(label, n) for label, n in votes.items() if label in PLACE_LABELS]
        if place_votes:
            best = max(n for _, n in place_votes)
            return next(label for label, n in place_votes if n == best)
        return "GPE" if place.search(text) else "LOC"
    return by_vote


def mentions_vote(votes: Mapping[str, int]) -> str:
    """The label most mentions gave (not UNKNOWN unless nothing else was voted); ties go to the first seen."""
    named = [(label, n) for label, n in votes.items() if label != "UNKNOWN"]
    if not named:
        return "UNKNOWN"
    best = max(n for _, n in named)
    return next(label for label, n in named if n == best)


def summed_votes(parts: list[Mapping[str, int]]) -> dict[str, int]:
    """Label votes summed over fragments, first-seen order kept."""
    total: Counter = Counter()
    for part in parts:
        total.update(part)
    return dict(total)
