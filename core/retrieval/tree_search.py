"""tree mode: E2GraphRAG's adaptive local/global retrieval over the mention graph and the summary tree.

Steps (defaults k = ``tree_top_k`` = 25, h = ``tree_hops`` = 4 nodes on a shortest path):

1. Query entities come from the mention-graph extractor itself (``query_entities``: named
   entities keyed like the index, plus NOUN/PROPN lemmas); only those present in the mention
   graph are used.
2. None usable -> branch ``"global"``: dense top-k over the *collapsed tree* (the chunk vectors
   and the summary-node vectors queried separately, merged by cosine, cut to k).
3. Otherwise the h-loop of :func:`core.retrieval.tree_algorithms.h_loop` (pairs within h nodes,
   chunk-set intersections, h <- h - 1 while more than k chunks). Branches ``"local"`` and
   ``"local-fallback"`` return chunks; the context groups each chunk under the entity pairs
   that selected it (``entity A, entity B: chunk text``).
4. Branch ``"no-pairs"`` of the h-loop -> ``"global-occurrence"``: dense top-2k over the collapsed
   tree, each candidate weighted by the occurrences of the query entities in its leaves (a
   summary sums over all its leaf chunks), top k with non-zero weight. When every weight is 0
   the plain dense top-k is used instead (branch ``"global-occurrence-empty"``, said in the trace).

Scores: dense branches use the cosine; the occurrence branch uses the occurrence weight (the
cosine is in the reason); local chunks use the total occurrences of the query entities (their
ranking key is the number of distinct query entities first, see ``rank_chunks``).

Evidence: the chunks in context order, a summary contributing its leaf chunks in leaf order at
its own position. The local branch never embeds the question (E2GraphRAG's local retrieval is
purely graph/index based), so its timings have no ``embed_query`` stage. The context is capped
at ``max_total_tokens``: whole items are kept in rank order (sizes estimated from the token counts
stored at indexing time, the rendered context then counted exactly and trimmed if needed).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

import networkx as nx
import numpy as np

from core.retrieval.funnel import set_funnel, tree_reached
from core.retrieval.query import QueryContext, Stopwatch
from core.retrieval.results import fill_chunk_texts, finish, new_result
from core.retrieval.context_blocks import fit_to_budget
from core.retrieval.context_dedup import TextOnce
from core.retrieval.strategies import STRICT_SETTING
from core.retrieval.token_counts import corpus_tokens, tree_context_counter
from core.retrieval.tree_algorithms import LocalOutcome, h_loop, occurrence_rank, pair_distances
from core.retrieval.tree_rows import preload_rows
from core.retrieval.tree_items import Item, items_within, render_item, split_item, stored_tokens, tokens_or_bytes
from core.storage.ports import GraphView
from core.types import ChunkHit, EntityHit, RetrievalResult, SummaryHit

PARAMS = ["tree_top_k", "tree_hops", "max_total_tokens", STRICT_SETTING]
TIE_INLINE = 2  # RAGScope: a summary leaf holding this many question terms stays at the summary's rank
MAX_TRACED_PAIRS = 30  # pairs listed one per line in the trace; the rest are counted


@dataclass
class _Candidate:
    """One node of the collapsed tree: a chunk or a summary (then ``node`` is set)."""

    item_id: str
    cosine: float
    leaves: list[str]
    node: Any = None  # core.storage.store.TreeNode for summaries

    @property
    def is_summary(self) -> bool:
        return self.node is not None


def display_names(terms: Sequence[str], kg: GraphView) -> dict[str, str]:
    """Mention-graph term -> display name: the knowledge-graph entity name when the term is an
    entity key there (same ``normalize_name`` keys), else the term itself (a noun lemma)."""
    out: dict[str, str] = {}
    for term in terms:
        name = kg.attributes(term).get("name")
        out[term] = str(name) if name else term
    return out


def collapsed_tree(ctx: QueryContext, vector: np.ndarray, k: int) -> list[_Candidate]:
    """Dense top-k over chunks + summary nodes, merged by cosine (ties: id); stale hits skipped."""
    tree = ctx.ws.tree_index()
    out: list[_Candidate] = []
    for hit in ctx.search_chunks(vector, k):
        out.append(_Candidate(hit.id, hit.score, [hit.id]))
    for hit in ctx.search("tree", vector, k):
        node = tree.get(str(hit.metadata.get("node_id", "")))
        if node is not None:
            out.append(_Candidate(node.node_id, hit.score, list(node.leaf_chunk_ids), node))
    out.sort(key=lambda c: (-c.cosine, c.item_id))
    return out[:k]


def _hops(d: Optional[int]) -> str:
    return "? hops" if d is None else f"{d} hop{'' if d == 1 else 's'}"


def _render_once(items: Sequence[Item]) -> str:
    """The items with each summary sentence once: a sentence of a chunk in the context, or of an
    earlier summary, becomes a pointer to it (``core.retrieval.context_dedup``)."""
    chunks = [rec for _, rec in items if isinstance(rec, ChunkHit)]
    once = TextOnce(chunks, [f"[{c.doc_name}, chunk {c.order + 1}]" for c in chunks])
    out = []
    for item in items:
        header, body = split_item(item)
        if isinstance(item[1], SummaryHit):
            body = once.compact(body, header.strip())
        out.append(header + body)
    return "\n\n".join(out)


@dataclass
class _Items:
    """The branch's ordered context items (kind, record) and a one-line summary for the trace."""

    branch: str
    items: list[Item]
    note: str
    considered: list[str] = field(default_factory=list)  # collapsed-tree candidates' leaves (evidence funnel)


