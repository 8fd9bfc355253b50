"""Shared pieces of the LightRAG modes (local, global, hybrid, mix), kept as pure functions.

* ``local_expand`` — low-level retrieval: entities found by the vector search, then the relations
  incident to them (the 1-hop neighbourhood) ranked by edge degree, then weight.
* ``global_expand`` — high-level retrieval: relations found by the vector search ranked by cosine,
  edge degree and weight, then their endpoint entities in order of appearance.
* ``select_chunks`` — a few source chunks per entity/relation, ranked by cosine to the question.
* ``apply_budgets`` / ``render_within`` / ``render_context`` — the token-budgeted context in LightRAG's
  section layout (entities table, relationships table, numbered sources).
* ``round_robin`` — the hybrid/mix merge (interleave, de-duplicate, keep the first occurrence).

As in LightRAG, the ``rank`` column of the context tables is the graph degree (node degree for an
entity, ``deg(u) + deg(v)`` for a relation); the records also carry their 1-based ``position``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence, TypeVar, Union

import networkx as nx

from core.retrieval.csv_cells import csv_table, record_line
from core.retrieval.context_blocks import fit_to_budget, prefix_within, source_block, sources_text
from core.storage.graph_view import NetworkxGraphView, as_graph_view
from core.storage.records import node_pair
from core.tokens import count_tokens, encoding
from core.types import ChunkHit, EntityHit, RelationHit

T = TypeVar("T")
GraphOrView = Union[NetworkxGraphView, nx.Graph]  # the workspace's view; a bare networkx graph is wrapped

ENTITY_HEADER = ("id", "entity", "type", "description", "rank")
RELATION_HEADER = ("id", "source", "target", "description", "keywords", "weight", "rank")


@dataclass
class Gathered:
    """What one LightRAG mode retrieved before budgets: ranked entities, relations and chunk records."""

    entities: list[EntityHit] = field(default_factory=list)
    relations: list[RelationHit] = field(default_factory=list)
    chunks: list[ChunkHit] = field(default_factory=list)


@dataclass
class ChunkPick:
    """A chunk chosen for the context: its cosine to the question and who brought it (in rank order)."""

    chunk_id: str
    score: float
    brought_by: list[str]
    cosine: float | None = None  # set when ``score`` is the owner-based relevance, not the cosine


@dataclass
class Budgeted:
    """Lists that fit in the token budgets, with the tokens each section used."""

    entities: list[EntityHit]
    relations: list[RelationHit]
    chunks: list[ChunkHit]
    tokens: dict[str, int]


# --- graph expansion -------------------------------------------------------------------------

class _Lookup:
    """The graph view's records as context hits, for one expansion."""

    def __init__(self, graph: GraphOrView) -> None:
        self.graph = as_graph_view(graph)
        self.degree = self.graph.degree  # memoised by the view

    def edge_degree(self, a: str, b: str) -> int:
        return self.degree(a) + self.degree(b)

    def weight(self, a: str, b: str) -> float:
        return float(self.graph.relation_attributes(a, b).get("weight", 1.0))

    def entity(self, key: str, score: float, reason: str) -> EntityHit:
        return EntityHit.make(key, self.graph.attributes(key), score, reason, name=self.graph.name(key),
                              default_type="UNKNOWN", degree=self.degree(key))

    def relation(self, a: str, b: str, score: float, reason: str, degree: int) -> RelationHit:
        src, tgt = node_pair(a, b)
        return RelationHit.make(src, tgt, (self.graph.name(src), self.graph.name(tgt)),
                                self.graph.relation_attributes(src, tgt), score, reason, degree=degree)


def edge_degree(graph: GraphOrView, a: str, b: str) -> int:
    """LightRAG's relation rank: the sum of the endpoint degrees."""
    view = as_graph_view(graph)
    return int(view.degree(a)) + int(view.degree(b))


Positioned = TypeVar("Positioned", EntityHit, RelationHit, ChunkHit)


