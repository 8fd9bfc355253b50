"""The router's question features: what the question looks like (its wh-word, length, clauses, names)
and what the index already says about it (how its names link to graph entities, how peaked the dense
chunk scores are, how well its keywords match relations). Every feature is work the other modes of the
same ``QueryContext`` reuse (keywords, linked seeds, the question's embedding and its dense top-k), so
computing them costs about one dense search; no mode is run.

``FEATURES`` is the fixed order a model's weights follow; ``question_features`` returns one float each."""
from __future__ import annotations

import re

from core.retrieval.query import QueryContext

WH_WORDS = ("who", "what", "when", "where", "which", "how")
DENSE_K = 10  # the dense top-k whose shape is measured
RELATION_K = 5
FEATURES: tuple[str, ...] = (
    *(f"wh_{w}" for w in WH_WORDS), "wh_other",
    "words", "clauses", "possessives", "names", "low_keywords", "high_keywords",
    "seeds", "question_seeds", "seed_top", "seed_mean", "seeds_exact",
    "dense_top", "dense_margin", "dense_drop5", "dense_spread",
    "relation_top", "entity_top",
)
_CLAUSE = re.compile(r"\b(who|whom|whose|that|which|where|when|of the|in the|by the|from the)\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9']+")


def form_features(question: str) -> dict[str, float]:
    """The features read from the question's text alone: the wh-word (first of ``WH_WORDS`` met in the
    first three words, else ``wh_other``), its length in words (/10), the clause markers after the
    first word (relative pronouns, 'of the' ...: a rough hop count) and possessives."""
    words = _WORD.findall(question.lower())
    head = words[:3]
    wh = next((w for w in head if w in WH_WORDS), "other")
    out = {f"wh_{w}": 0.0 for w in (*WH_WORDS, "other")}
    out[f"wh_{wh}"] = 1.0
    out["words"] = len(words) / 10.0
    rest = question.split(None, 1)[1] if len(question.split(None, 1)) > 1 else ""
    out["clauses"] = float(len(_CLAUSE.findall(rest)))
    out["possessives"] = float(question.count("'s") + question.count("\u2019s"))
    return out


def _top(scores: list[float], i: int) -> float:
    return scores[i] if len(scores) > i else 0.0


def question_features(ctx: QueryContext) -> dict[str, float]:
    """Every feature of ``FEATURES`` for the context's question (see the module doc)."""
    out = form_features(ctx.question)
    low, high = ctx.keywords()
    out["names"] = float(len(ctx.link_names()))
    out["low_keywords"] = float(len(low))
    out["high_keywords"] = float(len(high))
    seeds = ctx.seeds(low or high) if (low or high) else []
    link = [s.score for s in seeds]
    out["seeds"] = float(len(seeds))
    out["question_seeds"] = float(sum(1 for s in seeds if s.question))
    out["seed_top"] = max(link, default=0.0)
    out["seed_mean"] = sum(link) / len(link) if link else 0.0
    out["seeds_exact"] = float(sum(1 for s in seeds if s.how in ("name", "alias")))
    dense = [float(h.score) for h in ctx.search_chunks(ctx.embed(ctx.question), DENSE_K)]
    out["dense_top"] = _top(dense, 0)
    out["dense_margin"] = _top(dense, 0) - _top(dense, 1)
    out["dense_drop5"] = _top(dense, 0) - _top(dense, 4)
    out["dense_spread"] = _top(dense, 0) - _top(dense, len(dense) - 1) if dense else 0.0
    out["relation_top"] = _best(ctx, "relations", ", ".join(high))
    out["entity_top"] = _best(ctx, "entities", ", ".join(ctx.link_names()))
    return {name: float(out[name]) for name in FEATURES}


def _best(ctx: QueryContext, collection: str, text: str) -> float:
    """The best cosine of ``text`` in a vector collection (0 when there is no text or no vector); the
    text is one of the question's query strings, embedded with them in one call."""
    if not text:
        return 0.0
    try:
        hits = ctx.search(collection, ctx.embed(text), RELATION_K)
    except (KeyError, ValueError):
        return 0.0
    return max((float(h.score) for h in hits), default=0.0)