class TreeRetriever:
    """E2GraphRAG: local (entity pairs + h-loop) or global (collapsed tree) retrieval."""

    name = "tree"
    params = tuple(PARAMS)

    def retrieve(self, ctx: QueryContext) -> RetrievalResult:
        settings = ctx.settings
        k, h = settings.tree_top_k, settings.tree_hops
        result = new_result(ctx, self.name, self.params)
        clock = Stopwatch(result)
        preload_rows(ctx.ws)  # the generation's chunk rows once, not a store read per question
        with clock.stage("keywords"):
            graph = ctx.ws.mention_graph()
            terms, dropped = query_terms(ctx, graph)
            present = [t for t in terms if t in graph]
            names = display_names(terms, ctx.graph)
            result.keywords = {"low": [names[t] for t in terms], "high": []}
            absent = [names[t] for t in terms if t not in graph]
            result.log("keywords", "query_entities", terms=[names[t] for t in terms], absent=absent, dropped=dropped)
        final_h: Optional[int] = None
        if not present:
            result.log("branch", "no_query_entity")
            chosen = global_items(ctx, result, clock, k, [], names)
        else:
            with clock.stage("graph_walk"):
                outcome, distances = run_h_loop(ctx, result, present, graph, names, k, h)
            final_h = outcome.final_h
            if outcome.branch == "no-pairs":
                result.log("branch", "local_empty")
                chosen = global_items(ctx, result, clock, k, present, names)
            else:
                with clock.stage("ranking"):
                    chosen = local_items(ctx, outcome, distances, present, names)
        result.params["branch"] = chosen.branch
        result.params["final_h"] = final_h
        with clock.stage("context"):
            build_context(ctx, result, chosen, present, names)
        set_funnel(result, _evidence(chosen.items), tree_reached(ctx.ws, chosen.considered, present))
        return result


def extra_weight_terms(ctx: QueryContext) -> list[str]:
    """The terms that weigh occurrences besides the query entities, by the query's tree strategy
    (``core.retrieval.strategies``): the question's rare nouns (RAGScope) or none (paper)."""
    return ctx.strategies.tree.weight_terms(ctx)


def query_terms(ctx: QueryContext, graph: nx.Graph) -> tuple[list[str], list[str]]:
    """The tree mode's query entities and the nouns left out, by the query's tree strategy
    (``core.retrieval.strategies``). Paper: every mention-graph term of the question. RAGScope:
    ``named_query_terms``."""
    return ctx.strategies.tree.terms(ctx, graph)


# --- local branch ----------------------------------------------------------------------------
def run_h_loop(ctx: QueryContext, result: RetrievalResult, present: list[str], graph: nx.Graph,
               names: Mapping[str, str], k: int, h: int) -> tuple[LocalOutcome, dict[tuple[str, str], int]]:
    """Trace the pairs within h and every step of the h-loop; return the outcome and pair distances."""
    pairs = pair_distances(present, graph, h)
    result.log("h_loop", "pairs", entities=len(present), pairs=len(present) * (len(present) - 1) // 2,
               within=len(pairs), h=h)
    for a, b, d in pairs[:MAX_TRACED_PAIRS]:
        result.log("h_loop", "pair", a=names[a], b=names[b], hops=_hops(d), nodes=d + 1)
    if len(pairs) > MAX_TRACED_PAIRS:
        result.log("h_loop", "more_pairs", more=len(pairs) - MAX_TRACED_PAIRS)
    tie = ctx.strategies.evidence.tie_break(ctx)
    outcome = h_loop(present, graph, ctx.ws.mention_index(), ctx.ws.chunk_order(), k=k, h=h, tie_break=tie)
    for step in outcome.steps:
        result.log("h_loop", "h_step", h=step.h, pairs=step.pairs_kept, chunks=step.chunks, note=step.note)
    return outcome, {(a, b): d for a, b, d in pairs}