def _number(positioned: list[Positioned]) -> list[Positioned]:
    for i, record in enumerate(positioned):
        record.position = i + 1
    return positioned


def _filter_hits(hits: Iterable[tuple[Any, float]], top_k: int, threshold: float) -> list[tuple[Any, float]]:
    """Hits with cosine >= threshold, best first (stable for ties), at most top_k."""
    kept = [(h, float(s)) for h, s in hits if float(s) >= threshold]
    kept.sort(key=lambda pair: -pair[1])
    return kept[:top_k]


def local_expand(graph: GraphOrView, entity_hits: Sequence[tuple[str, float]], *, top_k: int = 40,
                 threshold: float = 0.2, query_label: str = "the low-level keywords",
                 reasons: Mapping[str, str] | None = None) -> tuple[list[EntityHit], list[RelationHit]]:
    """LightRAG low-level retrieval from ``(entity_key, cosine)`` hits.

    Entities: hits with cosine >= ``threshold``, best first, at most ``top_k`` (keys missing from
    the graph are skipped). Relations: every edge incident to a retrieved entity, once, ranked by
    edge degree desc, then weight desc, then discovery order (entity rank, then neighbour key).
    A relation's ``score`` is its edge degree, the key it is ranked by.
    """
    look = _Lookup(graph)
    entities: list[EntityHit] = []
    taken: set[str] = set()
    for key, score in _filter_hits(entity_hits, top_k, threshold):
        if key in look.graph and key not in taken:
            taken.add(key)
            why = reasons[key] if reasons and key in reasons else f"cosine {score:.3f} to {query_label}"
            entities.append(look.entity(key, score, f"{why}; degree {look.degree(key)}"))
    retrieved = {e.key: e.name for e in entities}
    found: dict[tuple[str, str], list[str]] = {}
    for entity in entities:
        key = entity.key
        for neighbour in sorted(look.graph.neighbours(key)):
            pair = node_pair(key, neighbour)
            if pair not in found:
                found[pair] = [retrieved[k] for k in pair if k in retrieved]
    stats = {pair: (look.edge_degree(*pair), look.weight(*pair)) for pair in found}
    ranked = sorted(enumerate(found), key=lambda item: (-stats[item[1]][0], -stats[item[1]][1], item[0]))
    relations = []
    for _, (a, b) in ranked:
        (degree, weight), via = stats[(a, b)], found[(a, b)]
        label = "entities" if len(via) > 1 else "entity"
        reason = f"incident to retrieved {label} {' and '.join(via)}; edge degree {degree}, weight {weight:g}"
        relations.append(look.relation(a, b, degree, reason, degree))
    return _number(entities), _number(relations)


def global_expand(graph: GraphOrView, relation_hits: Sequence[tuple[str, str, float]], *, top_k: int = 40,
                  threshold: float = 0.2, query_label: str = "the high-level keywords",
                  reasons: Mapping[tuple[str, str], str] | None = None
                  ) -> tuple[list[EntityHit], list[RelationHit]]:
    """LightRAG high-level retrieval from ``(source_key, target_key, cosine)`` hits.

    Relations: hits with cosine >= ``threshold`` among the best ``top_k``, ranked by cosine desc, then
    edge degree desc, then weight desc (edges missing from the graph are skipped). Entities: the
    endpoints in order of first appearance (the higher-degree endpoint of a relation first); an
    entity's ``score`` is the cosine of the first relation that brought it.
    """
    look = _Lookup(graph)
    pairs: list[tuple[tuple[str, str], float]] = []
    seen: set[tuple[str, str]] = set()
    for (a, b), score in _filter_hits((((a, b), s) for a, b, s in relation_hits), top_k, threshold):
        pair = node_pair(a, b)
        if pair not in seen and look.graph.has_relation(*pair):
            seen.add(pair)
            pairs.append((pair, score))
    pairs.sort(key=lambda item: (-item[1], -look.edge_degree(*item[0]), -look.weight(*item[0])))
    relations = []
    for (a, b), score in pairs:
        degree, weight = look.edge_degree(a, b), look.weight(a, b)
        why = reasons.get((a, b)) if reasons else None
        reason = f"{why or f'cosine {score:.3f} to {query_label}'}; edge degree {degree}, weight {weight:g}"
        relations.append(look.relation(a, b, score, reason, degree))
    _number(relations)
    entities: list[EntityHit] = []
    placed: set[str] = set()
    for relation in relations:
        for key in sorted((relation.source_key, relation.target_key), key=lambda k: -look.degree(k)):
            if key in placed:
                continue
            placed.add(key)
            reason = (f"endpoint of relation {relation.source} — {relation.target} (ranked "
                      f"#{relation.position} by cosine {relation.score:.3f}); degree {look.degree(key)}")
            entities.append(look.entity(key, relation.score, reason))
    return _number(entities), relations


