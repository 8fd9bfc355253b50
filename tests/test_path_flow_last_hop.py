"""PathRAG's bounded search looks only at targets on a path's last hop (issue 36): the paths, their
order, the expansions counted and the cap are those of the search that looks at every child and
skips the non-targets, on random graphs and budgets."""
from __future__ import annotations

import random

import networkx as nx
import pytest

from core.retrieval import path_flow
from core.storage.graph_view import as_graph_view


def every_child_search(graph, start, targets, flow, max_hops, max_expansions):
    """The search before the change: every useful child of every node is looked at."""
    resources, expanded = flow.resources, flow.expanded
    targets = {t for t in targets if t != start and t in resources}
    if not targets or start not in expanded or max_hops < 1:
        return [], 0, False
    useful = targets | expanded

    def kids(u):
        return sorted((v for v in graph.neighbours(u) if v in useful and v in resources), key=str)

    paths, expansions, capped = [], 0, False
    path, on_path, stack = [start], {start}, [iter(kids(start))]
    while stack:
        nxt = next(stack[-1], None)
        if nxt is None:
            stack.pop()
            on_path.discard(path.pop())
            continue
        if nxt in on_path:
            continue
        is_target = nxt in targets
        can_continue = len(path) < max_hops and nxt in expanded
        if not (is_target or can_continue):
            continue
        if expansions >= max_expansions:
            capped = True
            break
        expansions += 1
        if is_target:
            paths.append(path_flow._make_path(path + [nxt], resources))
        if can_continue:
            path.append(nxt)
            on_path.add(nxt)
            stack.append(iter(kids(nxt)))
    return paths, expansions, capped


@pytest.mark.parametrize("seed", range(12))
def test_last_hop_search_equals_the_search_over_every_child(seed):
    rng = random.Random(seed)
    graph = as_graph_view(nx.gnm_random_graph(40, rng.randint(60, 160), seed=seed))
    nodes = [n for n in graph.keys()]
    checked = 0
    for _ in range(6):
        start = rng.choice(nodes)
        targets = set(rng.sample(nodes, rng.randint(1, 8)))
        max_hops = rng.randint(1, 4)
        budget = rng.choice([3, 20, 20000])
        flow = path_flow._propagate(graph, start, 0.8, rng.choice([0.0, 0.02, 0.05]), max_hops)
        got = path_flow._search(graph, start, set(targets), flow, max_hops, budget)
        want = every_child_search(graph, start, set(targets), flow, max_hops, budget)
        assert [p.nodes for p in got[0]] == [p.nodes for p in want[0]]
        assert [p.score for p in got[0]] == [p.score for p in want[0]]
        assert got[1:] == want[1:]
        checked += len(want[0])
    assert checked > 0
