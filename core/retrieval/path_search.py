"""path mode: PathRAG — retrieved nodes, flow-based pruning, reliability-ranked relational paths.

1. N = ``path_top_nodes`` (40) entities are retrieved by a vector search of the low-level keywords
   (joined with ", "; the question when there are none) in the entity collection, keeping cosine
   >= ``cosine_threshold``.
2. :func:`core.retrieval.path_flow.top_paths` runs resource propagation from every retrieved node
   (S(start) = 1, α·S(u)/deg(u) to the neighbours, a node with S(v)/deg(v) < θ is not expanded,
   paths of at most ``path_max_hops`` edges between retrieved nodes), scores each path with
   S(P) = ΣS(v) / #edges, and keeps the best K = ``path_top_paths`` (15) overall.
3. Every path becomes text: its entities with type and description and its relations with
   keywords and description, in path order. The context is the question, then the paths from the
   LEAST to the MOST reliable (the most reliable one last, next to where the answer is generated),
   then a ``-----Sources-----`` section with a few source chunks of each path edge. The whole is
   capped at ``max_total_tokens``: the least reliable paths are dropped first, sources get the rest.
4. No retrieved node, or no path between them: the path list is empty, the trace says why, and the
   context falls back to the retrieved entities' descriptions and their source chunks.

Differences from PathRAG, on purpose: θ defaults to the paper's 0.05 applied to S(v)/deg(v); the
reference code applies θ = 0.3 to the flow on edges and enumerates every ≤ 3-hop path with an
exhaustive depth-first search, whereas here the enumeration is capped per start node
(``path_max_expansions``, reported in the trace when hit). The reference code also always
appends LightRAG's node context; here node context is used only when no path exists. The number of
source chunks quoted per edge (``SOURCES_PER_EDGE``) is this module's choice (PathRAG quotes none;
it is recorded in ``params``).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from core.retrieval.query import QueryContext, Stopwatch
from core.retrieval.results import fill_chunk_texts, finish, new_result
from core.retrieval.context_blocks import (add_keyword_usage, fit_to_budget, prefix_within, source_block, sources_text,
                                           tokens_at_most)
from core.retrieval.context_dedup import TextOnce
from core.retrieval.funnel import path_funnel
from core.retrieval.path_flow import FlowStats, ScoredPath, top_paths
from core.retrieval.generation_rows import chunk_rows
from core.retrieval.strategies import STRICT_SETTING
from core.retrieval.token_counts import context_counter, corpus_tokens
from core.storage.ports import GraphView
from core.tokens import count_tokens
from core.types import ChunkHit, EntityHit, PathEdge, PathHit, RelationHit, RetrievalResult

PARAMS = ["path_top_nodes", "path_top_paths", "path_alpha", "path_theta", "path_max_hops",
          "path_max_expansions", "cosine_threshold", "max_total_tokens", STRICT_SETTING, "seed_relative_cutoff"]
SOURCES_PER_EDGE = 2  # source chunks quoted per path edge in the Sources section
SOURCES_PER_ENTITY = 2  # source chunks quoted per entity in the no-path fallback
SOURCES_HEADER = "-----Sources-----"
MARGIN = 16  # tokens kept free for section headers and token merges across joined blocks


def entity_name(kg: GraphView, key: str) -> str:
    """Display name of an entity key (the key itself when the graph has no name)."""
    return kg.name(key)


Describe = Callable[[str], str]  # a description as rendered (``TextOnce`` compacts it; default: as is)


def _as_is(text: str) -> str:
    return text


def entity_line(kg: GraphView, key: str, describe: Describe = _as_is) -> str:
    data = kg.attributes(key) if key in kg else {}
    return f"{entity_name(kg, key)} ({data.get('type') or 'UNKNOWN'}): {describe(_flat(data.get('description', '')))}"


def relation_label(kg: GraphView, a: str, b: str, describe: Describe = _as_is) -> str:
    data = kg.relation_attributes(a, b)
    keywords = ", ".join(data.get("keywords") or []) or "-"
    return f"--[keywords: {keywords} | {describe(_flat(data.get('description', '')))}]-->"


def path_text(kg: GraphView, path: ScoredPath, rank: int, once: Optional[TextOnce] = None) -> str:
    """A path as the answer model reads it: entities and relations in path order. With ``once``,
    description sentences shown in a source chunk or an earlier path become pointers."""
    label = f"path #{rank}"
    describe: Describe = _as_is if once is None else (lambda text: once.compact(text, label))
    lines = [f"Path #{rank} (reliability {path.score:.4f}, {path.edges} hop{'' if path.edges == 1 else 's'}): "
             + " -> ".join(entity_name(kg, n) for n in path.nodes)]
    for i, key in enumerate(path.nodes):
        if i:
            lines.append("  " + relation_label(kg, path.nodes[i - 1], key, describe))
        lines.append(entity_line(kg, key, describe))
    return "\n".join(lines)


def _flat(text: Any) -> str:
    return " ".join(str(text or "").split())


def _unique_names(kg: GraphView, keys: list[str]) -> list[str]:
    """Display names of a path's nodes, falling back to the key when two names collide."""
    names: list[str] = []
    for key in keys:
        name = entity_name(kg, key)
        names.append(name if name not in names else key)
    return names


