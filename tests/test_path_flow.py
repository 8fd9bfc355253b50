"""Hand-checked tests for PathRAG flow-based pruning (core.retrieval.path_flow).

Test graph (alpha = 0.8, theta = 0.05)::

    A - B - F - G
    |   |   |
    C - D - E

Edges: A-B, A-C, B-D, C-D, D-E, B-F, F-E, F-G.
Degrees: A 2, B 3, C 2, D 3, E 2, F 3, G 1.

Resources from A (max_hops = 3):
    layer 0: S(A) = 1                      ratio 1/2 = 0.5        -> expanded (start)
    layer 1: S(B) = 0.8*1/2 = 2/5          ratio 0.4/3 = 0.1333   -> expanded
             S(C) = 0.8*1/2 = 2/5          ratio 0.4/2 = 0.2      -> expanded
    layer 2: S(D) = 0.8*0.4/3 + 0.8*0.4/2 = 0.10667 + 0.16 = 4/15 = 0.26667
                                           ratio 0.26667/3 = 0.0889 -> expanded
             S(F) = 0.8*0.4/3 = 8/75 = 0.10667
                                           ratio 0.10667/3 = 0.0356 < 0.05 -> PRUNED
    layer 3: S(E) = 0.8*(4/15)/3 = 16/225 = 0.07111   (only from D; F was pruned)
             G gets nothing (its only neighbour F was pruned).

Resources from E:
    S(E) = 1; layer 1: S(D) = S(F) = 0.8/2 = 0.4 (ratios 0.1333, expanded)
    layer 2: S(B) = 0.8*0.4/3 (D) + 0.8*0.4/3 (F) = 16/75 = 0.21333 (ratio 0.0711, expanded)
             S(C) = 0.8*0.4/3 = 8/75 = 0.10667 (ratio 0.0533, expanded)
             S(G) = 0.8*0.4/3 = 8/75 (ratio 0.1067, expanded)
    layer 3: S(A) = 0.8*(16/75)/3 + 0.8*(8/75)/2 = 12.8/225 + 9.6/225 = 112/1125 = 0.09956

Resources from F:
    S(F) = 1; layer 1: S(B) = S(E) = S(G) = 0.8/3 = 4/15 (ratios 0.0889, 0.1333, 0.2667)
    layer 2: S(A) = 0.8*(4/15)/3 = 16/225 (ratio 0.0356 -> PRUNED)
             S(D) = 0.8*(4/15)/3 + 0.8*(4/15)/2 = 16/225 + 24/225 = 8/45 (ratio 0.0593)
    layer 3: S(C) = 0.8*(8/45)/3 = 32/675 (from D only; A pruned)
"""
from __future__ import annotations

import random

import networkx as nx
import pytest

from core.retrieval.path_flow import (
    FlowStats,
    ScoredPath,
    flow_paths,
    propagate_resources,
    top_paths,
)

EDGES = [("A", "B"), ("A", "C"), ("B", "D"), ("C", "D"), ("D", "E"), ("B", "F"),
         ("F", "E"), ("F", "G")]

# Reliabilities, computed by hand from the resources above.
# A-B-D-E: (1 + 2/5 + 4/15 + 16/225) / 3 = (225+90+60+16)/225/3 = 391/675 = 0.579259
R_ABDE = 391 / 675
# A-C-D-E: same resources as A-B-D-E (S(B) = S(C)) -> 391/675 (a tie)
R_ACDE = 391 / 675
# A-B-F: (1 + 2/5 + 8/75) / 2 = (75+30+8)/75/2 = 113/150 = 0.753333
R_ABF = 113 / 150
# E-D-B-A: (1 + 2/5 + 16/75 + 112/1125) / 3 = (1125+450+240+112)/1125/3 = 1927/3375 = 0.570963
R_EDBA = 1927 / 3375
# E-F-B-A: same resources as E-D-B-A (S(D) = S(F) from E) = 1927/3375
R_EFBA = 1927 / 3375
# E-D-C-A: (1 + 2/5 + 8/75 + 112/1125) / 3 = (1125+450+120+112)/1125/3 = 1807/3375 = 0.535407
R_EDCA = 1807 / 3375
# E-F: (1 + 2/5) / 1 = 1.4 ; F-E: (1 + 4/15) / 1 = 19/15 = 1.266667
R_EF = 1.4
R_FE = 19 / 15
# E-D-B-F: (1 + 2/5 + 16/75 + 2/5) / 3 = (75+30+16+30)/75/3 = 151/225 = 0.671111
R_EDBF = 151 / 225
# F-B-D-E: (1 + 4/15 + 8/45 + 4/15) / 3 = (45+12+8+12)/45/3 = 77/135 = 0.570370
R_FBDE = 77 / 135
# F-B-A: (1 + 4/15 + 16/225) / 2 = (225+60+16)/225/2 = 301/450 = 0.668889
R_FBA = 301 / 450