def local_items(ctx: QueryContext, outcome: LocalOutcome, distances: Mapping[tuple[str, str], int],
                present: list[str], names: Mapping[str, str]) -> _Items:
    """Chunk records of the local branch, in h-loop rank order, with their selecting pairs."""
    index = ctx.ws.mention_index()
    records = []
    for cid in outcome.chunk_ids:
        found = [t for t in present if index.get(t, {}).get(cid, 0) > 0]
        occurrences = sum(index[t][cid] for t in found)
        pairs = outcome.chunk_pairs.get(cid, [])
        selected = ", ".join(f"{names[a]} – {names[b]} ({_hops(distances.get((a, b)))})" for a, b in pairs)
        rec = ChunkHit.make(cid, occurrences, f"selected by {selected}; {len(found)} query entities, "
                                                     f"{occurrences} occurrences (h={outcome.final_h})")
        rec.pairs = [[names[a], names[b]] for a, b in pairs]
        records.append(rec)
    records = fill_chunk_texts(ctx.ws, records)
    how = "ranked by distinct query entities, then occurrences, top k" if outcome.branch == "local-fallback" else \
        "every candidate chunk"
    return _Items(outcome.branch, [("local", r) for r in records],
                  f"{outcome.branch}: {len(records)} chunks at h={outcome.final_h} ({how})")


# --- global branches ---------------------------------------------------------------------------
def global_items(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, k: int,
                 present: list[str], names: Mapping[str, str]) -> _Items:
    """Dense top-k over the collapsed tree, or (with query entities) occurrence ranking of top-2k."""
    with clock.stage("embed_query"):
        vector = ctx.embed(ctx.question)
    fetch = 2 * k if present else k
    with clock.stage("vector_search"):
        cands = collapsed_tree(ctx, vector, fetch)
    n_sum = sum(1 for c in cands if c.is_summary)
    result.log("vector_search", "collapsed_tree", k=fetch, chunks_total=len(ctx.ws.chunk_order()),
               summaries_total=len(ctx.ws.tree_index()), chunks=len(cands) - n_sum, summaries=n_sum)
    branch = "global"
    chosen: list[tuple[_Candidate, float, str]] = []
    with clock.stage("ranking"):
        if present:
            weighting = present + [t for t in extra_weight_terms(ctx) if t not in present]
            ranked = occurrence_rank([(c.item_id, c.leaves, c.cosine) for c in cands], weighting,
                                     ctx.ws.mention_index(), k)
            by_id = {c.item_id: c for c in cands}
            if ranked:
                branch = "global-occurrence"
                result.log("ranking", "occurrence_ranking", terms=[names[t] for t in present], kept=len(ranked), k=k,
                           candidates=len(cands))
                chosen = [(by_id[i], float(w), f"occurrence weight {w} (cosine {s:.3f})") for i, w, s in ranked]
            else:
                branch = "global-occurrence-empty"
                result.log("ranking", "occurrence_empty", k=k)
        if not chosen:
            chosen = [(c, c.cosine, f"cosine {c.cosine:.3f} to the question") for c in cands[:k]]
    items: list[Item] = []
    doc_names = ctx.ws.doc_names()
    for cand, score, reason in chosen:
        if cand.is_summary:
            doc_name = doc_names.get(cand.node.doc_id or "", "")
            items.append(("summary", SummaryHit.make(cand.node, score, reason, doc_name)))
        else:
            items.append(("chunk", ChunkHit.make(cand.item_id, score, reason)))
    filled = {r.chunk_id for r in fill_chunk_texts(ctx.ws, [r for _, r in items if isinstance(r, ChunkHit)])}
    items = [(kind, r) for kind, r in items if isinstance(r, SummaryHit) or r.chunk_id in filled]
    n_sum = sum(1 for kind, _ in items if kind == "summary")
    return _Items(branch, items, f"{branch}: {n_sum} summaries, {len(items) - n_sum} chunks",
                  [leaf for c in cands for leaf in c.leaves])