def path_record(kg: GraphView, path: ScoredPath, rank: int) -> PathHit:
    """The one constructor of a ``PathHit`` from a kept path."""
    keys = [str(n) for n in path.nodes]
    names = _unique_names(kg, keys)
    relations = [PathEdge.make(a, b, (na, nb), kg.relation_attributes(a, b))
                 for (a, b), (na, nb) in zip(zip(keys, keys[1:]), zip(names, names[1:]))]
    return PathHit(rank=rank, nodes=names, keys=keys, relations=relations,
                   resources={name: round(float(path.resources[key]), 6) for name, key in zip(names, keys)},
                   score=round(float(path.score), 6), hops=path.edges, text=path_text(kg, path, rank))


class PathRetriever:
    """PathRAG: node retrieval, flow-based pruning, paths in ascending reliability."""

    name = "path"
    params = tuple(PARAMS)
    searches_each_name = True  # its seeds (``lightrag_search.seeds_for``) search each name's vector

    def retrieve(self, ctx: QueryContext) -> RetrievalResult:
        s = ctx.settings
        result = new_result(ctx, self.name, self.params)
        result.params["sources_per_edge"] = SOURCES_PER_EDGE
        clock = Stopwatch(result)
        with clock.stage("keywords"):
            low, high = ctx.keywords()
            result.keywords = {"low": list(low), "high": list(high)}
            add_keyword_usage(result, ctx.keyword_usage)
        kg = ctx.graph
        strategy = ctx.strategies.paths
        choice = strategy.nodes(ctx, result, clock, kg)
        retrieved, seed_why, question = choice.nodes, choice.why, choice.question
        with clock.stage("graph_walk"):
            keys = [k for k, _ in retrieved]
            paths, stats = top_paths(kg, keys, alpha=s.path_alpha, theta=s.path_theta, max_hops=s.path_max_hops,
                                     top_k=s.path_top_paths, max_expansions=s.path_max_expansions,
                                     priority=strategy.priority(question))
            paths, notes = strategy.connect(ctx, kg, question, paths, keys)
            result.trace.extend(notes)  # one event per question entity searched again
            trace_flow(result, kg, keys, paths, stats, s.path_max_expansions, s.path_top_paths, strategy.order)
        with clock.stage("ranking"):
            result.paths = [path_record(kg, p, i + 1) for i, p in enumerate(paths)]
            names = {k: entity_name(kg, k) for p in paths for k in p.nodes}
            for record, path in zip(result.paths, paths):
                record.why = strategy.why(path, question, seed_why, names)
                record.question_entities = sum(1 for n in path.nodes if n in question)
            if paths:
                result.entities, result.relations = path_entities(kg, paths), path_relations(kg, paths)
            else:
                result.entities = [_entity(kg, k, c, f"retrieved: cosine {c:.3f} to the node query; on no path")
                                   for k, c in retrieved]
        with clock.stage("context"):
            if paths:
                build_path_context(ctx, result, kg, paths)
            else:
                build_node_context(ctx, result, kg, retrieved)
        path_funnel(result, kg, paths, retrieved)
        return result


