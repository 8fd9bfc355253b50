"""Tests of the pure E2GraphRAG tree-mode algorithms on hand-built graphs and chunk indexes.

Every expected number below is derived by hand in the comments next to it.
"""
from __future__ import annotations

import random
from dataclasses import asdict

import networkx as nx
import pytest

from core.retrieval.tree_algorithms import (
    LocalOutcome,
    bounded_distance,
    h_loop,
    local_candidates,
    occurrence_rank,
    occurrence_weights,
    pair_distances,
    rank_chunks,
)


def path_graph(*nodes: str) -> nx.Graph:
    g = nx.Graph()
    for u, v in zip(nodes, nodes[1:]):
        g.add_edge(u, v, weight=1.0)
    return g


# --------------------------------------------------------------------------- pair_distances


def test_pair_distances_path_graph() -> None:
    g = path_graph("a", "b", "c", "d", "e")
    ents = ["a", "c", "e", "z"]  # z is not in the graph and is ignored
    # h=4 nodes -> at most 3 edges: a-c = 2 and c-e = 2 kept, a-e = 4 edges (5 nodes) dropped.
    assert pair_distances(ents, g, 4) == [("a", "c", 2), ("c", "e", 2)]
    # h=3 nodes -> at most 2 edges: the same two pairs (distance exactly 2).
    assert pair_distances(ents, g, 3) == [("a", "c", 2), ("c", "e", 2)]
    # h=2 nodes -> only adjacent pairs; none of a, c, e are adjacent.
    assert pair_distances(ents, g, 2) == []
    # h=5 nodes -> a-e (4 edges) now fits; pairs in query order (a,c), (a,e), (c,e).
    assert pair_distances(ents, g, 5) == [("a", "c", 2), ("a", "e", 4), ("c", "e", 2)]


def test_pair_distances_dedup_disconnected_and_small_h() -> None:
    g = path_graph("a", "b", "c")
    g.add_edge("x", "y")  # separate component
    # duplicates collapse; a-x are disconnected; a-b adjacent (1 edge, 2 nodes).
    assert pair_distances(["a", "a", "b", "x"], g, 4) == [("a", "b", 1)]
    assert pair_distances(["a", "b"], g, 2) == [("a", "b", 1)]
    # h=1: a path of one node cannot hold two distinct terms.
    assert pair_distances(["a", "b"], g, 1) == []
    assert pair_distances(["a"], g, 4) == []


def test_bounded_distance_matches_networkx_on_random_graphs() -> None:
    rng = random.Random(7)
    for seed in range(5):
        g = nx.gnm_random_graph(200, 320, seed=seed)
        nodes = list(g.nodes)
        for _ in range(120):
            s, t = rng.choice(nodes), rng.choice(nodes)
            try:
                true = nx.shortest_path_length(g, s, t)
            except nx.NetworkXNoPath:
                true = None
            for cutoff in range(0, 6):
                want = true if true is not None and true <= cutoff else None
                assert bounded_distance(g, s, t, cutoff) == want, (seed, s, t, cutoff)


def test_tighter_h_is_a_filter_of_looser_h() -> None:
    # h_loop computes distances once and filters them; that must equal recomputing per h.
    g = nx.gnm_random_graph(300, 600, seed=3)
    ents = [str(n) for n in random.Random(1).sample(list(g.nodes), 8)]
    g = nx.relabel_nodes(g, str)
    loose = pair_distances(ents, g, 5)
    for h in (4, 3, 2):
        assert pair_distances(ents, g, h) == [p for p in loose if p[2] <= h - 1]


# --------------------------------------------------------------------------- local_candidates


