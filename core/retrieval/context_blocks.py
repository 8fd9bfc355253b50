"""Building a mode's context: the one source-block renderer, the one budget helper and the one way
to add the keyword extraction's LLM usage, shared by every mode that needs them (naive, the LightRAG
modes, path)."""
from __future__ import annotations

import sys
from typing import Any, Callable, Sequence, TypeVar

from core.citations import hit_citation
from core.types import ChunkHit

T = TypeVar("T")


def source_block(chunk: ChunkHit, index: int) -> str:
    """A chunk as the answer model sees it in the Sources section, numbered from 1:
    ``[index] (document, p. n)`` (``§ Heading``, ``l. n`` or ``chunk n`` where the document has no
    pages) then its text."""
    source = hit_citation(chunk)
    return f"[{index}] ({source})\n{chunk.text}"


def sources_text(chunks: Sequence[ChunkHit]) -> str:
    """The numbered source blocks of ``chunks`` in rank order, separated by blank lines."""
    return "\n\n".join(source_block(c, i) for i, c in enumerate(chunks, 1))


def add_keyword_usage(result: Any, usage: dict[str, int]) -> None:
    """Add the question's keyword extraction cost (``QueryContext.keyword_usage``: LLM calls and
    tokens, zero offline) to a mode's result."""
    result.llm_calls += int(usage.get("llm_calls", 0))
    result.prompt_tokens += int(usage.get("prompt_tokens", 0))
    result.completion_tokens += int(usage.get("completion_tokens", 0))


def fit_to_budget(lists: Sequence[list[Any]], measure: Callable[[], int], budget: int, floor: int = 0) -> int:
    """The one trimming loop: ``measure()`` renders the current lists and returns their exact token
    count; while it exceeds ``budget``, drop the last item of the first list holding more than ``floor``
    items (``lists`` in dropping order; changed in place) and measure again. Stops when no list can
    lose another item. Returns the number of items dropped."""
    dropped = 0
    while measure() > budget:
        victim = next((items for items in lists if len(items) > floor), None)
        if victim is None:
            break
        victim.pop()
        dropped += 1
    return dropped


def tokens_at_most(parts: Sequence[str], count: Callable[[str], int]) -> int:
    """An upper bound of ``count("\n\n".join(parts))`` that encodes only the last part: a part after a
    blank line that starts with a non-space character starts a new cl100k piece (the rule
    ``core.retrieval.token_counts`` relies on), so the count is the sum of the parts' own counts (each
    with its blank line), and a part never has more tokens than UTF-8 bytes. ``sys.maxsize`` when a
    part after the first is empty or starts with whitespace (no such cut)."""
    if any(not part[:1] or part[:1].isspace() for part in parts[1:]):
        return sys.maxsize
    if not parts:
        return count("")
    return sum(len(part.encode("utf-8")) + 2 for part in parts[:-1]) + count(parts[-1])


def prefix_within(items: Sequence[T], cost: Callable[[T], int], budget: int) -> tuple[list[T], int]:
    """The longest prefix of ``items`` whose summed costs fit in ``budget``, and its cost (lists are
    truncated, never skipped over, as LightRAG and PathRAG do)."""
    kept: list[T] = []
    used = 0
    for item in items:
        c = cost(item)
        if used + c > budget:
            break
        kept.append(item)
        used += c
    return kept, used