def trace_flow(result: RetrievalResult, kg: GraphView, keys: list[str], paths: list[ScoredPath],
               stats: FlowStats, cap: int, top_k: int, order: str) -> None:
    """FlowStats, the expansion cap and the kept paths, or why there is no path."""
    s = result.params
    result.log("flow", "flow", alpha=s["path_alpha"], theta=s["path_theta"], hops=s["path_max_hops"],
               starts=stats.starts, reached=stats.nodes_reached, pruned=stats.nodes_pruned,
               expansions=stats.expansions, pairs=stats.pairs_with_paths)
    if stats.capped_starts:
        result.log("flow", "cap_hit", cap=cap, starts=[entity_name(kg, k) for k in stats.capped_starts])
    elif stats.starts:
        result.log("flow", "cap_not_hit", cap=cap)
    if paths:
        result.log("paths", "kept_paths", kept=len(paths), k=top_k, order=order, best=paths[0].score,
                   worst=paths[-1].score)
        return
    why = "no_node" if not keys else "single_node" if len(keys) == 1 else "unlinked"
    result.log("paths", "no_path", why=why, hops=s["path_max_hops"], nodes=len(keys),
               isolated=sum(1 for k in keys if kg.degree(k) == 0))


def _entity(kg: GraphView, key: str, score: float, reason: str) -> EntityHit:
    return EntityHit.make(key, kg.attributes(key), score, reason, name=entity_name(kg, key))


def path_entities(kg: GraphView, paths: list[ScoredPath]) -> list[EntityHit]:
    """Entities on kept paths: score = their largest resource, reason = the paths they lie on."""
    best: dict[str, float] = {}
    on: dict[str, list[int]] = {}
    for rank, path in enumerate(paths, 1):
        for key in path.nodes:
            best[key] = max(best.get(key, 0.0), float(path.resources[key]))
            on.setdefault(key, []).append(rank)
    order = {k: i for i, k in enumerate(on)}
    keys = sorted(on, key=lambda k: (-best[k], order[k]))
    return [_entity(kg, k, best[k], "on path " + ", ".join(f"#{r}" for r in dict.fromkeys(on[k]))) for k in keys]


def path_relations(kg: GraphView, paths: list[ScoredPath]) -> list[RelationHit]:
    """Edges on kept paths (in the direction of the first path that uses them), in order of first
    appearance from the most reliable path."""
    out: dict[frozenset, RelationHit] = {}
    for rank, path in enumerate(paths, 1):
        for a, b in zip(path.nodes, path.nodes[1:]):
            key = frozenset((a, b))
            if key in out:
                if f"#{rank}" not in out[key].reason:
                    out[key].reason += f", #{rank}"
                continue
            out[key] = RelationHit.make(a, b, (entity_name(kg, a), entity_name(kg, b)), kg.relation_attributes(a, b), path.score,
                                        f"on path #{rank}", default_weight=0.0)
    return list(out.values())


def _first(ids: Iterable[str], n: int) -> list[str]:
    return list(dict.fromkeys(ids))[:n]


def _closest(ctx: QueryContext, ids: Iterable[str], n: Optional[int] = None) -> list[str]:
    """Source chunks in the query's evidence order (``core.retrieval.strategies``): corpus order
    (paper) or the chunks closest to the question first (RAGScope's tie-break: an entity or an edge
    seen in many chunks quotes the relevant ones)."""
    unique = ctx.strategies.evidence.sources(ctx, list(ids))
    return unique if n is None else unique[:n]


