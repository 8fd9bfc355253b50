"""The tree mode's context items (``core.retrieval.tree_search``): how an item renders (header and
body) and what it costs against the token budget.

An item is ``(kind, hit)`` with kind ``"summary"`` (a summary node), ``"local"`` (a chunk of the local
branch, headed by the entity pairs that selected it) or ``"chunk"`` (a chunk of a global branch,
headed by its citation). A body's cost is the token count stored at indexing time; a header's cost is
bounded by its UTF-8 size (a cl100k token is at least one byte), so the budget pass encodes headers
only when the bound could change what is kept.
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence, Tuple, Union

from core.citations import hit_citation
from core.retrieval.generation_rows import chunk_rows
from core.retrieval.query import QueryContext
from core.tokens import count_tokens
from core.types import ChunkHit, SummaryHit

Item = Tuple[str, Union[ChunkHit, SummaryHit]]  # ("summary" | "local" | "chunk", the hit)


def split_item(item: Item) -> tuple[str, str]:
    """(header, body) of one context item; the body is the chunk or summary text."""
    kind, rec = item
    if isinstance(rec, SummaryHit):
        where = "the corpus" if rec.scope == "corpus" else rec.doc_name or "a document"
        return f"[summary of {where}, level {rec.level}, {len(rec.leaf_chunk_ids)} chunks]\n", rec.text
    if kind == "local":
        return "; ".join(f"{a}, {b}" for a, b in rec.pairs or []) + ": ", rec.text
    return f"[{hit_citation(rec)}]\n", rec.text


def render_item(item: Item) -> str:
    """The item as the context shows it before summary sentences are compacted: header then body."""
    header, body = split_item(item)
    return header + body


def item_id(item: Item) -> str:
    """The summary node id or the chunk id of an item."""
    rec = item[1]
    return rec.node_id if isinstance(rec, SummaryHit) else rec.chunk_id


def tokens_or_bytes(text: str, count: Callable[[str], int], budget: int) -> int:
    """``count(text)``, or the text's UTF-8 size when that is already within ``budget``: a cl100k token is
    at least one byte, so the size bounds the count, and a budget check then needs no count. The first
    budget pass only decides what to drop; the corpus-cap pass after it always counts exactly what the
    result shows (E2GraphRAG contexts are far under the 30,000-token default: the pass encoded ~1,400
    tokens per question for nothing)."""
    size = len(text.encode("utf-8"))
    return size if size <= budget else count(text)


def stored_tokens(ctx: QueryContext, items: Sequence[Item]) -> dict[str, int]:
    """Token counts recorded at indexing time for the items' bodies (chunks and summaries)."""
    tree = ctx.ws.tree_index()
    sizes = {i: int(tree[i].tokens) for i in (item_id(x) for x in items if x[0] == "summary") if i in tree}
    chunks = chunk_rows(ctx.ws).chunks(item_id(x) for x in items if x[0] != "summary")  # read once per generation
    sizes.update({cid: int(c.tokens) for cid, c in chunks.items()})
    return sizes


def body_tokens(item: Item, sizes: Mapping[str, int]) -> int:
    """The body's stored count, or its encoded count where none is stored."""
    size = sizes.get(item_id(item))
    return count_tokens(split_item(item)[1]) if size is None else size


def items_within(items: Sequence[Item], sizes: Mapping[str, int], budget: int) -> list[Item]:
    """The longest prefix of ``items`` whose costs (header tokens + body tokens + 1 separator) fit in
    ``budget``. Each header is first costed by its UTF-8 size, an upper bound of its count: while the
    bounded sum fits, the exact sum fits too. Only when the bound would stop the prefix are the kept
    headers encoded (once) and the rest costed exactly, so the prefix is always the exact one's."""
    kept: list[Item] = []
    used = 0
    exact = False
    for item in items:
        header = split_item(item)[0]
        body = body_tokens(item, sizes)
        if not exact and used + len(header.encode("utf-8")) + body + 1 > budget:
            exact = True  # the bound no longer decides: what is kept so far, with its exact headers
            used = sum(count_tokens(split_item(x)[0]) + body_tokens(x, sizes) + 1 for x in kept)
        cost = (count_tokens(header) if exact else len(header.encode("utf-8"))) + body + 1
        if used + cost > budget:
            break
        kept.append(item)
        used += cost
    return kept