@pytest.fixture()
def g() -> nx.Graph:
    graph = nx.Graph()
    graph.add_edges_from(EDGES)
    return graph


def _seqs(paths: list[ScoredPath]) -> list[str]:
    return ["-".join(p.nodes) for p in paths]


def test_resources_from_a(g: nx.Graph) -> None:
    res, expanded = propagate_resources(g, "A", alpha=0.8, theta=0.05, max_hops=3)
    assert res == pytest.approx({"A": 1.0, "B": 0.4, "C": 0.4, "D": 4 / 15, "F": 8 / 75,
                                 "E": 16 / 225})
    assert "G" not in res  # only reachable through the pruned F
    # F is cut by theta (0.0356 < 0.05); E is on the last layer and never expanded.
    assert expanded == {"A", "B", "C", "D"}


def test_resources_from_e_and_f(g: nx.Graph) -> None:
    res_e, exp_e = propagate_resources(g, "E")
    assert res_e == pytest.approx({"E": 1.0, "D": 0.4, "F": 0.4, "B": 16 / 75, "C": 8 / 75,
                                   "G": 8 / 75, "A": 112 / 1125})
    assert exp_e == {"E", "D", "F", "B", "C", "G"}
    res_f, exp_f = propagate_resources(g, "F")
    assert res_f == pytest.approx({"F": 1.0, "B": 4 / 15, "E": 4 / 15, "G": 4 / 15,
                                   "A": 16 / 225, "D": 8 / 45, "C": 32 / 675})
    assert "A" not in exp_f and "D" in exp_f  # A: 0.0356 < 0.05, D: 0.0593 >= 0.05


def test_resource_set_once_not_updated_by_later_layers() -> None:
    # Triangle S-X-Y plus Y-Z: X and Y are both layer 1; the X-Y edge must not add to Y.
    graph = nx.Graph([("S", "X"), ("S", "Y"), ("X", "Y"), ("Y", "Z")])
    res, _ = propagate_resources(graph, "S", theta=0.0)
    assert res["X"] == pytest.approx(0.4)  # 0.8 * 1 / 2
    assert res["Y"] == pytest.approx(0.4)
    # Z: 0.8 * 0.4 / deg(Y)=3 = 0.106667
    assert res["Z"] == pytest.approx(0.32 / 3)


def test_paths_a_to_e_avoid_pruned_intermediate(g: nx.Graph) -> None:
    paths, used, capped = flow_paths(g, "A", {"E"})
    # A-B-F-E is NOT returned: F is pruned from A, so it cannot be an intermediate node.
    assert _seqs(paths) == ["A-B-D-E", "A-C-D-E"]
    assert [p.score for p in paths] == pytest.approx([R_ABDE, R_ACDE])
    assert paths[0].resources == pytest.approx({"A": 1.0, "B": 0.4, "D": 4 / 15, "E": 16 / 225})
    # Expansions: A>B, A>B>D, A>B>D>E, A>C, A>C>D, A>C>D>E = 6 (A>B>F skipped: useless)
    assert used == 6
    assert capped is False


def test_path_ending_at_pruned_node_is_returned(g: nx.Graph) -> None:
    paths, _, _ = flow_paths(g, "A", {"E", "F"})
    # DFS order with neighbours sorted: A-B-D-E, A-B-F, A-C-D-E
    assert _seqs(paths) == ["A-B-D-E", "A-B-F", "A-C-D-E"]
    assert paths[1].score == pytest.approx(R_ABF)
    assert "A-B-F-E" not in _seqs(paths)


def test_reverse_direction_uses_its_own_resources(g: nx.Graph) -> None:
    paths, _, _ = flow_paths(g, "E", {"A"})
    # From E, F is expanded, so E-F-B-A exists although A-B-F-E does not.
    assert _seqs(paths) == ["E-D-B-A", "E-D-C-A", "E-F-B-A"]
    assert [p.score for p in paths] == pytest.approx([R_EDBA, R_EDCA, R_EFBA])


