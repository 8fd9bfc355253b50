"""A bolded person named in full: the short answer is the fullest name the evidence gives for that person.

Articles name a person in full once and by surname after that ("In 1921 *Marlowe* bought the customs house …
and founded the Velmora Marine Institute"). The sentence that states the answer is often one of the later
ones, so its bold says "Marlowe" where the reader (and a gold answer) expects "Edwin Marlowe".

Rule (deterministic, read from what indexing already stored; no parse):

- a bolded span that is a PERSON mention of the chosen sentence stands for the entity its mention was keyed
  to. Indexing merged a surname or given name into the one longer name of the same document
  (``core.extraction.aliases``: only when exactly one longer name qualifies), so that key already is the
  person the sentence means; a short name the indexer kept apart is widened only as ``aliases.stands_for``
  allows (the longer person named in the same chunk, one of them);
- the span is replaced by that entity's name when the span's words are a whole-word run of the name's words
  and fewer ("Marlowe" in "Edwin Marlowe"; never "Marlow" in "Marlowe", nor a different person's name).

The layout then names the person in bold before the sentence ("**Edwin Marlowe** — In 1921 Marlowe
bought …", ``layout.first_line``). Which sentence is quoted and whether a bold is shown are decided before
(``claim``); this only spells the bolded person out.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Optional

from core.answers.aliases import stands_for
from core.answers.scoring import Pick
from core.storage.graph_view import as_graph_view

_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def _words(name: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(name)]


def _longer(short: str, name: str) -> bool:
    """Are ``short``'s words a contiguous whole-word run of ``name``'s, and fewer?"""
    a, b = _words(short), _words(name)
    return 0 < len(a) < len(b) and any(b[i:i + len(a)] == a for i in range(len(b) - len(a) + 1))


def full_name(surface: str, key: str, chunk_id: str, graph: Any, text: str = "") -> str:
    """The fullest name of the person the PERSON mention ``surface`` (keyed ``key``) stands for; ``surface``
    itself when no longer name of that person is known (module docstring)."""
    graph = as_graph_view(graph)
    if not key or key not in graph:
        return surface
    for candidate in (key, stands_for(key, chunk_id, graph, text)):
        if candidate and candidate in graph and graph.attributes(candidate).get("type") == "PERSON":
            name = graph.name(candidate)
            if _longer(surface, name):
                return name
    return surface


def in_full(pick: Optional[Pick], graph: Any) -> Optional[Pick]:
    """``pick`` with each bolded person spelt out in full (``full_name``); other spans and picks unchanged."""
    if pick is None or not pick.typed or graph is None:
        return pick
    view = as_graph_view(graph)
    people = {surface: key for label, surface, key in pick.sentence.mentions if label == "PERSON"}
    spans = [full_name(s, people[s], pick.sentence.chunk_id, view, pick.sentence.text) if s in people else s
             for s in pick.typed]
    return replace(pick, typed=spans) if spans != pick.typed else pick
