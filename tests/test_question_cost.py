"""What a question costs in the retrieval modes, beyond its embedding (tests/test_query_helper.py): work
that would give the same result is not done (the tree mode's item sizes come from the counts stored at
indexing time; a chunk body is not re-encoded when its count is there)."""
from __future__ import annotations

QUESTIONS = ["Who was the last resident keeper of Kestrel Point Lighthouse?",
             "In what year did the Velmora Coastal Railway open to passenger traffic?"]


def test_tree_budget_encodes_no_body_with_a_stored_count(sample_ws, monkeypatch):
    from core.retrieval import tree_items
    from core.retrieval.registry import query_context, retrieve

    before = [retrieve(query_context(sample_ws, q), "tree") for q in QUESTIONS]
    encoded: list[str] = []
    counting = tree_items.count_tokens

    def recording(text: str) -> int:
        encoded.append(text)
        return counting(text)

    monkeypatch.setattr(tree_items, "count_tokens", recording)
    after = [retrieve(query_context(sample_ws, q), "tree") for q in QUESTIONS]
    bodies = {hit.text for result in after for hit in result.chunks} | {s.text for result in after for s in result.summaries}
    assert bodies  # the budget ran, over chunk and summary items
    assert not bodies & set(encoded)  # every body had its stored count (headers: tests/test_tree_items_budget.py)
    for old, new in zip(before, after):
        assert (new.context_text, new.context_tokens, [h.chunk_id for h in new.chunks]) == \
            (old.context_text, old.context_tokens, [h.chunk_id for h in old.chunks])
