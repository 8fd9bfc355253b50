"""The Knowledge graph page reads its view from storage (issue 23): ``core.api.graph_selection`` /
``graph_summary`` / ``graph_node`` / ``graph_edge`` give exactly what selecting on the whole networkx graph
gave (the page's former ``select_view``, kept below as the reference) — the same drawn nodes in the same
order, the same edges and attributes, the same counts, type choices, search matches and neighbourhoods —
on the indexed sample corpus and, through the PostgreSQL adapter too, on a generated graph with hubs,
isolated nodes, ties, types and hostile or non-ASCII names. Opening the page never builds the whole
graph, and the drawn HTML escapes document text."""
from __future__ import annotations

import random
from typing import Hashable

import networkx as nx
import pytest

from conftest import HashEmbedder
from postgres_fixture import pg_store, postgres_server  # noqa: F401 - fixtures

from core import api
from core.auth import LOCAL_ADMIN
from core.types import Chunk, ChunkExtraction, MentionRecord


# --- the reference: the page's selection over the whole networkx graph (main 1ab4431) -------------
def _name(graph: nx.Graph, node: Hashable) -> str:
    return str(graph.nodes[node].get("name") or node)


def select_view(graph: nx.Graph, kind_attr: str, search: str, depth: int, types: tuple[str, ...],
                min_degree: int, max_nodes: int) -> tuple[list[Hashable], list[Hashable], int]:
    if types:
        wanted = set(types)
        graph = graph.subgraph([n for n, d in graph.nodes(data=True) if str(d.get(kind_attr) or "") in wanted])
    query = search.strip().lower()
    matches: list[Hashable] = []
    distance: dict[Hashable, int] = {}
    if query:
        matches = [n for n in graph.nodes if query in _name(graph, n).lower() or query in str(n).lower()]
        for seed in matches:
            for node, hops in nx.single_source_shortest_path_length(graph, seed, cutoff=depth).items():
                distance[node] = min(distance.get(node, hops), hops)
        candidates = list(distance)
    else:
        candidates = list(graph.nodes)
    degree = dict(graph.degree())
    match_set = set(matches)
    eligible = [n for n in candidates if n in match_set or degree.get(n, 0) >= min_degree]
    eligible.sort(key=lambda n: (n not in match_set, distance.get(n, 0), -degree.get(n, 0), str(n)))
    return eligible[:max_nodes], matches, len(eligible)


def _edges(graph: nx.Graph) -> dict[tuple, dict]:
    return {tuple(sorted((a, b))): dict(d) for a, b, d in graph.edges(data=True)}


def cases(graph: nx.Graph, kinds: list[str], seed: int = 7) -> list[tuple]:
    """The default view, budgets, degree floors, type filters and searches of 1–4 letters at depth 0–3."""
    rnd = random.Random(seed)
    names = sorted(_name(graph, n) for n in graph.nodes)
    out: list[tuple] = [("", 1, (), 0, 60), ("", 1, (), 3, 60), ("", 1, (), 0, 10), ("", 1, (), 0, 2000),
                        ("", 1, tuple(kinds[:2]), 0, 60), ("", 1, tuple(kinds[-1:]), 1, 25)]
    for i in range(14):
        name = rnd.choice(names)
        start = rnd.randrange(max(len(name) - 2, 1))
        query = name[start:start + rnd.randint(1, 4)]
        query = query.upper() if i % 5 == 0 else query
        types = tuple(rnd.sample(kinds, min(2, len(kinds)))) if i % 4 == 0 and kinds else ()
        out.append((query, i % 4, types, i % 3, 60))
    return out + [("no-such-node-xyz", 2, (), 0, 60), ("  ", 1, (), 0, 60)]