# --- chunks ------------------------------------------------------------------------------------

# RAGScope's evidence order (core.retrieval.strategies.OwnerThenCosine): a chunk's relevance is OWNER_WEIGHT times the score of the
# best entity or relation that brought it plus its own cosine to the question. Measured on
# dev_musique_full (local R@5): cosine only 61.8 (paper), owner + cosine 64.2, 0.5 x owner + cosine 66.7,
# 0.2 x owner + cosine 67.3; a bonus per further owner (0.1) cost 4-5 points (a chunk that many loosely
# similar entities share is not more relevant), so it is 0.
OWNER_WEIGHT = 0.5
CO_OWNER_BONUS = 0.0


def select_chunks(owners: Sequence[tuple[str, Sequence[str]]], similarity: Mapping[str, float],
                  per_owner: int, owner_scores: Sequence[float] | None = None) -> list[ChunkPick]:
    """For each owner (a label and its source chunk ids, in rank order) keep its ``per_owner`` chunks
    most similar to the question, and rank the union.

    Without ``owner_scores`` (the paper's order) the union is ranked by cosine desc. With them
    (RAGScope's order) a chunk scores ``OWNER_WEIGHT * max(owner score) + cosine`` (+ ``CO_OWNER_BONUS``
    per further owner),
    so the chunks of the entities or relations the mode trusts most come first. Ties: first owner,
    then id. Chunks absent from ``similarity`` (no vector) are skipped.
    """
    picks: dict[str, ChunkPick] = {}
    first_owner: dict[str, int] = {}
    best_owner: dict[str, float] = {}
    for index, (label, chunk_ids) in enumerate(owners):
        candidates = [c for c in dict.fromkeys(chunk_ids) if c in similarity]
        candidates.sort(key=lambda c: (-similarity[c], c))
        for chunk_id in candidates[:per_owner]:
            if chunk_id not in picks:
                picks[chunk_id] = ChunkPick(chunk_id, float(similarity[chunk_id]), [])
                first_owner[chunk_id] = index
            picks[chunk_id].brought_by.append(label)
            if owner_scores is not None:
                best_owner[chunk_id] = max(best_owner.get(chunk_id, -1.0), float(owner_scores[index]))
    if owner_scores is not None:
        for chunk_id, pick in picks.items():
            pick.cosine = pick.score
            pick.score = round(OWNER_WEIGHT * best_owner[chunk_id] + pick.cosine
                               + CO_OWNER_BONUS * (len(pick.brought_by) - 1), 6)
    return sorted(picks.values(), key=lambda p: (-p.score, first_owner[p.chunk_id], p.chunk_id))


def pick_reason(pick: ChunkPick) -> str:
    """Why a chunk is in the context: who brought it and its similarity to the question."""
    who = pick.brought_by[0]
    if len(pick.brought_by) > 1:
        who += f" (+{len(pick.brought_by) - 1} more: {', '.join(pick.brought_by[1:4])}" \
               f"{'…' if len(pick.brought_by) > 4 else ''})"
    if pick.cosine is None:
        return f"source chunk of {who}; cosine {pick.score:.3f} to the question"
    return (f"source chunk of {who}; relevance {pick.score:.3f} = {OWNER_WEIGHT:g} × best owner's score + cosine "
            f"{pick.cosine:.3f} to the question")