class _Sizer:
    """Token estimates for budgeting: lines counted once per query (entity descriptions repeat
    across paths) and chunk bodies taken from the counts stored at indexing time. The rendered
    context is always counted exactly afterwards and trimmed if it is over budget."""

    def __init__(self, ctx: QueryContext) -> None:
        self.ctx = ctx
        self.lines: dict[str, int] = {}
        self.chunks: dict[str, int] = {}

    def text(self, text: str) -> int:
        total = 1
        for line in text.split("\n"):
            if line not in self.lines:
                self.lines[line] = count_tokens(line)
            total += self.lines[line] + 1
        return total

    def source(self, record: ChunkHit) -> int:
        body = self.chunks.get(record.chunk_id)
        if body is None:
            body = count_tokens(record.text)
        return self.text(source_block(record, 99).split("\n", 1)[0]) + body + 2

    def sources(self, ctx: QueryContext, candidates: list[ChunkHit], budget: int) -> list[ChunkHit]:
        """Source chunk records with texts, cut to the budget."""
        records = fill_chunk_texts(ctx.ws, candidates)
        found = chunk_rows(ctx.ws).chunks(r.chunk_id for r in records)  # the rows fill_chunk_texts read
        self.chunks.update({cid: int(c.tokens) for cid, c in found.items()})
        return prefix_within(records, self.source, max(budget, 0))[0]


def _sources_section(chunks: list[ChunkHit]) -> list[str]:
    if not chunks:
        return []
    return [SOURCES_HEADER + "\n" + sources_text(chunks)]


Render = Callable[[list[Any], list[ChunkHit]], str]
Evidence = Callable[[list[Any], list[ChunkHit]], list[str]]


def _finish_within(result: RetrievalResult, budget: int, render: Render, evidence: Evidence,
                   blocks: list[Any], sources: list[ChunkHit], count: Callable[[str], int],
                   compact: Optional[Render] = None, cap: int = 0,
                   parts: Optional[Callable[[list[Any], list[ChunkHit]], list[str]]] = None
                   ) -> tuple[list[Any], list[ChunkHit]]:
    """Render and count exactly; while over budget drop the last source, then the last block. Then,
    with ``compact`` (each description sentence once), render that and while it is over ``cap`` (the
    corpus's size) drop the last source, then the last block. With ``compact``, the full rendering is
    skipped when ``parts`` (what ``render`` joins with blank lines) surely fit (``tokens_at_most``):
    it would drop nothing and the compact rendering replaces it."""
    blocks, sources = list(blocks), list(sources)
    if compact is None or parts is None or tokens_at_most(parts(blocks, sources), count) > budget:
        fit_to_budget((sources, blocks),
                      lambda: finish(result, render(blocks, sources), evidence(blocks, sources), count).context_tokens,
                      budget)
    if compact is not None:
        dropped = fit_to_budget(
            (sources, blocks),
            lambda: finish(result, compact(blocks, sources), evidence(blocks, sources), count).context_tokens,
            cap if cap > 0 else budget, floor=1)  # the cap never empties the sources or the paths
        if dropped:
            result.log("budgets", "corpus_cap", dropped=dropped, corpus_tokens=cap)
    return blocks, sources


def _pointing(once: TextOnce, label: str) -> Describe:
    """A description renderer that compacts under ``label`` (see ``TextOnce.compact``)."""
    return lambda text: once.compact(text, label)


def _cap(ctx: QueryContext) -> int:
    """The context's ceiling: the token budget, or the corpus's size when that is smaller."""
    corpus = ctx.ws.views.derived(corpus_tokens)
    return min(ctx.settings.max_total_tokens, corpus) if corpus > 0 else ctx.settings.max_total_tokens


