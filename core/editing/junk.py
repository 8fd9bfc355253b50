"""Junk-node suggestions (issue 33): entities an extractor made of something that is not a name, ranked,
each with its reasons, for the analyst to delete in one step (``delete_all``: one ``delete_entity`` edit
per entity, so each stays deleted through re-indexing and can be undone on its own).

Reasons read from the name alone (``name_reasons``):

* **number or unit only** — no letter at all, or a degree sign ("1894", "−23 °F"; "U2", "CO2" are names);
* **stop words only** — every word a stop word, and not written in capitals ("Four", "The Other"; "US" is kept);
* **broken span** — unbalanced brackets or quotes, a footnote marker, or a name that starts or ends with
  punctuation ("Fighter (Keith Urban", "World War II.[nb", "← Previous Season 1").

Reasons read from the workspace:

* **common word** — a one-word name the corpus writes in lower case at least as often as capitalised
  (``lowercase_share``), so the extractor took an ordinary word for a name ("Directing", "Barometer"); a
  name the corpus never writes in lower case is never flagged, nor a longer name (title-cased concepts of
  an encyclopedic corpus, "Classical music", are entities);
* **isolated** — no relation and a single source chunk: weak on its own (document titles of an
  encyclopedic corpus look like that), so it only adds to another reason or ranks last.

Neither of these two, nor "stop words only", is given to an entity named like a document (its title, or the title without a
trailing parenthesis: "Taken" for "Taken (film)"): a document is about it.

Dismissed entities are remembered in the workspace (by key) and never suggested again.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from core.workspace import Workspace

DISMISSED_META = "junk_suggestions_dismissed"
WEIGHTS = {"number or unit only": 1.0, "stop words only": 1.0, "broken span": 0.9, "common word": 0.7,
           "isolated": 0.25}
MIN_LOWERCASE_SHARE = 0.5  # "common word": at least this share of the corpus's mentions in lower case
MIN_MENTIONS = 2  # ... counted over at least this many mentions of the name's words
_STOP = frozenset("""a about above after again against all am an and any are as at be because been before being
below between both but by can did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
off on once only or other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were what when where
which while who whom why will with you your yours yourself yourselves one two three four five six seven eight
nine ten first second third another every many much several""".split())
_WORD = re.compile(r"[^\W\d_]+(?:[-'][^\W\d_]+)*", re.UNICODE)
_FOOTNOTE = re.compile(r"\[\s*(?:citation|nb|note|n\b|\d)", re.IGNORECASE)
_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"))
_QUOTES = ('"', "“", "”")


@dataclass
class JunkNode:
    """One suggested delete: the entity, what it is connected to, and why it looks like junk."""

    key: str
    name: str
    type: str
    relations: int
    chunks: int
    reasons: list[str] = field(default_factory=list)
    score: float = 0.0

    @property
    def strong(self) -> bool:
        """True when a reason besides "isolated" holds (pre-ticked for deletion on the page)."""
        return any(r != "isolated" for r in self.reasons)


def _broken(name: str) -> bool:
    stripped = name.strip()
    if any(stripped.count(a) != stripped.count(b) for a, b in _PAIRS):
        return True
    if sum(stripped.count(q) for q in _QUOTES) % 2 or _FOOTNOTE.search(stripped):
        return True
    return bool(stripped) and (not (stripped[0].isalnum() or stripped[0] in "\"“'(")
                               or stripped[-1] in ",;:-–—(/\\←→")


def name_reasons(name: str) -> list[str]:
    """The reasons read from the name alone (see the module docstring), in ``WEIGHTS`` order."""
    words = _WORD.findall(name)
    reasons = []
    if not words or "°" in name:
        reasons.append("number or unit only")
    elif all(w.lower() in _STOP for w in words) and not name.isupper():
        reasons.append("stop words only")
    if _broken(name):
        reasons.append("broken span")
    return reasons


def word_counts(texts: Iterable[str]) -> Counter:
    """Occurrences of every word as written (case kept), over ``texts``."""
    counts: Counter = Counter()
    for text in texts:
        counts.update(_WORD.findall(text))
    return counts


def lowercase_share(name: str, counts: Counter) -> Optional[float]:
    """For a one-word name: the share of its corpus occurrences written in lower case (None for longer
    names, names in capitals or in lower case, or fewer than ``MIN_MENTIONS`` occurrences)."""
    words = _WORD.findall(name)
    if len(words) != 1 or name.strip() != words[0] or words[0].isupper() or words[0].islower():
        return None
    lower, capital = counts[words[0].lower()], counts[words[0]]
    if lower + capital < MIN_MENTIONS:
        return None
    return lower / (lower + capital)


def title_keys(titles: Iterable[str]) -> set[str]:
    """Document titles as entity keys, each also without a trailing parenthesis ("Taken (film)" → "taken")."""
    from core.editing.replay import normalize_name

    keys = set()
    for title in titles:
        keys.add(normalize_name(title))
        keys.add(normalize_name(re.sub(r"\s*\([^()]*\)\s*$", "", title)))
    return keys - {""}


def classify(key: str, name: str, type_: str, relations: int, chunks: int, counts: Counter,
             titles: frozenset[str] = frozenset()) -> JunkNode:
    """One entity's ``JunkNode`` (no reason: score 0); ``titles``: document-title keys (``title_keys``)."""
    reasons = name_reasons(name)
    if key in titles:  # a document is about it: only a broken or number-only name still counts
        reasons = [r for r in reasons if r != "stop words only"]
    else:
        share = lowercase_share(name, counts)
        if share is not None and share >= MIN_LOWERCASE_SHARE and "number or unit only" not in reasons:
            reasons.append("common word")
        if relations == 0 and chunks <= 1:
            reasons.append("isolated")
    return JunkNode(key, name, type_, relations, chunks, reasons, round(sum(WEIGHTS[r] for r in reasons), 3))