def assert_same_views(ws, mention: bool, limit: int = 0) -> int:
    graph = ws.mention_graph() if mention else ws.knowledge_graph()
    kind = "label" if mention else "type"
    summary = api.graph_summary(LOCAL_ADMIN, ws, mention)
    assert summary.nodes == graph.number_of_nodes() > 0
    assert list(summary.kinds) == sorted({str(d.get(kind) or "") for _, d in graph.nodes(data=True)} - {""})
    checked = 0
    for case in cases(graph, list(summary.kinds))[:limit or None]:
        nodes, matches, eligible = select_view(graph, kind, *case)
        got = api.graph_selection(LOCAL_ADMIN, ws, mention, *case)
        assert got.nodes == [str(n) for n in nodes], case
        assert sorted(got.matches) == sorted(map(str, matches)) and got.eligible == eligible, case
        view = graph.subgraph(nodes)
        assert dict(got.graph.nodes(data=True)) == dict(view.nodes(data=True)), case
        assert _edges(got.graph) == _edges(view), case
        checked += 1
    for node in sorted(graph.nodes, key=lambda n: -graph.degree(n))[:4] + sorted(graph.nodes)[:2]:
        detail = api.graph_node(LOCAL_ADMIN, ws, mention, str(node))
        assert detail is not None and detail.degree == graph.degree(node)
        assert detail.attributes == dict(graph.nodes[node])
        assert [(k, name, data) for k, name, data in detail.neighbours] == [
            (str(o), _name(graph, o), dict(graph.edges[node, o])) for o in graph.neighbors(node)]
        other = next(iter(graph.neighbors(node)), None)
        if other is not None:
            edge = api.graph_edge(LOCAL_ADMIN, ws, mention, str(other), str(node))  # either order
            assert edge is not None and edge.attributes == dict(graph.edges[node, other])
            assert {edge.name_a, edge.name_b} == {_name(graph, node), _name(graph, other)}
    assert api.graph_node(LOCAL_ADMIN, ws, mention, "no such node") is None
    return checked


# --- the indexed sample corpus ----------------------------------------------------------------------
@pytest.mark.parametrize("mention", [False, True], ids=["knowledge", "mention"])
def test_storage_views_equal_the_networkx_selection_on_the_sample_corpus(sample_ws, mention):
    assert assert_same_views(sample_ws, mention) >= 20
    if mention:
        graph = sample_ws.mention_graph()
        term = max(graph.nodes, key=graph.degree)
        assert api.mention_chunks(LOCAL_ADMIN, sample_ws, [term]) == {term: sample_ws.mention_index()[term]}
        detail = api.graph_node(LOCAL_ADMIN, sample_ws, True, term)
        assert detail.chunk_counts == sample_ws.mention_index()[term]


def test_a_stubbed_selection_is_caught(sample_ws, monkeypatch):
    """The comparison guards the real selection: the first 60 keys (a stub) differ from the best 60."""
    import core.graph_page as graph_page

    def first_rows(keys, min_degree, max_nodes):
        return keys.keys[:max_nodes], len(keys.keys)

    monkeypatch.setattr(graph_page, "_best", first_rows)
    with pytest.raises(AssertionError):
        assert_same_views(sample_ws, False, limit=1)


def test_opening_the_page_never_loads_the_whole_graph(sample_ws_copy, monkeypatch):
    """The page's open (``ui.graph_page.open_default``, what the benchmark times) reads no whole graph."""
    from core.storage import graph_rows
    from ui.graph_page import open_default

    def refuse(*_args, **_kwargs):
        raise AssertionError("the whole graph was loaded")

    for name in ("load_graph_view", "load_mention_graph", "load_mention_index"):
        monkeypatch.setattr(graph_rows.GraphRows, name, refuse)
    for mention in (False, True):
        opened = open_default(LOCAL_ADMIN, sample_ws_copy, mention)
        assert opened["view"].shown == 60 and opened["detail"].key == opened["view"].ids[0]
        assert "vis.Network" in opened["view"].html


# --- a generated graph on both backends -------------------------------------------------------------
HOSTILE = '<script>alert("kg")</script><img src=x onerror=alert(1)>'