def test_max_hops_limits_paths(g: nx.Graph) -> None:
    # A and E are 3 hops apart.
    assert flow_paths(g, "A", {"E"}, max_hops=2)[0] == []
    res, _ = propagate_resources(g, "A", max_hops=2)
    assert set(res) == {"A", "B", "C", "D", "F"}
    paths, _, _ = flow_paths(g, "A", {"D", "E"}, max_hops=2)
    # A-B-D: (1 + 0.4 + 4/15) / 2 = 25/30 = 5/6 ; A-C-D the same
    assert _seqs(paths) == ["A-B-D", "A-C-D"]
    assert [p.score for p in paths] == pytest.approx([5 / 6, 5 / 6])
    assert all(p.edges <= 2 for p in paths)
    assert flow_paths(g, "A", {"B"}, max_hops=0) == ([], 0, False)


def test_max_expansions_cap(g: nx.Graph) -> None:
    # Exactly enough budget (6, see above): complete, not capped.
    paths, used, capped = flow_paths(g, "A", {"E"}, max_expansions=6)
    assert (len(paths), used, capped) == (2, 6, False)
    # One short: the 6th step (A>C>D>E) is refused, so only the first path is found.
    paths, used, capped = flow_paths(g, "A", {"E"}, max_expansions=5)
    assert _seqs(paths) == ["A-B-D-E"]
    assert (used, capped) == (5, True)
    paths, used, capped = flow_paths(g, "A", {"E"}, max_expansions=0)
    assert (paths, used, capped) == ([], 0, True)


def test_isolated_and_missing_nodes(g: nx.Graph) -> None:
    g.add_node("Z")
    assert propagate_resources(g, "Z") == ({"Z": 1.0}, set())
    assert flow_paths(g, "Z", {"A"}) == ([], 0, False)
    assert flow_paths(g, "A", {"Z"}) == ([], 0, False)  # Z never gets a resource
    assert propagate_resources(g, "missing") == ({}, set())
    base, _ = top_paths(g, ["A", "E"])
    with_extra, stats = top_paths(g, ["A", "Z", "missing", "E", "A"])
    assert _seqs(with_extra) == _seqs(base)
    assert stats.starts == 3  # A, Z, E (missing and the duplicate A ignored)


def test_start_equal_to_target_ignored(g: nx.Graph) -> None:
    paths, _, _ = flow_paths(g, "A", {"A"})
    assert paths == []
    paths, _, _ = flow_paths(g, "A", {"A", "D"})
    assert _seqs(paths) == ["A-B-D", "A-C-D"]
    assert all(p.nodes[0] != p.nodes[-1] for p in paths)


def test_top_paths_two_nodes_dedupe(g: nx.Graph) -> None:
    paths, stats = top_paths(g, ["A", "E"])
    # A-B-D-E (0.579259) beats its reverse E-D-B-A (0.570963); A-C-D-E (0.579259) beats
    # E-D-C-A (0.535407); E-F-B-A (0.570963) has no reverse (A-B-F-E is pruned).
    # A-B-D-E / A-C-D-E tie on score and edges -> node sequence order.
    assert _seqs(paths) == ["A-B-D-E", "A-C-D-E", "E-F-B-A"]
    assert [p.score for p in paths] == pytest.approx([R_ABDE, R_ACDE, R_EFBA])
    assert stats.pairs_with_paths == 2  # (A, E) and (E, A)


def test_top_paths_three_nodes_ordering_and_stats(g: nx.Graph) -> None:
    paths, stats = top_paths(g, ["A", "E", "F"])
    # Kept directions: E-F 1.4 (> F-E 1.2667), A-B-F 0.7533 (> F-B-A 0.6689),
    # E-D-B-F 0.6711 (> F-B-D-E 0.5704), A-B-D-E 0.5793, A-C-D-E 0.5793, E-F-B-A 0.5710.
    assert _seqs(paths) == ["E-F", "A-B-F", "E-D-B-F", "A-B-D-E", "A-C-D-E", "E-F-B-A"]
    assert [p.score for p in paths] == pytest.approx(
        [R_EF, R_ABF, R_EDBF, R_ABDE, R_ACDE, R_EFBA])
    assert R_FE < R_EF and R_FBA < R_ABF and R_FBDE < R_EDBF  # the dropped reverses
    assert stats.starts == 3
    # Reached: 6 from A (not G) + 7 from E + 7 from F.
    assert stats.nodes_reached == 20
    # Pruned (layers 1..2 failing theta): F from A, A from F.
    assert stats.nodes_pruned == 2
    assert stats.capped_starts == []
    assert stats.pairs_with_paths == 6  # every ordered pair of {A, E, F}
    assert stats.expansions > 0
    top2, _ = top_paths(g, ["A", "E", "F"], top_k=2)
    assert _seqs(top2) == ["E-F", "A-B-F"]
    assert top_paths(g, ["A", "E", "F"], top_k=0)[0] == []


