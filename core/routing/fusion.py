"""The ``auto`` router's composite candidates: run two or more modes on the question and interleave their
evidence chunks rank by rank (the first part's first, the second part's first, …, then every part's
second; a chunk several parts found counts at its first place). It is what a router does when it
cannot tell which of some close modes will find the evidence: measured on the two MuSiQue dev sets,
no question feature told ppr's wins from mix's, and the interleaving beat each part (docs/auto-mode.md).

A fused result holds the interleaved chunks (at most ``naive_top_k`` per part) and, when a part is a
LightRAG mode (``mix``, ``hybrid``), that part's entity and relation rows, as mix carries them: the rows
under ``max_entity_tokens`` / ``max_relation_tokens``, the chunks in what is left of
``max_total_tokens``, rendered as a LightRAG context, so an LLM reads the relations as it does mix's.
Without such a part it is a chunk list. Its offline answer is naive's builder on the chunks either way. Each chunk's reason
gives its rank in every part that found it; the trace holds every part's trace and a ``fusion`` line,
so Inspect's ppr panel reads the walk."""
from __future__ import annotations

from typing import Mapping, Sequence

from core.retrieval.context_blocks import prefix_within, sources_text
from core.retrieval.context_dedup import render_compact_within
from core.retrieval.funnel import set_funnel
from core.retrieval.lightrag_context import (apply_budgets, entity_key, relation_key, renumber,
                                             round_robin)
from core.retrieval.query import QueryContext
from core.retrieval.registry import modes, registry
from core.retrieval.results import fill_chunk_texts, finish, new_result
from core.retrieval.token_counts import context_counter, corpus_tokens, graph_row_costs
from core.types import ChunkHit, RetrievalResult

PARTS = ("ppr", "mix")  # the first fused candidate, interleaved in this order: ppr's rank 1 comes first
FUSED = "+".join(PARTS)
# Every fused candidate the router may choose, by name -> its parts in interleaving order. The two larger
# ones add global (relations matched by the question's high-level keywords) and path (chains between the
# retrieved entities): the graph modes whose top evidence overlaps least with ppr's and mix's.
FUSIONS: dict[str, tuple[str, ...]] = {FUSED: PARTS, "ppr+mix+global": (*PARTS, "global"),
                                       "ppr+mix+global+path": (*PARTS, "global", "path")}
GRAPH_ROW_PARTS = ("mix", "hybrid")  # parts whose entity and relation rows a fused result carries
# Parts whose result adds the question's keyword extraction (one LLM call shared through the context) to
# its own usage: a fused result counts it once.
KEYWORD_BILLED = ("local", "global", "hybrid", "mix", "path")
SETTINGS = ("naive_top_k", "max_entity_tokens", "max_relation_tokens", "max_total_tokens")


def parts_of(candidate: str) -> tuple[str, ...]:
    """The modes a fused candidate interleaves (empty for a name that is no fused candidate)."""
    return FUSIONS.get(candidate, ())


def is_fused(candidate: str) -> bool:
    return candidate in FUSIONS


def available(candidate: str = FUSED) -> bool:
    """Whether every part of ``candidate`` is a registered mode (a fused candidate exists only then)."""
    parts = parts_of(candidate)
    return bool(parts) and all(part in modes() for part in parts)


def interleave(rankings: Sequence[Sequence[str]]) -> list[str]:
    """The rankings' items taken rank by rank, in the rankings' order, each item once (its first place)."""
    out: dict[str, None] = {}
    for rank in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking):
                out.setdefault(ranking[rank], None)
    return list(out)


