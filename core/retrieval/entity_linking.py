"""Seed selection: the question's names linked to knowledge-graph entities (RAGScope's choice).

LightRAG embeds all low-level keywords joined into one string and keeps the top 40 entities above
cosine 0.2; PathRAG takes the top 40 the same way. On a graph of thousands of entities that joined
query drifts ("Belgium" brought "European", "Industrial Revolution" ahead of Belgium itself), so
every mode that starts from entities links each name of the question on its own:

1. exact match of the name's key (``normalize_name``) to an entity, or to a merged alias of one
   (``core.extraction.aliases``) → score 1.0;
2. else, for a name of several words, the shortest entity whose name contains them in order
   ("Philbrook Museum" → "Philbrook Museum of Art"), when it is the only one of that length → 0.95;
   a name that is part of a name already linked this way is skipped;
3. otherwise, and in addition, the keyword's own vector search over the entity vectors, keeping
   hits within ``seed_relative_cutoff`` of that keyword's best hit and above ``cosine_threshold``,
   at most ``SEEDS_PER_KEYWORD`` per keyword.

The result is ordered by score (ties: keyword order, then key) and capped at the paper's top-N.
The papers' strategy (``core.retrieval.strategies.JoinedSearch``) is their joined query (``strict_hits``).
The ``Seed`` record belongs to the question object (``core.retrieval.query``), which links a question's
seeds once (``QueryContext.seeds``) through the strategy it was given.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional, Sequence

from core.extraction.nlp import normalize_name
from core.retrieval.query import Seed

if TYPE_CHECKING:
    from core.retrieval.query import QueryContext
    from core.workspace import Workspace

SEEDS_PER_KEYWORD = 5  # vector hits kept per keyword (after the relative cut-off)


def containing_entity(ws: Workspace, key: str) -> Optional[str]:
    """The one shortest entity key that contains ``key``'s words contiguously, or None."""
    words = key.split()
    if not words:
        return None
    graph = ws.views.graph
    sets = [graph.entities_with_word(w) for w in words]
    candidates = set.intersection(*(set(x) for x in sets)) if all(sets) else set()
    padded = f" {key} "
    found = sorted((c for c in candidates if c != key and padded in f" {c} "), key=lambda c: (len(c.split()), c))
    if not found or (len(found) > 1 and len(found[0].split()) == len(found[1].split())):
        return None
    return found[0]


