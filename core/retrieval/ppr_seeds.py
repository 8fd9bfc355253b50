"""The ``ppr`` mode's recipe and restart vector: which nodes the walk restarts at, and how much.

Three kinds of seed, as HippoRAG 2 builds its reset vector:

- ``entity``: the question's linked entities (``QueryContext.seeds``), each at its link score
  (off in both recipes in use: HippoRAG 2 finds its entities through facts, never by name, and
  seeding them as well measured lower recall@5 on both dev sets);
- ``fact``: the relations (facts) whose vectors are closest to the question's embedding; the top
  ``facts`` kept after the recognition filter seed their endpoints at the fact's cosine (summed over
  an endpoint's facts; the paper divides an endpoint's weight by the number of passages it appears in),
  and only the ``entity_top`` endpoints with the best mean fact score stay (HippoRAG 2's link_top_k);
- ``passage``: the dense top chunks, their cosines min-max normalised and times ``passage_weight``
  (the strict papers' setting: every chunk, as HippoRAG 2's released code does).

The recognition filter: HippoRAG 2 asks an LLM which of the top facts matter to the question
("recognition memory"). Offline it is replaced by a measured rule: a fact is kept only when one of
its endpoints is a linked question entity (``linked_endpoint``). On the dev sets this rule raised
recall@5 from 86.3 to 87.9 (dev_musique) and 65.7 to 69.3 (dev_musique_full) over no filter, where a
cosine margin to the best fact lowered it (docs/methods.md, *ppr*). When the question links no entity
the filter keeps the top facts unchanged.

With an LLM configured for the question (the question's keyword extractor offers ``recognize_facts``:
``core.llm.keywords.LLMKeywords``), the filter is the paper's: the top ``facts`` by cosine go to the LLM
(``core.llm.recognition``) and only those it keeps seed the walk. If its reply is unusable, the offline
rule is applied and ``FactChoice.note`` says so (the trace shows it).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from core.retrieval.ppr_graph import CHUNK_PREFIX
from core.retrieval.query import QueryContext, Seed
from core.storage.records import VectorHit


@dataclass(frozen=True)
class PPRRecipe:
    """The ppr mode's constants; ``RAGSCOPE`` and ``PAPER`` are the two in use."""

    damping: float = 0.5  # probability of following an edge (HippoRAG 2: 0.5)
    passage_weight: float = 0.05  # the dense passages' share of the restart vector (HippoRAG 2: 0.05)
    dense_seeds: int = 20  # dense chunk hits that join the restart vector
    facts: int = 5  # facts (relations) whose endpoints are seeded (HippoRAG 2: top-5)
    fact_candidates: int = 50  # facts searched before the recognition filter
    entity_seeds: bool = True  # the question's linked entities seed the walk too (RAGScope's first recipe)
    per_passage: bool = False  # an endpoint's weight divided by its number of passages (HippoRAG 2)
    synonym_threshold: Optional[float] = None  # synonym edges at cosine >= this (None: none)
    synonym_neighbours: int = 10  # at most this many synonym edges per entity
    all_passages: bool = False  # every chunk seeded, min-max over all of them (HippoRAG 2's code), else the top ones
    fact_minmax: bool = False  # a fact's score min-max normalised over every fact's cosine (HippoRAG 2's code)
    entity_top: int = 0  # keep this many fact endpoints, by mean fact score (HippoRAG 2's link_top_k: 5); 0: all
    fact_combine: str = "sum"  # an endpoint of several facts: "sum" of their scores, or the "last" one's (HippoRAG 2's code)


# HippoRAG 2's recipe where the paper's text is explicit: facts only (no name seeds), an endpoint's weight
# divided by its passages, synonym edges at cosine 0.8. Measured against RAGScope's first recipe (linked
# entities seeded, no per-passage division, no synonyms) it raised recall@5 on both dev sets
# (docs/methods.md, *ppr*); RAGScope runs it (the offline filter stands in for the LLM in both recipes).
# RAGScope adds one step of HippoRAG 2's released code: only the 5 fact endpoints with the best mean fact
# score seed the walk (link_top_k), which raised recall@5 on both dev sets (docs/methods.md, *ppr*).
RAGSCOPE = PPRRecipe(entity_seeds=False, per_passage=True, synonym_threshold=0.8, entity_top=5)
# The strict papers' setting follows the released code where the paper's text is silent in the other steps too: every
# passage seeded (min-max over all of them), fact scores min-max normalised over every fact's cosine, an
# endpoint weighted by the last of its facts. Measured together they lower recall@5 on dev_musique_full
# (docs/methods.md, *ppr*), so RAGScope's recipe leaves them out.
PAPER = replace(RAGSCOPE, all_passages=True, fact_minmax=True, fact_combine="last")


@dataclass(frozen=True)
class PPRSeed:
    """One node of the restart vector: its graph key (``chunk:<id>`` for a passage), weight, kind and why."""

    key: str
    weight: float
    kind: str  # "entity" | "fact" | "passage"
    why: str


@dataclass
class FactChoice:
    """The facts that seed the walk, best first, which filter chose them, and its LLM usage."""

    facts: list[tuple[tuple[str, str], float]]
    note: str
    usage: dict[str, int] = field(default_factory=dict)


OFFLINE_RULE = "offline rule: a fact must touch a linked question entity"