def test_local_candidates_intersections() -> None:
    ec = {"a": {"c1": 1, "c2": 2, "c9": 0}, "c": {"c2": 1, "c3": 1, "c9": 4}, "e": {"c3": 2, "c4": 1}}
    pairs = [("a", "c", 2), ("c", "e", 2)]
    # a∩c = {c2} (c9 has a zero count for a, so it is not a's chunk); c∩e = {c3}.
    assert local_candidates(pairs, ec) == {"c2": {("a", "c")}, "c3": {("c", "e")}}
    # a chunk selected by two pairs lists both.
    ec2 = {"a": {"k": 1}, "b": {"k": 1}, "c": {"k": 1}}
    assert local_candidates([("a", "b", 1), ("b", "c", 1)], ec2) == {"k": {("a", "b"), ("b", "c")}}
    # entity without chunks -> empty intersection.
    assert local_candidates([("a", "zz", 1)], ec) == {}


# --------------------------------------------------------------------------- h_loop


def test_h_loop_local_after_one_tightening() -> None:
    # path a-b-c-d; query a, b, d: a-b = 1, b-d = 2, a-d = 3 edges.
    g = path_graph("a", "b", "c", "d")
    ec = {
        "a": {"x1": 1, "x2": 1, "y1": 1},
        "b": {"y1": 1, "z1": 1},
        "d": {"x1": 1, "x2": 1, "z1": 2},
    }
    order = {"y1": 0, "x1": 1, "x2": 2, "z1": 9}
    out = h_loop(["a", "b", "d"], g, ec, order, k=3, h=4)
    # h=4: 3 pairs; a∩b={y1}, a∩d={x1,x2}, b∩d={z1} -> 4 chunks > k=3 -> tighten.
    # h=3: (a,b),(b,d) -> {y1, z1} = 2 <= 3 -> local.
    assert out.branch == "local"
    assert out.final_h == 3
    assert [(s.h, s.pairs_kept, s.chunks) for s in out.steps] == [(4, 3, 4), (3, 2, 2)]
    # z1: 2 distinct (b, d), 1+2=3 occurrences; y1: 2 distinct (a, b), 2 occurrences.
    # z1 wins on occurrences even though y1 comes first in chunk order.
    assert out.chunk_ids == ["z1", "y1"]
    assert out.chunk_pairs == {"z1": [("b", "d")], "y1": [("a", "b")]}


def test_h_loop_fallback_when_tightening_empties() -> None:
    # path a-b-c-d plus an isolated component q-r. Query a, d, q: only (a, d) at 3 edges.
    g = path_graph("a", "b", "c", "d")
    g.add_edge("q", "r")
    ec = {
        "a": {"c1": 1, "c2": 1, "c3": 2, "c4": 1, "c5": 7},
        "d": {"c1": 1, "c2": 1, "c3": 3, "c4": 1},
        "q": {"c2": 1},
    }
    order = {"c1": 3, "c2": 4, "c3": 2, "c4": 1, "c5": 0}
    out = h_loop(["a", "d", "q"], g, ec, order, k=3, h=4)
    # h=4: (a,d) -> a∩d = {c1,c2,c3,c4} = 4 > 3 -> tighten; h=3: no pair -> 0 chunks -> fallback.
    # keys (distinct, occurrences, order): c1 (2,2,3), c2 (3,3,4), c3 (2,5,2), c4 (2,2,1)
    # -> c2 (3 distinct), c3 (5 occ), c4 (order 1), c1 (order 3); top 3 = c2, c3, c4.
    assert out.branch == "local-fallback"
    assert out.final_h == 4
    assert out.chunk_ids == ["c2", "c3", "c4"]
    assert [(s.h, s.pairs_kept, s.chunks) for s in out.steps] == [(4, 1, 4), (3, 0, 0)]
    assert out.chunk_pairs == {c: [("a", "d")] for c in ("c2", "c3", "c4")}


