"""Short names read as the longer entity they stand for, on the answers' read side (no re-index).

The indexer keeps "Ruth" ("*Ruth* and Edward Harland had two children") and "Ruth Harland" as two
entities, so a chain of evidence that passes through one never reaches the other: the grounding gate
(``grounding``) then refuses a right answer whose only link to the question runs through her.

Rule (deterministic, read from the graph the index already stores):

- a person's short name stands for a longer person entity when its words are a whole-word run of
  the longer name's words ("Ruth" in "Ruth Harland", "Rutherford" in "Simon Rutherford", never "Ruth"
  in "Rutherford"), and the longer entity is named in the *same chunk* the short name was read in (its
  source chunks). Only people (``ALIAS_TYPES``): "Mexico" is not "Mexico City", nor the place "Carrow
  Sound" the treaty "Carrow Sound Agreement";
- when several longer entities of that chunk qualify ("Ruth Harland", "Ruth Pell"), the sentence, or
  the short name's own description (the sentences it was read from), must say which: a given name
  coordinated with a full name shares its last word ("*Ruth* and Edward *Harland*" → Ruth Harland);
  otherwise the short name stands for nothing ("Harland" among four Harlands of one chunk stays
  itself).

Only grounding uses it, to widen the entities a sentence names; what the sentence says, its scores and
its bold are untouched.
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Optional

from core.storage.graph_view import as_graph_view

# Only people: a person is named by a part of the full name ("Ruth", "Rutherford"); a place or organisation
# named by a part of a longer name is most often another entity ("Mexico" / "Mexico City", "Utah" / "Utah
# County", "Korean" / "South Korean", "Sapporo" / "Sapporo Sugar Company": 131 such pairs on dev_musique_full
# across all types, most of them wrong; 8 among people, 7 right).
ALIAS_TYPES = frozenset({"PERSON"})


def _chunks_of(graph: Any, key: str) -> frozenset[str]:
    chunks = graph.attributes(key).get("source_chunk_ids") or ()
    if isinstance(chunks, str):
        chunks = chunks.split("<SEP>")
    return frozenset(chunks)


def _within(short: list[str], long: list[str]) -> bool:
    """Are ``short``'s words a contiguous whole-word run of ``long``'s (and fewer)?"""
    n = len(short)
    return 0 < n < len(long) and any(long[i:i + n] == short for i in range(len(long) - n + 1))


def _coordinated(name: str, text: str, options: list[str], graph: Any) -> Optional[str]:
    """The option whose name is ``name`` + the last word of a full name coordinated with it in ``text``
    ("Ruth and Edward Harland": "Ruth Harland"), when exactly one option is that."""
    found = re.search(rf"(?<!\w){re.escape(name)} and (?:[A-Z][\w'-]+ )+([A-Z][\w'-]+)(?!\w)", text or "")
    if not found:
        return None
    wanted = f"{name} {found.group(1)}".lower()
    hits = [key for key in options if graph.name(key).lower() == wanted]
    return hits[0] if len(hits) == 1 else None


def stands_for(key: str, chunk_id: str, graph: Any, text: str = "") -> Optional[str]:
    """The longer entity the short name ``key``, read in chunk ``chunk_id`` (in the sentence ``text``),
    stands for — or None (module docstring)."""
    graph = as_graph_view(graph)
    if key not in graph or not chunk_id:
        return None
    name = graph.name(key)
    words = key.split()
    kind = graph.attributes(key).get("type") or ""
    if not words or not name[:1].isupper() or kind not in ALIAS_TYPES:
        return None
    options = []
    for other in graph.entities_with_word(words[0]):
        if (other != key and _within(words, other.split()) and graph.attributes(other).get("type") == kind
                and chunk_id in _chunks_of(graph, other)):
            options.append(other)
    if len(options) == 1:
        return options[0]
    if not options:
        return None
    own = str(graph.attributes(key).get("description") or "")  # the sentences the short name was read from
    return _coordinated(name, f"{text}\n{own}", sorted(options), graph)


def with_aliases(keys: Iterable[str], chunk_id: str, graph: Any, text: str = "", memo: Optional[dict] = None
                 ) -> frozenset[str]:
    """``keys`` plus the longer entity each stands for in the chunk (``stands_for``). ``memo`` (a dict)
    keeps the answer per (keys, chunk, text) for the question's modes."""
    keys = frozenset(keys)
    spot = (keys, chunk_id, text)
    if memo is not None and spot in memo:
        return memo[spot]
    out = set(keys)
    for key in keys:
        longer = stands_for(key, chunk_id, graph, text)
        if longer:
            out.add(longer)
    found = frozenset(out)
    if memo is not None:
        memo[spot] = found
    return found