# --- budgets and rendering ---------------------------------------------------------------------

def entity_row(entity: EntityHit, index: int) -> tuple[Any, ...]:
    return (index, entity.name, entity.type, entity.description, entity.degree or 0)


def relation_row(relation: RelationHit, index: int) -> tuple[Any, ...]:
    return (index, relation.source, relation.target, relation.description,
            ", ".join(relation.keywords), f"{relation.weight:g}", relation.degree or 0)


@lru_cache(maxsize=16384)
def csv_line(cells: tuple[Any, ...]) -> str:
    """One record line exactly as ``csv_table`` writes it (memoised: rows recur across questions)."""
    return record_line(cells)


def render_context(entities: Sequence[EntityHit], relations: Sequence[RelationHit],
                   chunks: Sequence[ChunkHit]) -> str:
    """The LightRAG-style context: entity and relation CSV tables, then the numbered source chunks."""
    return context_from_lines([csv_line(entity_row(e, i + 1)) for i, e in enumerate(entities)],
                              [csv_line(relation_row(r, i + 1)) for i, r in enumerate(relations)], sources_text(chunks))


def context_from_lines(entity_lines: Sequence[str], relation_lines: Sequence[str], sources: str) -> str:
    """``render_context``'s layout around table lines already written (``csv_line``) and the Sources text."""
    entity_table = "\n".join([csv_line(ENTITY_HEADER), *entity_lines])
    relation_table = "\n".join([csv_line(RELATION_HEADER), *relation_lines])
    return (f"-----Entities-----\n```csv\n{entity_table}\n```\n\n"
            f"-----Relationships-----\n```csv\n{relation_table}\n```\n\n"
            f"-----Sources-----\n{sources}\n")


@lru_cache(maxsize=16384)
def text_tokens(text: str) -> int:
    """cl100k tokens of a text, memoised: the same rows and chunks recur across questions."""
    return count_tokens(text)


RowCosts = Mapping[tuple[Any, ...], int]  # a table row's cells (rendered as row 1) -> its tokens


def row_cost_table(graph: GraphOrView) -> dict[tuple[Any, ...], int]:
    """Every entity's and relation's table-row cost in ``graph``, counted once per workspace
    generation (``views.derived``): the rows are pure functions of the graph (name, type,
    description, keywords, weight, degree), so the budgets then read the counts instead of
    re-encoding thousands of rows per question. Rows are costed as row 1, like ``entity_cost``."""
    look = _Lookup(graph)
    table: dict[tuple[Any, ...], int] = {}
    encode = encoding().encode_ordinary
    for key in look.graph.keys():
        cells = entity_row(look.entity(key, 0.0, ""), 1)
        table[cells] = len(encode(csv_table((), [cells]).split("\n", 1)[1] + "\n"))
    for a, b in look.graph.networkx().edges():
        src, tgt = node_pair(a, b)
        cells = relation_row(look.relation(src, tgt, 0.0, "", look.edge_degree(src, tgt)), 1)
        table[cells] = len(encode(csv_table((), [cells]).split("\n", 1)[1] + "\n"))
    return table


def entity_cost(entity: EntityHit, table: RowCosts | None = None) -> int:
    """Tokens an entity's table row adds to the context (the row and its line break; rendered as row 1,
    which costs the same as any row number below 1000: cl100k keeps 1-3 digit runs as one token)."""
    cells = entity_row(entity, 1)
    found = table.get(cells) if table is not None else None
    return found if found is not None else text_tokens(csv_line(cells) + "\n")


def relation_cost(relation: RelationHit, table: RowCosts | None = None) -> int:
    cells = relation_row(relation, 1)
    found = table.get(cells) if table is not None else None
    return found if found is not None else text_tokens(csv_line(cells) + "\n")