def test_h_loop_fallback_to_previous_h_with_pairs_left() -> None:
    # path a-b-c-d again. Query a, b, d.
    # distances: a-b 1, b-d 2, a-d 3.
    g = path_graph("a", "b", "c", "d")
    ec = {
        "a": {"p": 1, "q": 1, "r": 1},
        "b": {"s": 1, "t": 1},
        "d": {"p": 1, "q": 1, "r": 1, "s": 2, "t": 1},
    }
    order = {"p": 0, "q": 1, "r": 2, "s": 3, "t": 4}
    out = h_loop(["a", "b", "d"], g, ec, order, k=1, h=4)
    # h=4: a∩d={p,q,r}, b∩d={s,t}, a∩b={} -> 5 > 1 -> tighten.
    # h=3: (a,b),(b,d) -> {s,t} = 2 > 1 -> tighten.
    # h=2: (a,b) only -> a∩b = {} -> 0 chunks with one pair kept -> fall back to h=3's {s,t}.
    # s: (2 distinct, 3 occ), t: (2, 2) -> s.
    assert out.branch == "local-fallback"
    assert out.final_h == 3
    assert [(s.h, s.pairs_kept, s.chunks) for s in out.steps] == [(4, 3, 5), (3, 2, 2), (2, 1, 0)]
    assert out.chunk_ids == ["s"]
    assert out.chunk_pairs == {"s": [("b", "d")]}


def test_h_loop_stops_at_h2_floor() -> None:
    g = path_graph("a", "b")
    ec = {"a": {"c1": 1, "c2": 1, "c3": 4}, "b": {"c1": 1, "c2": 2, "c3": 1}}
    order = {"c1": 0, "c2": 1, "c3": 2}
    out = h_loop(["a", "b"], g, ec, order, k=2, h=4)
    # 3 chunks > 2 at h=4, 3 and 2 (the pair is adjacent); h=1 is never tried.
    # occurrences: c1 2, c2 3, c3 5 (all 2 distinct) -> c3, c2.
    assert out.branch == "local-fallback"
    assert out.final_h == 2
    assert [s.h for s in out.steps] == [4, 3, 2]
    assert out.chunk_ids == ["c3", "c2"]


def test_h_loop_no_pairs_cases() -> None:
    g = path_graph("a", "b", "c", "d", "e")
    ec = {"a": {"c1": 1}, "e": {"c1": 1}, "b": {"c2": 1}}
    # a-e is 4 edges (5 nodes) > h=4 -> no pair survives.
    out = h_loop(["a", "e"], g, ec, {}, k=25, h=4)
    assert (out.branch, out.chunk_ids, out.final_h) == ("no-pairs", [], 4)
    assert [(s.h, s.pairs_kept, s.chunks) for s in out.steps] == [(4, 0, 0)]
    # a single query entity (or a duplicated one) forms no pair.
    for ents in (["a"], ["a", "a"], [], ["a", "zz"]):
        single = h_loop(ents, g, ec, {}, k=25, h=4)
        assert single.branch == "no-pairs" and single.chunk_ids == []
    # a-b are adjacent but share no chunk -> the local branch is empty: go global.
    empty = h_loop(["a", "b"], g, ec, {}, k=25, h=4)
    assert empty.branch == "no-pairs"
    assert [(s.h, s.pairs_kept, s.chunks) for s in empty.steps] == [(4, 1, 0)]
    # h=1 can keep no pair.
    assert h_loop(["a", "b"], g, ec, {}, k=25, h=1).branch == "no-pairs"
    with pytest.raises(ValueError):
        h_loop(["a", "b"], g, ec, {}, k=0)


def test_h_loop_is_deterministic_under_insertion_order() -> None:
    rng = random.Random(11)
    edges = [(f"n{u}", f"n{v}") for u, v in nx.gnm_random_graph(80, 200, seed=5).edges]
    chunks = [f"ch{i:03d}" for i in range(60)]
    ec = {f"n{i}": {c: rng.randint(1, 3) for c in rng.sample(chunks, 12)} for i in range(80)}
    order = {c: i for i, c in enumerate(chunks)}
    ents = ["n1", "n2", "n3", "n4", "n5", "n6"]

    g1 = nx.Graph(edges)
    g2 = nx.Graph(list(reversed(edges)))
    ec2 = {t: dict(reversed(list(m.items()))) for t, m in reversed(list(ec.items()))}
    a = h_loop(ents, g1, ec, order, k=5, h=4)
    b = h_loop(ents, g2, ec2, order, k=5, h=4)
    assert asdict(a) == asdict(b)
    assert asdict(a) == asdict(h_loop(ents, g1, ec, order, k=5, h=4))
    assert isinstance(a, LocalOutcome) and len(a.chunk_ids) <= 5