def rank(nodes: Sequence[JunkNode], dismissed_keys: Iterable[str] = (), top: int = 50,
         include_weak: bool = True) -> list[JunkNode]:
    """Nodes with a reason, best first (score, then fewer relations, then name); dismissed ones left out;
    ``include_weak=False`` keeps only those with a reason besides "isolated"."""
    skip = set(dismissed_keys)
    found = [n for n in nodes if n.reasons and n.key not in skip and (include_weak or n.strong)]
    return sorted(found, key=lambda n: (-n.score, n.relations, n.chunks, n.name.lower()))[:top]


def _texts(ws: Workspace) -> Iterable[str]:
    for doc in ws.records.documents():
        for chunk in ws.records.chunks_of(doc.doc_id):
            yield chunk.text


def dismissed(ws: Workspace) -> set[str]:
    """The entity keys dismissed as "not junk" in this workspace."""
    try:
        raw = json.loads(ws.records.get_meta(DISMISSED_META, "[]") or "[]")
    except ValueError:
        return set()
    return {str(k) for k in raw if isinstance(k, str)}


def dismiss(ws: Workspace, name: str, restore: bool = False) -> set[str]:
    """Remember (or, with ``restore``, forget) that ``name`` is not junk; under the writer lock."""
    from core.editing.replay import key_of

    key = key_of(name)
    with ws.writer():
        records = ws.records
        with records.unit_of_work():
            keys = dismissed(ws)
            keys = keys - {key} if restore else keys | {key}
            records.set_meta(DISMISSED_META, json.dumps(sorted(keys), ensure_ascii=False))
            records.log("junk_suggestion_" + ("restored" if restore else "dismissed"), {"key": key})
    return keys


def suggestions(ws: Workspace, top: int = 50, include_weak: bool = True) -> list[JunkNode]:
    """The workspace's ``top`` junk-node suggestions, dismissed entities left out."""
    graph = ws.knowledge_graph()
    counts = word_counts(_texts(ws))
    titles = frozenset(title_keys(doc.name for doc in ws.records.documents()))
    nodes = [classify(key, str(data.get("name") or key), str(data.get("type") or ""), graph.degree(key),
                      len(data.get("source_chunk_ids") or []), counts, titles) for key, data in graph.nodes(data=True)]
    return rank(nodes, dismissed(ws), top, include_weak)


def delete_all(ws: Workspace, keys: Sequence[str], who: str = "") -> tuple[list[int], list[tuple[str, str]]]:
    """Delete each entity (one logged ``delete_entity`` edit each); the edit ids made and the
    (key, reason) of those that could not be deleted (e.g. already gone)."""
    from core.editing.log import make_edit
    from core.editing.replay import EditError

    made, failed = [], []
    for key in dict.fromkeys(keys):
        try:
            made.append(make_edit(ws, "delete_entity", {"name": key}, who=who).edit_id)
        except EditError as exc:
            failed.append((key, str(exc)))
    return made, failed