def test_top_paths_capped_starts(g: nx.Graph) -> None:
    paths, stats = top_paths(g, ["A", "E"], max_expansions=1)
    # Each start gets one step (A>B, E>D) and reaches no target.
    assert paths == []
    assert stats.capped_starts == ["A", "E"]
    assert stats.expansions == 2


def test_determinism_independent_of_insertion_order() -> None:
    runs = []
    for seed in range(4):
        edges = list(EDGES)
        random.Random(seed).shuffle(edges)
        edges = [(b, a) if i % 2 else (a, b) for i, (a, b) in enumerate(edges)]
        graph = nx.Graph(edges)
        paths, stats = top_paths(graph, ["F", "A", "E"])
        runs.append(([(p.nodes, p.score, p.resources) for p in paths], stats))
    assert all(r == runs[0] for r in runs[1:])
    assert isinstance(runs[0][1], FlowStats)


def test_invalid_parameters(g: nx.Graph) -> None:
    with pytest.raises(ValueError):
        propagate_resources(g, "A", alpha=0)
    with pytest.raises(ValueError):
        flow_paths(g, "A", {"E"}, max_expansions=-1)
    with pytest.raises(ValueError):
        top_paths(g, ["A"], top_k=-1)


def test_dedupe_keeps_better_direction_whatever_the_start_order(g: nx.Graph) -> None:
    # F first: F-E (1.2667), F-B-A (0.6689), F-B-D-E (0.5704) are found before their better
    # reverses and must be replaced by them.
    paths, _ = top_paths(g, ["F", "E", "A"])
    assert _seqs(paths) == ["E-F", "A-B-F", "E-D-B-F", "A-B-D-E", "A-C-D-E", "E-F-B-A"]


def test_tie_break_fewer_edges_then_sequence() -> None:
    # alpha = 1, theta = 0 make every score exact in binary floating point.
    # Component 1: A - M - B (deg A = B = 1, deg M = 2).
    #   From A: S(M) = 1/1 = 1, S(B) = 1/2 -> A-M-B = (1 + 1 + 0.5) / 2 = 1.25; B-M-A the same.
    # Component 2: X - Z, each with 3 extra leaves (deg X = deg Z = 4).
    #   From X: S(Z) = 1/4 -> X-Z = (1 + 0.25) / 1 = 1.25; Z-X the same.
    # Equal scores: the 1-edge X-Z comes before the 2-edge A-M-B (although "A" < "X");
    # equal reverses keep the lexicographically smaller sequence.
    graph = nx.Graph([("A", "M"), ("M", "B"), ("X", "Z")])
    graph.add_edges_from([("X", f"x{i}") for i in range(3)] + [("Z", f"z{i}") for i in range(3)])
    for order in (["A", "B", "X", "Z"], ["Z", "X", "B", "A"]):
        paths, _ = top_paths(graph, order, alpha=1.0, theta=0.0)
        assert _seqs(paths) == ["X-Z", "A-M-B"]
        assert [p.score for p in paths] == [1.25, 1.25]


def _brute_force(graph: nx.Graph, start: str, targets: set[str], max_hops: int) -> list[str]:
    res, expanded = propagate_resources(graph, start, max_hops=max_hops)
    found = []
    for t in targets - {start}:
        if t not in res:
            continue
        for p in nx.all_simple_paths(graph, start, t, cutoff=max_hops):
            if all(n in res for n in p) and all(n in expanded for n in p[:-1]):
                found.append("-".join(p))
    return sorted(found)


@pytest.mark.parametrize("seed", range(6))
def test_search_matches_brute_force(seed: int) -> None:
    graph = nx.relabel_nodes(nx.gnm_random_graph(30, 45, seed=seed), lambda n: f"n{n:02d}")
    rng = random.Random(seed)
    nodes = sorted(graph)
    for start in rng.sample(nodes, 5):
        targets = set(rng.sample(nodes, 8))
        paths, _, capped = flow_paths(graph, start, targets)
        assert not capped
        assert sorted(_seqs(paths)) == _brute_force(graph, start, targets, 3)
        for p in paths:
            assert p.score == pytest.approx(sum(p.resources.values()) / (len(p.nodes) - 1))