def build_path_context(ctx: QueryContext, result: RetrievalResult, kg: GraphView, paths: list[ScoredPath]) -> None:
    """Question, paths least -> most reliable, then sources; the budget drops the LEAST reliable first."""
    budget = ctx.settings.max_total_tokens
    head = f"Question: {ctx.question}"
    sizer = _Sizer(ctx)
    room = budget - sizer.text(head) - MARGIN
    kept, used = prefix_within(result.paths, lambda p: sizer.text(p.text), room)
    chosen: list[ChunkHit] = []
    seen: set[str] = set()
    for p in kept:
        keys = p.keys
        for a, b, rel in zip(keys, keys[1:], p.relations):
            for cid in _closest(ctx, kg.relation_attributes(a, b).get("source_chunk_ids") or [], SOURCES_PER_EDGE):
                if cid not in seen:
                    seen.add(cid)
                    chosen.append(ChunkHit.make(cid, p.score,
                                                f"source of {rel.source} – {rel.target} (path #{p.rank})"))

    def parts(blocks: list[PathHit], srcs: list[ChunkHit]) -> list[str]:
        return [head] + [p.text for p in reversed(blocks)] + _sources_section(srcs)

    def render(blocks: list[PathHit], srcs: list[ChunkHit]) -> str:
        return "\n\n".join(parts(blocks, srcs))

    def compact(blocks: list[PathHit], srcs: list[ChunkHit]) -> str:
        once = TextOnce(srcs)  # the most reliable path keeps its sentences; the others point to it
        texts = [path_text(kg, paths[p.rank - 1], p.rank, once) for p in blocks]
        return "\n\n".join([head] + texts[::-1] + _sources_section(srcs))

    def evidence(blocks: list[PathHit], srcs: list[ChunkHit]) -> list[str]:
        out = [c.chunk_id for c in srcs]
        for record in blocks:  # most reliable path first
            path = paths[record.rank - 1]
            for a, b in zip(path.nodes, path.nodes[1:]):
                out.extend(_closest(ctx, kg.relation_attributes(a, b).get("source_chunk_ids") or []))
            for key in path.nodes:
                out.extend(_closest(ctx, kg.attributes(key).get("source_chunk_ids") or []))
        return out

    candidates = sizer.sources(ctx, chosen, room - used)
    blocks, sources = _finish_within(result, budget, render, evidence, kept, candidates, context_counter(ctx.ws).count,
                                     compact, _cap(ctx), parts)
    result.chunks = sources
    if len(blocks) < len(result.paths):
        result.log("budgets", "paths_dropped", budget=budget, dropped=len(result.paths) - len(blocks))
    if len(sources) < len(chosen):
        result.log("budgets", "sources_dropped", budget=budget, dropped=len(chosen) - len(sources), total=len(chosen))


def build_node_context(ctx: QueryContext, result: RetrievalResult, kg: GraphView,
                       retrieved: list[tuple[str, float]]) -> None:
    """No path: the retrieved entities' descriptions, then a few source chunks of each."""
    budget = ctx.settings.max_total_tokens
    head = f"Question: {ctx.question}"
    sizer = _Sizer(ctx)
    room = budget - sizer.text(head) - MARGIN
    keys, used = prefix_within([k for k, _ in retrieved], lambda k: sizer.text(entity_line(kg, k)), room)
    chosen: list[ChunkHit] = []
    seen: set[str] = set()
    cosine = dict(retrieved)
    for key in keys:
        for cid in _closest(ctx, kg.attributes(key).get("source_chunk_ids") or [], SOURCES_PER_ENTITY):
            if cid not in seen:
                seen.add(cid)
                chosen.append(ChunkHit.make(cid, cosine[key], f"source of entity {entity_name(kg, key)}"))

    def render(blocks: list[str], srcs: list[ChunkHit]) -> str:
        entities = ["-----Entities-----\n" + "\n".join(entity_line(kg, k) for k in blocks)] if blocks else []
        return "\n\n".join([head] + entities + _sources_section(srcs))

    def compact(blocks: list[str], srcs: list[ChunkHit]) -> str:
        once = TextOnce(srcs)
        lines = [entity_line(kg, k, _pointing(once, entity_name(kg, k))) for k in blocks]
        entities = ["-----Entities-----\n" + "\n".join(lines)] if blocks else []
        return "\n\n".join([head] + entities + _sources_section(srcs))

    def evidence(blocks: list[str], srcs: list[ChunkHit]) -> list[str]:
        out = [c.chunk_id for c in srcs]
        for key in blocks:
            out.extend(kg.attributes(key).get("source_chunk_ids") or [])
        return out

    candidates = sizer.sources(ctx, chosen, room - used)
    blocks, sources = _finish_within(result, budget, render, evidence, keys, candidates, context_counter(ctx.ws).count,
                                     compact, _cap(ctx))
    result.chunks = sources
    if len(blocks) < len(retrieved) or len(sources) < len(chosen):
        result.log("budgets", "node_context_cut", budget=budget, entities=len(retrieved) - len(blocks),
                   sources=len(chosen) - len(sources))
