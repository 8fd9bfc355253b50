"""The ``auto`` router's one composite candidate, ``ppr+mix``: run ``ppr`` and ``mix`` on the question and
interleave their evidence chunks rank by rank (ppr's first, mix's first, ppr's second, …; a chunk both
found counts at its first place). It is what a router does when it cannot tell which of two close modes
will find the evidence: measured on the two MuSiQue dev sets, no question feature told ppr's wins from
mix's, and the interleaving beat both on both sets (docs/auto-mode.md).

The fused result is a chunk list, like ppr's: the interleaved chunks (at most twice ``naive_top_k``), cut to
``max_total_tokens``, each with the ranks it had in the two modes. Its trace holds both modes' traces, so
Inspect's ppr panel reads the walk. Nothing else is fused: entities and relations stay with ``mix``."""
from __future__ import annotations

from typing import Sequence

from core.retrieval.context_blocks import prefix_within, sources_text
from core.retrieval.funnel import set_funnel
from core.retrieval.query import QueryContext
from core.retrieval.registry import modes, registry
from core.retrieval.results import fill_chunk_texts, finish, new_result
from core.retrieval.token_counts import context_counter
from core.types import ChunkHit, RetrievalResult

PARTS = ("ppr", "mix")  # interleaved in this order: ppr's rank 1 comes first
FUSED = "+".join(PARTS)


def available() -> bool:
    """Whether both parts are registered modes (the fused candidate exists only then)."""
    return all(part in modes() for part in PARTS)


def interleave(rankings: Sequence[Sequence[str]]) -> list[str]:
    """The rankings' items taken rank by rank, in the rankings' order, each item once (its first place)."""
    out: dict[str, None] = {}
    for rank in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking):
                out.setdefault(ranking[rank], None)
    return list(out)


def fused_result(ctx: QueryContext) -> RetrievalResult:
    """``ppr`` and ``mix`` on ``ctx``, their evidence chunks interleaved (see the module doc)."""
    found = {part: registry()[part].retrieve(ctx) for part in PARTS}
    result = new_result(ctx, FUSED, ("naive_top_k", "max_total_tokens"))
    ranks = {part: {cid: i for i, cid in enumerate(r.evidence_chunk_ids, start=1)} for part, r in found.items()}
    order = interleave([found[part].evidence_chunk_ids for part in PARTS])[:2 * ctx.settings.naive_top_k]
    records = []
    for cid in order:
        where = ", ".join(f"rank {ranks[p][cid]} in {p}" for p in PARTS if cid in ranks[p])
        records.append(ChunkHit.make(cid, 0.0, f"{FUSED}: {where}"))
    records = fill_chunk_texts(ctx.ws, records)
    set_funnel(result, [r.chunk_id for r in records])
    count = context_counter(ctx.ws).count
    records, _ = prefix_within(records, lambda c: count(c.text), ctx.settings.max_total_tokens)
    result.chunks = records
    for part, part_result in found.items():
        for stage, ms in part_result.timings_ms.items():
            result.timings_ms[f"{part}:{stage}"] = ms
        result.trace.extend(part_result.trace)
        result.llm_calls += part_result.llm_calls
        result.prompt_tokens += part_result.prompt_tokens
        result.completion_tokens += part_result.completion_tokens
    result.keywords = found["mix"].keywords
    result.log("context", "fusion", parts=list(PARTS), chunks=len(records),
               both=sum(1 for c in records if all(c.chunk_id in ranks[p] for p in PARTS)))
    finish(result, sources_text(records), [c.chunk_id for c in records], count)
    return result
