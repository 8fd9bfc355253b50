"""The anchored-relation ranking looks only at the pairs that can reach the top k
(``anchoring.contenders``), and that gives the ranking of every pair, rounding ties included."""
from __future__ import annotations

import random

from core.retrieval import anchoring
from core.retrieval.anchoring import ANCHOR_BONUS, Anchor, contenders


def full_ranking(pairs, found, anchors, top_k, threshold):
    """The ranking over every candidate, as ``anchored_relations`` ranked before the pre-selection."""
    out = []
    for pair in pairs:
        cosine = found.get(pair)
        if cosine is None or cosine < threshold:
            continue
        bonus = ANCHOR_BONUS if (pair[0] in anchors or pair[1] in anchors) else 0.0
        out.append((-round(cosine + bonus, 6), -round(cosine, 6), pair))
    return [p for *_, p in sorted(out)[:top_k]]


def ranked(pairs, found, anchors, top_k, threshold):
    kept = contenders(pairs, found, {p: p for p in pairs}, anchors, top_k, threshold)
    return full_ranking(kept, found, anchors, top_k, threshold), kept


def test_a_pair_just_below_the_kth_score_that_rounds_level_with_it_stays():
    # both round to 0.3; the lower unrounded one wins on its pair order, so a cut at the kth score loses it
    pairs = [("x", "y"), ("a", "b"), ("c", "d")]
    found = {("x", "y"): 0.3000004, ("a", "b"): 0.2999996, ("c", "d"): 0.25}
    best, kept = ranked(pairs, found, {}, 1, 0.2)
    assert best == full_ranking(pairs, found, {}, 1, 0.2) == [("a", "b")]
    assert ("c", "d") not in kept


def test_same_top_k_as_ranking_every_pair_on_random_near_ties():
    rng = random.Random(7)
    for trial in range(200):
        nodes = [f"n{i}" for i in range(30)]
        pairs = list(dict.fromkeys(tuple(sorted(rng.sample(nodes, 2))) for _ in range(120)))
        # coarse grid plus sub-rounding jitter: many scores tie after rounding to 6 decimals
        found = {p: rng.choice([0.1, 0.2, 0.3, 0.35]) + rng.choice([-4e-7, 0.0, 4e-7, 2e-6]) for p in pairs}
        for p in rng.sample(pairs, 10):
            del found[p]  # pairs without a vector
        anchors = {n: Anchor("question", n) for n in rng.sample(nodes, 3)}
        top_k = rng.choice([1, 5, 20, 200])
        best, kept = ranked(pairs, found, anchors, top_k, 0.2)
        assert best == full_ranking(pairs, found, anchors, top_k, 0.2), trial


def test_it_leaves_out_what_cannot_rank():
    pairs = [(f"a{i}", f"b{i}") for i in range(100)]
    found = {p: 0.2 + i / 1000 for i, p in enumerate(pairs)}
    kept = contenders(pairs, found, {p: p for p in pairs}, {}, 5, 0.2)
    assert sorted(kept) == sorted(pairs[-5:])


def test_anchored_relations_read_only_the_contenders(monkeypatch, sample_ws):
    """The records are built for the contenders only (the rule is what makes the ranking cheap)."""
    import numpy as np

    seen = []
    real = anchoring.contenders

    def spy(*args, **kwargs):
        kept = real(*args, **kwargs)
        seen.append((len(args[0]), len(kept)))
        return kept

    monkeypatch.setattr(anchoring, "contenders", spy)
    vector = np.asarray(sample_ws.embedder.embed(["founded company"])[0], dtype=np.float32)
    out = anchoring.anchored_relations(sample_ws, vector, [], 3, 0.0)
    assert seen and len(out) == 3 and seen[0][1] < seen[0][0]