@pytest.fixture(params=["sqlite", "postgresql"])
def generated_ws(request, tmp_path):
    from core.workspace import Workspace

    spec = "sqlite" if request.param == "sqlite" else request.getfixturevalue("pg_store")
    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder(), store=spec)
    fill(ws)
    yield ws
    ws.close()


def fill(ws) -> None:
    """~260 entities (hubs, ties, isolated ones, 'İstanbul', 'Kelvin' with U+212A, a hostile name) and
    ~700 relations; a mention graph of 120 terms."""
    rnd = random.Random(23)
    types = ["PERSON", "ORG", "GPE", "EVENT", "UNKNOWN"]
    names = [f"Node {i:03d}" for i in range(250)] + ["\u0130stanbul Port", "\u212aelvin Works", "Ünïcode Ørg",
                                                      HOSTILE, "100% _under_ !bang"]
    keys = [n.lower() for n in names]
    records = ws.records
    with records.unit_of_work():
        records.insert_document("d1", "d1.txt", "test", "h1", "text", 1)
        records.insert_chunks([Chunk("d1-c0", "d1", 0, "text", 1, 0)])
        for key, name in zip(keys, names):
            records.write_entity(key, name, rnd.choice(types), f"About {name}.", ["d1-c0"], "v-" + key, [name])
        pairs: set[tuple[str, str]] = set()
        hubs = keys[:6]
        while len(pairs) < 700:
            a = rnd.choice(hubs) if rnd.random() < 0.4 else rnd.choice(keys[:200] + keys[250:])
            b = rnd.choice(keys[:200] + keys[250:])
            if a != b:
                pairs.add((min(a, b), max(a, b)))
        for a, b in sorted(pairs):
            records.write_relation((a, b), ["kw", a[:3]], f"{a} and {b}.", float(rnd.randint(1, 5)), ["d1-c0"], "r")
        terms = [f"term{i}" for i in range(118)] + ["Çağ", "ТЕРМИН"]
        counts = {t: rnd.randint(1, 3) for t in terms}
        labels = {t: rnd.choice(["PROPN", "NOUN", "ORG"]) for t in terms}
        co = {}
        for _ in range(400):
            a, b = sorted(rnd.sample(terms[:100] + terms[118:], 2))
            co[(a, b)] = rnd.randint(1, 4)
        records.insert_chunk_extraction("d1", "d1-c0", ChunkExtraction(mentions=MentionRecord(counts, labels, co)))
    ws.bump_generation()


@pytest.mark.parametrize("mention", [False, True], ids=["knowledge", "mention"])
def test_storage_views_equal_the_networkx_selection_on_both_backends(generated_ws, mention):
    assert assert_same_views(generated_ws, mention) >= 20
    for query in ("i", "k", "ist", "elvin", "100%", "_under_", "!b", "ünï", "ørg", "çağ", "термин", "script"):
        graph = generated_ws.mention_graph() if mention else generated_ws.knowledge_graph()
        nodes, matches, eligible = select_view(graph, "label" if mention else "type", query, 1, (), 0, 60)
        got = api.graph_selection(LOCAL_ADMIN, generated_ws, mention, query, 1, (), 0, 60)
        assert (got.nodes, sorted(got.matches), got.eligible) == ([str(n) for n in nodes], sorted(matches),
                                                                    eligible), query


def test_the_drawn_view_escapes_document_text(generated_ws):
    from ui.graph_page import draw_view

    view = draw_view(LOCAL_ADMIN, generated_ws, False, search="script", depth=1)
    assert HOSTILE.lower() in view.ids and view.names[HOSTILE.lower()] == HOSTILE
    assert '<script>alert("kg")' not in view.html and "<img src=x" not in view.html
    assert "\\u0026lt;script\\u0026gt;alert(\\u0026quot;kg\\u0026quot;)" in view.html  # escaped, in JSON