# --- context -----------------------------------------------------------------------------------
def _leaf_key(leaves: Sequence[str], weight: Mapping[str, int],
              tie: Mapping[str, float]) -> Callable[[str], tuple[int, float, int]]:
    """Sort key of a summary's leaves: most query-entity occurrences, then tie-break, then leaf order
    (a leaf's first position, looked up in a table built once rather than searched per comparison)."""
    first: dict[str, int] = {}
    for position, chunk_id in enumerate(leaves):
        first.setdefault(chunk_id, position)
    return lambda c: (-weight.get(c, 0), -tie.get(c, 0.0), first[c])


def _evidence(kept: Sequence[Item], leaf_weight: Mapping[str, int] | None = None,
              strict: bool = True, tie: Mapping[str, float] | None = None) -> list[str]:
    """Chunks in context order; a summary contributes its leaf chunks at its position, the leaves
    that mention the query entities most first (then leaf order), so a corpus-level summary does not
    rank its first leaves above the relevant ones. RAGScope (``strict`` False): a summary's leaves
    that mention no query entity follow after every item (they reach the context only through the
    summary's extract), so a 25-leaf summary does not push the next items out of the top ranks."""
    weight = leaf_weight or {}
    tie = tie or {}
    out: list[str] = []
    tail: list[str] = []
    for _, rec in kept:
        if isinstance(rec, SummaryHit):
            leaves = list(rec.leaf_chunk_ids)
            ranked = sorted(leaves, key=_leaf_key(leaves, weight, tie)) if weight else leaves
            if strict or not weight:
                out.extend(ranked)
            else:
                inline = [c for c in ranked if weight.get(c, 0) > 0 or tie.get(c, 0.0) >= TIE_INLINE]
                out.extend(inline)
                shown = set(inline)
                tail.extend(c for c in ranked if c not in shown)
        else:
            out.append(rec.chunk_id)
    return out + tail


def _leaf_weights(ctx: QueryContext, present: Sequence[str]) -> dict[str, int]:
    """chunk id -> occurrences of the query entities (E2GraphRAG's occurrence weight of a leaf)."""
    index = ctx.ws.mention_index()
    weights: dict[str, int] = {}
    for term in present:
        for chunk_id, count in index.get(term, {}).items():
            weights[chunk_id] = weights.get(chunk_id, 0) + count
    return weights


def build_context(ctx: QueryContext, result: RetrievalResult, chosen: _Items, present: list[str],
                  names: Mapping[str, str]) -> None:
    """Budget the items, fill chunks/summaries/entities, render the context and the evidence.

    Item sizes are estimated from the token counts stored at indexing time (no re-encoding of
    every chunk); the rendered context is then counted exactly and trimmed if the estimate was short.
    """
    budget = ctx.settings.max_total_tokens
    kept = items_within(chosen.items, stored_tokens(ctx, chosen.items), budget)
    weights = _leaf_weights(ctx, present)
    strict = not ctx.strategies.evidence.leaves_tail
    tie = ctx.strategies.evidence.tie_break(ctx)
    count = tree_context_counter(ctx.ws).count  # exact, from the generation's segment and sentence tables
    fit_to_budget((kept,), lambda: tokens_or_bytes("\n\n".join(render_item(item) for item in kept), count, budget),
                  budget)
    corpus = ctx.ws.views.derived(corpus_tokens)  # then each sentence once, and no more than the corpus
    capped = fit_to_budget((kept,), lambda: finish(result, _render_once(kept), _evidence(kept, weights, strict, tie),
                                                   count).context_tokens, min(budget, corpus) if corpus > 0 else budget,
                           floor=1)  # the cap never empties the context
    if capped:
        result.log("budgets", "corpus_cap", dropped=capped, corpus_tokens=corpus)
    if len(kept) < len(chosen.items):
        result.log("budgets", "items_dropped", budget=budget, dropped=len(chosen.items) - len(kept),
                   total=len(chosen.items))
    result.summaries = [r for _, r in kept if isinstance(r, SummaryHit)]
    result.chunks = [r for _, r in kept if isinstance(r, ChunkHit)]
    index = ctx.ws.mention_index()
    labels = ctx.ws.mention_graph().nodes
    for term in present:
        counts = index.get(term, {})
        total = sum(counts.values())
        node = {"name": names[term], "type": str(labels[term].get("label", "")),
                "source_chunk_ids": [c for c in result.evidence_chunk_ids if counts.get(c, 0) > 0]}
        result.entities.append(EntityHit.make(term, node, total, f"query entity: {len(counts)} chunks mention it "
                                                                 f"({total} occurrences)"))
    result.log("context", "tree_context", note=chosen.note, tokens=result.context_tokens)
