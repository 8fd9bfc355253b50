"""Compare's "what differs": each mode's top-k evidence in its order, and the chunks only one mode has."""
from __future__ import annotations

from core.types import ChunkHit, RetrievalResult
from ui.mode_differences import ONLY_HERE, difference_rows, only_here, top_chunks


def _result(mode: str, ids: list[str]) -> RetrievalResult:
    result = RetrievalResult(mode=mode, query="q", params={})
    result.evidence_chunk_ids = ids
    for i, cid in enumerate(ids):
        hit = ChunkHit.make(cid, 1.0, "t")
        hit.doc_name, hit.order = f"doc{cid}.md", i
        result.chunks.append(hit)
    return result


def test_only_here_is_what_no_other_top_k_holds():
    results = {"a": _result("a", ["1", "2", "3", "9"]), "b": _result("b", ["2", "1", "4"]), "c": _result("c", ["3"])}
    assert only_here(results, k=3) == {"a": [], "b": ["4"], "c": []}
    assert only_here(results, k=4) == {"a": ["9"], "b": ["4"], "c": []}
    assert top_chunks(results["a"], 2) == ["1", "2"]


def test_rows_keep_each_modes_order_and_mark_what_only_it_found():
    results = {"a": _result("a", ["1", "2"]), "b": _result("b", ["2", "5"])}
    rows = difference_rows(results, k=3)
    assert [r["rank"] for r in rows] == ["1", "2", "3", "only here"]
    assert rows[0] == {"rank": "1", "a": f"{ONLY_HERE}doc1.md, chunk 1", "b": "doc2.md, chunk 1"}
    assert rows[1] == {"rank": "2", "a": "doc2.md, chunk 2", "b": f"{ONLY_HERE}doc5.md, chunk 2"}
    assert rows[2] == {"rank": "3", "a": "", "b": ""}
    assert rows[3] == {"rank": "only here", "a": "1 of 2", "b": "1 of 2"}