def _chunk_records(found: Mapping[str, RetrievalResult], parts: Sequence[str], limit: int) -> list[ChunkHit]:
    """The interleaved chunks as records: each chunk's reason names its rank in every part that found it,
    and ``via`` is what brought it in the first part that did (mix's own label for its chunks)."""
    ranks = {p: {cid: i for i, cid in enumerate(found[p].evidence_chunk_ids, start=1)} for p in parts}
    vias = {p: {c.chunk_id: c.via for c in found[p].chunks} for p in parts}
    name = "+".join(parts)
    records = []
    for cid in interleave([found[p].evidence_chunk_ids for p in parts])[:limit]:
        where = ", ".join(f"rank {ranks[p][cid]} in {p}" for p in parts if cid in ranks[p])
        record = ChunkHit.make(cid, 0.0, f"{name}: {where}")
        first = next(p for p in parts if cid in ranks[p])
        record.via = vias[first].get(cid) or first
        records.append(record)
    return records


def fused_result(ctx: QueryContext, candidate: str = FUSED) -> RetrievalResult:
    """The parts of ``candidate`` on ``ctx``, their evidence chunks interleaved and the LightRAG parts'
    entity and relation rows kept within the budgets (see the module doc)."""
    parts = parts_of(candidate)
    if not parts:
        raise ValueError(f"{candidate!r} is no fused candidate (known: {', '.join(FUSIONS)})")
    found = {part: registry()[part].retrieve(ctx) for part in parts}
    s = ctx.settings
    result = new_result(ctx, candidate, SETTINGS)
    records = fill_chunk_texts(ctx.ws, _chunk_records(found, parts, len(parts) * s.naive_top_k))
    set_funnel(result, [r.chunk_id for r in records])
    counts = context_counter(ctx.ws)
    count = counts.count
    rows = [p for p in parts if p in GRAPH_ROW_PARTS]
    if rows:
        row_costs = ctx.ws.views.derived(graph_row_costs)  # read once: the budgets and the compact count use it
        entities = round_robin(*(found[p].entities for p in rows), key=entity_key)
        relations = round_robin(*(found[p].relations for p in rows), key=relation_key)
        fit = apply_budgets(entities, relations, records, max_entity_tokens=s.max_entity_tokens,
                            max_relation_tokens=s.max_relation_tokens, max_total_tokens=s.max_total_tokens,
                            row_costs=row_costs, counter=count)
        corpus = ctx.ws.views.derived(corpus_tokens)
        cap = min(s.max_total_tokens, corpus) if corpus > 0 else s.max_total_tokens
        context, tokens, _ = render_compact_within(fit, cap, count, row_costs,
                                                   counts.pieces)  # the rows counted as the LightRAG modes count them
        result.entities, result.relations = renumber(fit.entities), renumber(fit.relations)
        result.chunks = renumber(fit.chunks)
        finish(result, context, [c.chunk_id for c in fit.chunks], lambda _text: tokens)
    else:
        records, _ = prefix_within(records, lambda c: count(c.text), s.max_total_tokens)
        result.chunks = records
        finish(result, sources_text(records), [c.chunk_id for c in records], count)
    for part, part_result in found.items():
        for stage, ms in part_result.timings_ms.items():
            result.timings_ms[f"{part}:{stage}"] = ms
        result.trace.extend(part_result.trace)
        result.llm_calls += part_result.llm_calls
        result.prompt_tokens += part_result.prompt_tokens
        result.completion_tokens += part_result.completion_tokens
    billed = sum(1 for p in parts if p in KEYWORD_BILLED)
    for field_name, usage_key in (("llm_calls", "llm_calls"), ("prompt_tokens", "prompt_tokens"),
                                  ("completion_tokens", "completion_tokens")):
        extra = max(0, billed - 1) * int(ctx.keyword_usage.get(usage_key, 0))
        setattr(result, field_name, getattr(result, field_name) - extra)  # the one keyword call, counted once
    keyworded = [p for p in parts if found[p].keywords]
    result.keywords = found[keyworded[-1]].keywords if keyworded else found[parts[-1]].keywords
    in_all = sum(1 for c in result.chunks if all(c.chunk_id in found[p].evidence_chunk_ids for p in parts))
    result.log("context", "fusion", parts=list(parts), chunks=len(result.chunks), both=in_all,
               entities=len(result.entities), relations=len(result.relations))
    return result
