"""The tree mode's evidence order inside a summary (``tree_search._evidence``): leaves with the most
query-entity occurrences first, then the tie-break, then their first position among the summary's
leaves; in RAGScope's order the leaves with neither weight nor tie-break follow after every item."""
from __future__ import annotations

from core.retrieval.tree_search import _evidence
from core.types import ChunkHit, SummaryHit


def summary(node_id: str, leaves: list[str]) -> SummaryHit:
    return SummaryHit(node_id=node_id, level=1, scope="doc", doc_id="d", doc_name="D", text="",
                      score=1.0, reason="", leaf_chunk_ids=leaves)


def test_leaves_by_weight_then_tie_then_first_position() -> None:
    kept = [("summary", summary("s1", ["c1", "c2", "c3", "c4", "c2"]))]
    weight = {"c3": 2, "c4": 2, "c1": 1}
    tie = {"c4": 1.0}
    # c4 and c3 share the top weight (c4 wins the tie-break); c2's two places keep its first position
    # (1), so its repeat sorts beside it and before nothing else of weight 0
    assert _evidence(kept, weight, True, tie) == ["c4", "c3", "c1", "c2", "c2"]


def test_repeated_leaf_keeps_its_first_position_among_equals() -> None:
    kept = [("summary", summary("s1", ["a", "b", "a", "c"]))]
    assert _evidence(kept, {"z": 1}, True, {}) == ["a", "a", "b", "c"]


def test_unweighted_leaves_follow_every_item_in_ragscope_order() -> None:
    chunk = ChunkHit.make("c9", 1.0, "")
    kept = [("summary", summary("s1", ["c1", "c2", "c3"])), ("chunk", chunk)]
    assert _evidence(kept, {"c2": 1}, False, {"c3": 2.0}) == ["c2", "c3", "c9", "c1"]
    assert _evidence(kept, {"c2": 1}, True, {"c3": 2.0}) == ["c2", "c3", "c1", "c9"]