def test_rank_chunks_unknown_order_last_then_id() -> None:
    ec = {"a": {"u": 1, "v": 1, "w": 1}}
    # equal (1 distinct, 1 occ); w has an order, u and v do not -> w, then u, v by id.
    assert rank_chunks(["v", "u", "w"], ["a"], ec, {"w": 5}) == ["w", "u", "v"]


# --------------------------------------------------------------------------- occurrence ranking


def _tree_fixture() -> tuple[dict[str, dict[str, int]], list[tuple[str, list[str], float]]]:
    ec = {"x": {"l1": 2, "l2": 1}, "y": {"l2": 1, "l3": 0, "l4": 2}, "other": {"l5": 9}}
    # per-leaf weight for query {x, y}: l1=2, l2=1+1=2, l3=0 (zero count), l4=2, l5=0 (other is
    # not a query entity).
    cands = [
        ("S1", ["l1", "l2", "l3"], 0.2),  # summary: 2 + 2 + 0 = 4
        ("S2", ["l4", "l5"], 0.3),  # summary: 2 + 0 = 2
        ("l2", ["l2"], 0.9),  # chunk: 2
        ("l5", ["l5"], 0.99),  # chunk: 0 -> dropped despite the best similarity
    ]
    return ec, cands


def test_occurrence_weights_summary_is_sum_of_leaves() -> None:
    ec, cands = _tree_fixture()
    w = occurrence_weights([(c, leaves) for c, leaves, _ in cands], ["x", "y", "x"], ec)
    assert w == {"S1": 4, "S2": 2, "l2": 2, "l5": 0}
    leaf = occurrence_weights([(lf, [lf]) for lf in ("l1", "l2", "l3")], ["x", "y"], ec)
    assert w["S1"] == sum(leaf.values())


def test_occurrence_rank_order_ties_and_zero_drop() -> None:
    ec, cands = _tree_fixture()
    # S1 weight 4 first; l2 and S2 tie at 2 -> l2 (sim 0.9) before S2 (sim 0.3); l5 dropped.
    assert occurrence_rank(cands, ["x", "y"], ec, k=10) == [("S1", 4, 0.2), ("l2", 2, 0.9), ("S2", 2, 0.3)]
    assert occurrence_rank(cands, ["x", "y"], ec, k=2) == [("S1", 4, 0.2), ("l2", 2, 0.9)]
    # full tie on weight and similarity -> id ascending; input order must not matter.
    tie = [("b", ["l1"], 0.5), ("a", ["l4"], 0.5)]
    assert occurrence_rank(tie, ["x", "y"], ec, k=5) == [("a", 2, 0.5), ("b", 2, 0.5)]
    assert occurrence_rank(list(reversed(tie)), ["x", "y"], ec, k=5) == [("a", 2, 0.5), ("b", 2, 0.5)]
    # no query entity occurs anywhere -> nothing kept.
    assert occurrence_rank(cands, ["nobody"], ec, k=10) == []
    assert occurrence_rank(cands, ["x"], ec, k=0) == []


def test_keys_are_not_coerced_to_str() -> None:
    # graph nodes and entity_chunks keys are used as given (here ints): path 0-1-2.
    g = nx.path_graph(3)
    ec = {0: {"c1": 1, "c2": 1}, 2: {"c2": 2}}
    out = h_loop([0, 2], g, ec, {"c1": 0, "c2": 1}, k=25, h=4)  # type: ignore[arg-type]
    # 0-2 is 2 edges (3 nodes) <= h=4; 0∩2 = {c2}.
    assert (out.branch, out.chunk_ids, out.chunk_pairs) == ("local", ["c2"], {"c2": [(0, 2)]})