def chunk_cost(chunk: ChunkHit, counter: Callable[[str], int] = text_tokens) -> int:
    """Tokens a chunk's Sources block adds (the block and the blank line after it)."""
    return counter(source_block(chunk, 1) + "\n\n")


def apply_budgets(entities: Sequence[EntityHit], relations: Sequence[RelationHit],
                  chunks: Sequence[ChunkHit], *, max_entity_tokens: int, max_relation_tokens: int,
                  max_total_tokens: int, row_costs: RowCosts | None = None,
                  counter: Callable[[str], int] = text_tokens, block_cost: Callable[[ChunkHit], int] | None = None
                  ) -> Budgeted:
    """Keep the longest prefixes that fit: entity rows in ``max_entity_tokens``, relation rows in
    ``max_relation_tokens``, and chunks in what is left of ``max_total_tokens`` once the section
    headers and the two tables are counted. Costs are per rendered row (cl100k pre-tokenisation never
    merges across a line break followed by text, so they add up; only the section edges may differ by a
    token or two); ``render_within`` enforces the total exactly. ``row_costs``: the graph's
    precomputed row costs (``row_cost_table``); rows not in it are counted. ``counter``: the exact
    count of a chunk's block (``core.retrieval.token_counts``); ``block_cost``: that count memoised."""
    skeleton = text_tokens(render_context([], [], []))
    room = max(0, max_total_tokens - skeleton)
    kept_e, used_e = prefix_within(entities, lambda e: entity_cost(e, row_costs), min(max_entity_tokens, room))
    room -= used_e
    kept_r, used_r = prefix_within(relations, lambda r: relation_cost(r, row_costs), min(max_relation_tokens, room))
    room -= used_r
    kept_c, used_c = prefix_within(chunks, block_cost or (lambda c: chunk_cost(c, counter)), room)
    return Budgeted(kept_e, kept_r, kept_c, {"entities": used_e, "relations": used_r, "chunks": used_c,
                                             "headers": skeleton})


def render_within(budgeted: Budgeted, max_total_tokens: int,
                  counter: Callable[[str], int] = count_tokens) -> tuple[str, int, int]:
    """Render the budgeted lists; while the exact token count exceeds ``max_total_tokens`` drop the last
    chunk (then relation, then entity); "" when not even the headers fit. Returns (context, its tokens,
    records dropped)."""
    rendered: dict[str, Any] = {}

    def measure() -> int:
        rendered["text"] = render_context(budgeted.entities, budgeted.relations, budgeted.chunks)
        rendered["tokens"] = counter(rendered["text"])
        return rendered["tokens"]

    dropped = fit_to_budget((budgeted.chunks, budgeted.relations, budgeted.entities), measure, max_total_tokens)
    if rendered["tokens"] > max_total_tokens:  # not even the empty section headers fit
        return "", counter(""), dropped
    return rendered["text"], rendered["tokens"], dropped


# --- merging -----------------------------------------------------------------------------------

def round_robin(*lists: Sequence[T], key: Callable[[T], Hashable]) -> list[T]:
    """Interleave the lists (1st of list 1, 1st of list 2, …, 2nd of list 1, …), keeping only the first
    occurrence of each key."""
    merged: list[T] = []
    seen: set[Hashable] = set()
    longest = max((len(items) for items in lists), default=0)
    for i in range(longest):
        for items in lists:
            if i < len(items):
                k = key(items[i])
                if k not in seen:
                    seen.add(k)
                    merged.append(items[i])
    return merged


def entity_key(entity: EntityHit) -> Hashable:
    return entity.key


def relation_key(relation: RelationHit) -> Hashable:
    return (relation.source_key, relation.target_key)


def chunk_key(chunk: ChunkHit) -> Hashable:
    return chunk.chunk_id


def renumber(records: list[Positioned]) -> list[Positioned]:
    """Reset the 1-based ``position`` of merged or truncated records."""
    return _number(records)
