"""The contexts' exact token counts from segment tables (core.retrieval.token_counts) equal a direct
cl100k count of the whole text, whatever the text, and the table is what is read."""
from __future__ import annotations

import random

import pytest

from core.retrieval.token_counts import SegmentCounts, count_segments, segments
from core.tokens import count_tokens

PIECES = ["\n", "\n\n", " ", "  ", "\t", "\r\n", ".", ",", '"', "'s", "’", "(", ")", "[1]", "12,", "999,", "1000,",
          "Velmora", " Coast", "harbour", "école", "東京", "42", "2024", "-----Sources-----", "```csv", "x\u00a0y",
          " \n", "\n ", ":\n", "!!\n\n", "id,entity,type", "\u2028"]


def _random_text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 60)))


def test_segments_join_back_and_cut_only_before_non_space() -> None:
    text = "a\n b\nc\n\nd \n"
    parts = segments(text)
    assert "".join(parts) == text
    assert parts == ["a\n b\n", "c\n\n", "d \n"]
    assert segments("") == []


@pytest.mark.parametrize("seed", range(6))
def test_counts_are_additive_over_segments(seed: int) -> None:
    """cl100k never merges across a cut: the sum over segments is the direct count (random texts built
    from line breaks, spaces, punctuation, numbers, non-Latin letters)."""
    rng = random.Random(seed)
    for _ in range(150):
        text = _random_text(rng)
        assert sum(count_tokens(s) for s in segments(text)) == count_tokens(text), repr(text)


@pytest.mark.parametrize("seed", range(4))
def test_table_counts_equal_direct_counts(seed: int) -> None:
    """A table built from some texts counts any text made of them (and of unknown pieces) exactly."""
    rng = random.Random(100 + seed)
    known = [_random_text(rng) for _ in range(30)]
    counts = SegmentCounts(count_segments(known))
    for _ in range(150):
        text = "".join(rng.choice(known + [_random_text(rng)]) for _ in range(rng.randint(0, 6)))
        assert counts.count(text) == count_tokens(text), repr(text)


def test_rows_numbered_up_to_999_cost_what_row_1_costs() -> None:
    row = '1,"Velmora Marine Institute",ORGANIZATION,"A research institute, founded 1911",7\n'
    table = SegmentCounts({row: count_tokens(row)})
    for number in (1, 2, 12, 99, 100, 999, 1000, 12345):
        text = f"id,entity\n{number}{row[1:]}```\n"
        assert table.count(text) == count_tokens(text)


def test_the_table_is_read_not_recounted() -> None:
    """A known segment's count comes from the table (a wrong entry shows through), unknown ones are encoded."""
    counts = SegmentCounts({"Velmora harbour\n": 1000})
    assert counts.count("Velmora harbour\nLighthouse") == 1000 + count_tokens("Lighthouse")
    assert counts.count("Lighthouse") == count_tokens("Lighthouse")
    assert counts.count("") == 0


def test_a_chunk_block_is_counted_once_per_citation_and_text() -> None:
    """``SegmentCounts.block_cost`` (the LightRAG budgets' chunk cost) equals ``chunk_cost`` with the same
    counter, is read from its memo the second time, and a block with another citation or text is
    counted again (not served a stale memo)."""
    from core.retrieval.lightrag_context import chunk_cost
    from core.types import ChunkHit

    def hit(cid: str, text: str, doc: str, page: int | None) -> ChunkHit:
        record = ChunkHit.make(cid, 1.0, "test")
        record.text, record.doc_name, record.order, record.page_start, record.page_end = text, doc, 0, page, page
        return record

    calls: list[str] = []

    def counting(text: str) -> int:
        calls.append(text)
        return count_tokens(text)

    counts = SegmentCounts({})
    counts.count = counting  # type: ignore[method-assign]
    first = hit("c1", "Ruth Harland kept the light\nfor twenty-six years.", "Kestrel.md", None)
    same = hit("c1", first.text, "Kestrel.md", None)
    paged = hit("c1", first.text, "Kestrel.pdf", 4)
    longer = hit("c1", first.text + " Then she left.", "Kestrel.md", None)
    for record in (first, same, paged, longer):
        assert counts.block_cost(record) == chunk_cost(record, count_tokens)
    assert len(calls) == 3  # `same` came from the memo; `paged` and `longer` were counted
    assert counts.block_cost(paged) > counts.block_cost(first)


@pytest.mark.parametrize("seed", range(3))
def test_the_bound_of_blank_line_joined_parts_is_never_under_the_count(seed: int) -> None:
    """``context_blocks.tokens_at_most`` (path mode skips its full rendering under it): never below the
    exact count of the joined text, the last part counted exactly, and no bound at all when a part would
    not start a new piece."""
    import sys

    from core.retrieval.context_blocks import tokens_at_most

    rng = random.Random(seed)
    bounded = 0
    for _ in range(300):
        parts = [_random_text(rng) for _ in range(rng.randint(1, 5))]
        bound = tokens_at_most(parts, count_tokens)
        if bound == sys.maxsize:
            assert any(not p[:1] or p[:1].isspace() for p in parts[1:])
            continue
        bounded += 1
        assert bound >= count_tokens("\n\n".join(parts)), parts
    assert bounded > 100
    assert tokens_at_most(["Question: who?", "-----Sources-----\n[1] (a)\ntext"], count_tokens) == \
        len("Question: who?") + 2 + count_tokens("-----Sources-----\n[1] (a)\ntext")
    assert tokens_at_most(["a", " b"], count_tokens) == sys.maxsize


def test_path_context_renders_the_full_blocks_only_when_they_may_not_fit() -> None:
    """``path_search._finish_within`` with ``parts``: under the bound the full rendering is skipped (the
    compact one replaces it and would be identical in what it keeps); over it, it runs and drops."""
    from core.retrieval.path_search import _finish_within
    from core.types import RetrievalResult

    blocks, sources = ["Path #2: a -> b", "Path #1: c -> d"], []
    rendered: list[str] = []

    def render(b: list, s: list) -> str:
        rendered.append("full")
        return "\n\n".join(["Question: q", *b])

    def compact(b: list, s: list) -> str:
        return "\n\n".join(["Question: q", *b])

    def parts(b: list, s: list) -> list[str]:
        return ["Question: q", *b]

    kept, _ = _finish_within(RetrievalResult(mode="path", query="q"), 1000, render, lambda b, s: [], blocks, sources,
                             count_tokens, compact, 1000, parts)
    assert rendered == [] and kept == blocks
    tight = count_tokens("\n\n".join(["Question: q", blocks[0]]))
    result = RetrievalResult(mode="path", query="q")
    kept, _ = _finish_within(result, tight, render, lambda b, s: [], blocks, sources, count_tokens, compact, tight, parts)
    assert rendered and kept == blocks[:1] and result.context_tokens <= tight