def fact_triple(graph: Any, a: str, b: str) -> tuple[str, str, str]:
    """A relation as (subject, relation, object) text: its keywords, else its description."""
    relation = graph.relation(a, b)
    text = ""
    if relation is not None:
        text = ", ".join(relation.keywords) or relation.description
    return graph.name(a), " ".join(text.split()) or "related to", graph.name(b)


def question_facts(ctx: QueryContext, vector: np.ndarray, recipe: PPRRecipe, linked: set[str]) -> FactChoice:
    """The top ``recipe.facts`` relations by cosine to the question that pass the recognition filter,
    best first: the LLM's when one is configured (see the module doc), else the offline rule (an
    endpoint among ``linked``; no filter when nothing is linked)."""
    search = ctx.ws.views.vectors
    if recipe.facts <= 0 or search.size("relations") == 0:
        return FactChoice([], "no facts in the index")
    graph = ctx.graph
    found: list[tuple[tuple[str, str], float]] = []
    for key, cosine in search.ranked_keys("relations", vector, recipe.fact_candidates):
        a, b = str(key[0]), str(key[1])
        if a in graph and b in graph:
            found.append(((a, b), float(cosine)))
    recognize = getattr(ctx.keyword_extractor, "recognize_facts", None)
    note, usage = OFFLINE_RULE, {}
    if recognize is not None:
        top = found[:recipe.facts]
        verdict = recognize(ctx.question, [fact_triple(graph, a, b) for (a, b), _ in top], recipe.facts)
        usage = dict(verdict.usage)
        if verdict.kept is not None:
            return FactChoice([top[i] for i in verdict.kept], f"LLM recognition filter: {verdict.note}", usage)
        note = f"{OFFLINE_RULE} (LLM filter unusable: {verdict.note})"
    kept = [(pair, cosine) for pair, cosine in found if not linked or pair[0] in linked or pair[1] in linked]
    return FactChoice(kept[:recipe.facts], note if linked else "no linked question entity: the top facts", usage)


def fact_scores(ctx: QueryContext, vector: np.ndarray, recipe: PPRRecipe,
                facts: Sequence[tuple[tuple[str, str], float]]) -> list[tuple[tuple[str, str], float]]:
    """The chosen facts with the score their endpoints are seeded at: the cosine, or with ``fact_minmax``
    (HippoRAG 2's code) the cosine min-max normalised over every fact's cosine to the question (the
    lowest found by searching with the negated question vector)."""
    if not recipe.fact_minmax or not facts:
        return list(facts)
    search = ctx.ws.views.vectors
    best = search.ranked_keys("relations", vector, 1)
    worst = search.ranked_keys("relations", -np.asarray(vector), 1)
    if not best or not worst:
        return list(facts)
    high, low = float(best[0][1]), -float(worst[0][1])
    if high <= low:
        return [(pair, 1.0) for pair, _ in facts]
    return [(pair, (cosine - low) / (high - low)) for pair, cosine in facts]


def restart_seeds(ctx: QueryContext, recipe: PPRRecipe, seeds: Sequence[Seed],
                  facts: Sequence[tuple[tuple[str, str], float]], dense: Sequence[VectorHit],
                  passages_of: Mapping[str, int]) -> list[PPRSeed]:
    """The restart vector as seeds (one per node, weights summed over the reasons that seed it),
    heaviest first; ``passages_of`` gives an entity's number of chunks (for ``per_passage``)."""
    graph = ctx.graph
    weights: dict[str, float] = {}
    kinds: dict[str, str] = {}
    whys: dict[str, list[str]] = {}

    def add(key: str, weight: float, kind: str, why: str) -> None:
        if weight <= 0:
            return
        if recipe.per_passage and kind != "passage":
            weight /= max(1, passages_of.get(key, 0))
        weights[key] = weights.get(key, 0.0) + weight
        kinds.setdefault(key, kind)
        whys.setdefault(key, []).append(why)

    if recipe.entity_seeds:
        for seed in seeds:
            add(seed.key, max(float(seed.score), 1e-6), "entity", seed.reason())
    scored: dict[str, list[float]] = {}
    named: dict[str, list[str]] = {}
    for (a, b), score in facts:
        fact = f"fact {graph.name(a)} — {graph.name(b)} (score {score:.3f})"
        for key in (a, b):
            scored.setdefault(key, []).append(score)
            named.setdefault(key, []).append(fact)
    kept = sorted(scored, key=lambda k: (-sum(scored[k]) / len(scored[k]), k))
    for key in kept[:recipe.entity_top] if recipe.entity_top > 0 else kept:
        weight = scored[key][-1] if recipe.fact_combine == "last" else sum(scored[key])
        add(key, weight, "fact", "; ".join(named[key]))
    if dense:
        dense = dense if recipe.all_passages else dense[:recipe.dense_seeds]
        scores = [float(h.score) for h in dense]
        low, high = min(scores), max(scores)
        for hit, score in zip(dense, scores):
            norm = (score - low) / (high - low) if high > low else 1.0
            add(CHUNK_PREFIX + hit.id, recipe.passage_weight * norm, "passage",
                f"dense cosine {score:.3f} (min-max {norm:.2f} x {recipe.passage_weight})")
    return sorted((PPRSeed(k, round(w, 6), kinds[k], "; ".join(whys[k])) for k, w in weights.items()),
                  key=lambda s: (-s.weight, s.key))