_WORD = re.compile(r"[^\W_]+(?:['’.\-&][^\W_]+)*|[&]")
MAX_NAME_WORDS = 12
_LEADING_SKIP = frozenset({"the", "a", "an", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or"})


# a span ``normalize_name`` only lowercases: ASCII letters and digits in words joined by single spaces or by
# one inner ".", "-" or "'" (so no edge punctuation, whitespace run or accent for it to fold)
_PLAIN_SPAN = re.compile(r"[A-Za-z0-9]+(?:[ .'-][A-Za-z0-9]+)*")


def span_key(surface: str) -> str:
    """``normalize_name(surface)`` for a question span, without its Unicode folding and edge stripping
    when the span is plain ASCII (``_PLAIN_SPAN``) with a letter, no trailing possessive and no leading
    "the": then the key is the span lowercased."""
    if _PLAIN_SPAN.fullmatch(surface) and not surface.endswith("'s"):
        key = surface.lower()
        if not key.startswith("the ") and any(ch.isalpha() for ch in key):
            return key
    return normalize_name(surface)


def dictionary_names(ws: Workspace, question: str) -> list[str]:
    """Entity names of the graph (or merged aliases) that occur verbatim in the question, longest
    first and never overlapping: the graph's own vocabulary finds titles the small NER model splits
    or misses ("Jump for Glory", "Alexander and the Terrible, Horrible, No Good, Very Bad Day").
    Matches of several words, or of one capitalised word that is not the question's first."""
    graph = ws.views.graph
    if len(graph) == 0:
        return []
    words = list(_WORD.finditer(question))
    taken = [False] * len(words)
    found: list[tuple[int, str]] = []
    # words with a capital letter, counted up to each word: a span has one iff its words do (a capital
    # letter is a word character, so none sits between the words)
    capitals = [0]
    for word in words:
        capitals.append(capitals[-1] + (not word.group().islower() and any(ch.isupper() for ch in word.group())))
    for size in range(min(MAX_NAME_WORDS, len(words)), 0, -1):
        for i in range(len(words) - size + 1):
            if capitals[i + size] == capitals[i] or any(taken[i : i + size]):
                continue
            surface = question[words[i].start() : words[i + size - 1].end()]
            if size == 1 and (i == 0 or not surface[:1].isupper()):
                continue
            if words[i].group().islower() and words[i].group() in _LEADING_SKIP:
                continue  # "the Velmora Coastal Railway": the name starts after the article
            key = span_key(surface)
            if key and (key in graph or graph.alias_owner(key) is not None):
                found.append((i, surface))
                taken[i : i + size] = [True] * size
    return [surface for _, surface in sorted(found)]


def link_names(ctx: QueryContext, names: Sequence[str], top_n: int, threshold: float, ratio: float,
               per_keyword: int = SEEDS_PER_KEYWORD, vectors: bool = True) -> list[Seed]:
    """Link each name to entities (exact name, alias, containment, and unless ``vectors`` is False
    its own vector search); best first."""
    graph = ctx.graph
    if len(graph) == 0 or not names:
        return []
    found: dict[str, Seed] = {}
    order: dict[str, tuple[int, int]] = {}

    def add(seed: Seed, rank: tuple[int, int]) -> None:
        old = found.get(seed.key)
        if old is None or seed.score > old.score:
            seed.question = seed.question or (old is not None and old.question)
            found[seed.key] = seed
            order.setdefault(seed.key, rank)
        elif seed.question:
            old.question = True

    searched: Optional[list[list[tuple[Any, float]]]] = None  # per name, its entity hits (one matrix product)
    exact_names: list[str] = []
    for n, name in enumerate(names):
        key = normalize_name(name)
        if any(f" {key} " in f" {longer} " for longer in exact_names):
            continue  # a part of a name already linked ("Bastien" of "Bastien und Bastienne")
        owner = graph.alias_owner(key)
        exact = key in graph or owner is not None
        if key in graph:
            add(Seed(key, 1.0, name, "name", True), (n, 0))
        elif owner is not None:
            add(Seed(owner, 1.0, name, "alias", True), (n, 0))
        elif key and len(key.split()) > 1:  # one word is too weak a clue ("songs" in "Folk Songs")
            longer = containing_entity(ctx.ws, key)
            if longer is not None:
                exact = True
                add(Seed(longer, 0.95, name, "contains", True), (n, 0))
        if exact:
            exact_names.append(key)
        if not vectors:
            continue
        if searched is None:  # every name's search at once: the same hits as one ranked_keys per name
            ctx.prefetch(list(names))
            searched = ctx.ws.views.vectors.ranked_keys_many("entities", [ctx.embed(nm) for nm in names],
                                                             per_keyword * 4)
        hits = searched[n]
        best = hits[0][1] if hits else 0.0
        kept = 0
        for rank, (entity, score) in enumerate(hits, 1):
            if kept >= per_keyword or score < threshold or score < ratio * best:
                break
            if entity in graph:
                add(Seed(entity, round(score, 6), name, "vector", question=not exact and kept == 0), (n, rank))
                kept += 1
    ranked = sorted(found.values(), key=lambda s: (-s.score, order[s.key], s.key))
    return ranked[:top_n]


def strict_hits(ctx: QueryContext, terms: Sequence[str], top_n: int, threshold: float) -> list[Seed]:
    """The papers' seed selection: the terms joined with ", ", one search, top-N above ``threshold``."""
    graph = ctx.graph
    if not terms or len(graph) == 0:
        return []
    joined = ", ".join(terms)
    hits = ctx.search("entities", ctx.embed(joined), top_n)
    out: list[Seed] = []
    seen: set[str] = set()
    for hit in hits:
        key = str(hit.metadata.get("key", ""))
        if hit.score >= threshold and key in graph and key not in seen:
            seen.add(key)
            out.append(Seed(key, round(hit.score, 6), joined, "vector"))
    return out
