"""The tree mode's budget pass (``tree_items.items_within``): headers are costed by their UTF-8 size
while that bound cannot change what is kept, and encoded only when it could; the kept prefix is always
the one the exact costs give."""
from __future__ import annotations

import random

from core.retrieval import tree_items
from core.tokens import count_tokens
from core.types import ChunkHit, SummaryHit


def chunk_item(i: int, text: str, kind: str = "chunk") -> tree_items.Item:
    hit = ChunkHit.make(f"c{i}", 1.0, "test")
    hit.text, hit.doc_name, hit.order = text, f"Dokument Ω {i}", i
    hit.pairs = [["Émile Zola", "Paris"], ["Zola", "L'Assommoir"]]
    return kind, hit


def exact_prefix(items, sizes, budget):
    """The budget loop with every header encoded (what the pass did before the bound)."""
    kept, used = [], 0
    for item in items:
        header, body = tree_items.split_item(item)
        size = sizes.get(tree_items.item_id(item))
        cost = count_tokens(header) + (count_tokens(body) if size is None else size) + 1
        if used + cost > budget:
            break
        kept.append(item)
        used += cost
    return kept


def recording(monkeypatch):
    seen: list[str] = []

    def count(text: str) -> int:
        seen.append(text)
        return count_tokens(text)
    monkeypatch.setattr(tree_items, "count_tokens", count)
    return seen


def test_far_under_the_budget_no_header_is_encoded(monkeypatch):
    items = [chunk_item(i, f"Body {i} of a chunk.", kind) for i, kind in enumerate(["chunk", "local"] * 5)]
    sizes = {tree_items.item_id(x): 6 for x in items}
    seen = recording(monkeypatch)
    assert tree_items.items_within(items, sizes, 30_000) == items
    assert seen == []  # the stored counts and the headers' sizes decided


def test_near_the_budget_the_headers_are_encoded_and_the_prefix_is_exact(monkeypatch):
    items = [chunk_item(i, "word " * 20, kind) for i, kind in enumerate(["chunk", "local"] * 5)]
    sizes = {tree_items.item_id(x): count_tokens("word " * 20) for x in items}
    budget = sum(len(tree_items.split_item(x)[0].encode()) + sizes[tree_items.item_id(x)] + 1 for x in items) - 5
    seen = recording(monkeypatch)
    kept = tree_items.items_within(items, sizes, budget)
    assert kept == items  # exact headers are far shorter than their bytes: everything fits
    assert seen  # the bound alone would have dropped the last item: the headers were encoded


def test_the_prefix_equals_the_exact_one_at_every_budget():
    rng = random.Random(7)
    words = ["alpha", "Ωmega", "日本", "data", "x", "1234", "\n", "Zürich"]
    items: list[tree_items.Item] = []
    for i in range(12):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 40)))
        if i % 3 == 2:
            node = type("Node", (), {"node_id": f"s{i}", "leaf_chunk_ids": ["c1", "c2"], "level": 1, "scope": "doc",
                                     "doc_id": "d", "text": text})()
            items.append(("summary", SummaryHit.make(node, 1.0, "test", "Doc")))
        else:
            items.append(chunk_item(i, text, "local" if i % 2 else "chunk"))
    sizes = {tree_items.item_id(x): count_tokens(tree_items.split_item(x)[1]) for x in items[::2]}  # some unstored
    total = sum(count_tokens(tree_items.split_item(x)[0]) + count_tokens(tree_items.split_item(x)[1]) + 1
                for x in items)
    for budget in range(0, total + 40):
        assert tree_items.items_within(items, sizes, budget) == exact_prefix(items, sizes, budget), budget
