"""The router's question features: what the question looks like (its wh-word, length, clauses, names)
and what the index already says about it (how its names link to graph entities, how peaked the dense
chunk scores are). Every feature is work the graph modes of the same ``QueryContext`` reuse (keywords,
linked seeds, the question's embedding) plus one dense chunk search; no mode is run. (The best relation
and entity cosines of the keywords were tried and left out: two more vector searches, about 50 ms each
on the MuSiQue dev workspaces, for no held-out gain.)

``FEATURES`` is the fixed order a model's weights follow; ``question_features`` returns one float each."""
from __future__ import annotations

import re

from core.retrieval.query import QueryContext

WH_WORDS = ("who", "what", "when", "where", "which", "how")
DENSE_K = 10  # the dense top-k whose shape is measured
FEATURES: tuple[str, ...] = (
    *(f"wh_{w}" for w in WH_WORDS), "wh_other",
    "words", "clauses", "possessives", "names", "low_keywords", "high_keywords",
    "seeds", "question_seeds", "seed_top", "seed_mean", "seeds_exact",
    "dense_top", "dense_margin", "dense_drop5", "dense_spread",
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
    return {name: float(out[name]) for name in FEATURES}

