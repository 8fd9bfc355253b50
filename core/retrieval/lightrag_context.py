"""Shared pieces of the LightRAG modes (local, global, hybrid, mix), kept as pure functions.

* ``local_expand`` — low-level retrieval: entities found by the vector search, then the relations
  incident to them (the 1-hop neighbourhood) ranked by edge degree, then weight.
* ``global_expand`` — high-level retrieval: relations found by the vector search ranked by cosine,
  edge degree and weight, then their endpoint entities in order of appearance.
* ``select_chunks`` — a few source chunks per entity/relation, ranked by cosine to the question.
* ``apply_budgets`` / ``render_context`` — the token-budgeted context in LightRAG's section layout.
* ``round_robin`` — the hybrid/mix merge (interleave, de-duplicate, keep the first occurrence).

As in LightRAG, the ``rank`` column of the context tables is the graph degree (node degree for an
entity, ``deg(u) + deg(v)`` for a relation); the records also carry their 1-based ``position``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence, TypeVar

import networkx as nx
import numpy as np

from core.retrieval.base import (QueryContext, Stopwatch, chunk_record, csv_table, fill_chunk_texts, finish,
                                 take_within_budget)
from core.tokens import count_tokens
from core.types import RetrievalResult

T = TypeVar("T")

ENTITY_HEADER = ("id", "entity", "type", "description", "rank")
RELATION_HEADER = ("id", "source", "target", "description", "keywords", "weight", "rank")


@dataclass
class Gathered:
    """What one LightRAG mode retrieved before budgets: ranked entities, relations and chunk records."""

    entities: list[dict[str, Any]] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ChunkPick:
    """A chunk chosen for the context: its cosine to the question and who brought it (in rank order)."""

    chunk_id: str
    score: float
    brought_by: list[str]


@dataclass
class Budgeted:
    """Lists that fit in the token budgets, with the tokens each section used."""

    entities: list[dict[str, Any]]
    relations: list[dict[str, Any]]
    chunks: list[dict[str, Any]]
    tokens: dict[str, int]


# --- graph expansion -------------------------------------------------------------------------

def _name(graph: nx.Graph, key: str) -> str:
    return str(graph.nodes[key].get("name") or key)


def _entity_record(graph: nx.Graph, key: str, score: float, reason: str) -> dict[str, Any]:
    data = graph.nodes[key]
    return {"key": key, "name": _name(graph, key), "type": data.get("type", "UNKNOWN"),
            "description": data.get("description", ""), "score": round(float(score), 6),
            "degree": int(graph.degree(key)), "reason": reason,
            "source_chunk_ids": list(data.get("source_chunk_ids") or [])}


def _relation_record(graph: nx.Graph, a: str, b: str, score: float, reason: str) -> dict[str, Any]:
    src, tgt = (a, b) if a <= b else (b, a)
    data = graph.edges[src, tgt]
    return {"source": _name(graph, src), "target": _name(graph, tgt), "source_key": src, "target_key": tgt,
            "keywords": list(data.get("keywords") or []), "description": data.get("description", ""),
            "weight": float(data.get("weight", 1.0)), "degree": edge_degree(graph, src, tgt),
            "score": round(float(score), 6), "reason": reason,
            "source_chunk_ids": list(data.get("source_chunk_ids") or [])}


def edge_degree(graph: nx.Graph, a: str, b: str) -> int:
    """LightRAG's relation rank: the sum of the endpoint degrees."""
    return int(graph.degree(a)) + int(graph.degree(b))


def _number(positioned: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for i, record in enumerate(positioned):
        record["position"] = i + 1
    return positioned


def _filter_hits(hits: Iterable[tuple[Any, float]], top_k: int, threshold: float) -> list[tuple[Any, float]]:
    """Hits with cosine >= threshold, best first (stable for ties), at most top_k."""
    kept = [(h, float(s)) for h, s in hits if float(s) >= threshold]
    kept.sort(key=lambda pair: -pair[1])
    return kept[:top_k]


def local_expand(graph: nx.Graph, entity_hits: Sequence[tuple[str, float]], *, top_k: int = 40,
                 threshold: float = 0.2, query_label: str = "the low-level keywords"
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """LightRAG low-level retrieval from ``(entity_key, cosine)`` hits.

    Entities: hits with cosine >= ``threshold``, best first, at most ``top_k`` (keys missing from
    the graph are skipped). Relations: every edge incident to a retrieved entity, once, ranked by
    edge degree desc, then weight desc, then discovery order (entity rank, then neighbour key).
    A relation's ``score`` is its edge degree, the key it is ranked by.
    """
    entities: list[dict[str, Any]] = []
    for key, score in _filter_hits(entity_hits, top_k, threshold):
        if key in graph and all(e["key"] != key for e in entities):
            entities.append(_entity_record(graph, key, score, f"cosine {score:.3f} to {query_label}; "
                                                              f"degree {graph.degree(key)}"))
    retrieved = {e["key"]: e["name"] for e in entities}
    found: dict[tuple[str, str], list[str]] = {}
    for entity in entities:
        for neighbour in sorted(graph.neighbors(entity["key"])):
            pair = (entity["key"], neighbour) if entity["key"] <= neighbour else (neighbour, entity["key"])
            found.setdefault(pair, [retrieved[k] for k in pair if k in retrieved])
    ranked = sorted(enumerate(found), key=lambda item: (-edge_degree(graph, *item[1]),
                                                        -float(graph.edges[item[1]].get("weight", 1.0)), item[0]))
    relations = []
    for _, (a, b) in ranked:
        degree = edge_degree(graph, a, b)
        weight = float(graph.edges[a, b].get("weight", 1.0))
        via = " and ".join(found[(a, b)])
        label = "entities" if len(found[(a, b)]) > 1 else "entity"
        reason = f"incident to retrieved {label} {via}; edge degree {degree}, weight {weight:g}"
        relations.append(_relation_record(graph, a, b, degree, reason))
    return _number(entities), _number(relations)


def global_expand(graph: nx.Graph, relation_hits: Sequence[tuple[str, str, float]], *, top_k: int = 40,
                  threshold: float = 0.2, query_label: str = "the high-level keywords"
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """LightRAG high-level retrieval from ``(source_key, target_key, cosine)`` hits.

    Relations: hits with cosine >= ``threshold`` among the best ``top_k``, ranked by cosine desc, then
    edge degree desc, then weight desc (edges missing from the graph are skipped). Entities: the
    endpoints in order of first appearance (the higher-degree endpoint of a relation first); an
    entity's ``score`` is the cosine of the first relation that brought it.
    """
    pairs: list[tuple[tuple[str, str], float]] = []
    seen: set[tuple[str, str]] = set()
    for (a, b), score in _filter_hits((((a, b), s) for a, b, s in relation_hits), top_k, threshold):
        pair = (a, b) if a <= b else (b, a)
        if pair not in seen and graph.has_edge(*pair):
            seen.add(pair)
            pairs.append((pair, score))
    pairs.sort(key=lambda item: (-item[1], -edge_degree(graph, *item[0]),
                                 -float(graph.edges[item[0]].get("weight", 1.0))))
    relations = []
    for (a, b), score in pairs:
        degree = edge_degree(graph, a, b)
        weight = float(graph.edges[a, b].get("weight", 1.0))
        reason = f"cosine {score:.3f} to {query_label}; edge degree {degree}, weight {weight:g}"
        relations.append(_relation_record(graph, a, b, score, reason))
    _number(relations)
    entities: list[dict[str, Any]] = []
    placed: set[str] = set()
    for relation in relations:
        ends = sorted((relation["source_key"], relation["target_key"]), key=lambda k: -graph.degree(k))
        for key in ends:
            if key in placed:
                continue
            placed.add(key)
            reason = (f"endpoint of relation {relation['source']} — {relation['target']} "
                      f"(#{relation['position']}, "
                      f"cosine {relation['score']:.3f}); degree {graph.degree(key)}")
            entities.append(_entity_record(graph, key, relation["score"], reason))
    return _number(entities), relations


# --- chunks ------------------------------------------------------------------------------------

def select_chunks(owners: Sequence[tuple[str, Sequence[str]]], similarity: Mapping[str, float],
                  per_owner: int) -> list[ChunkPick]:
    """For each owner (a label and its source chunk ids, in rank order) keep its ``per_owner`` chunks
    most similar to the question; return the union ranked by cosine desc (ties: first owner, id).

    Chunks absent from ``similarity`` (no vector) are skipped.
    """
    picks: dict[str, ChunkPick] = {}
    first_owner: dict[str, int] = {}
    for index, (label, chunk_ids) in enumerate(owners):
        candidates = [c for c in dict.fromkeys(chunk_ids) if c in similarity]
        candidates.sort(key=lambda c: (-similarity[c], c))
        for chunk_id in candidates[:per_owner]:
            if chunk_id not in picks:
                picks[chunk_id] = ChunkPick(chunk_id, float(similarity[chunk_id]), [])
                first_owner[chunk_id] = index
            picks[chunk_id].brought_by.append(label)
    return sorted(picks.values(), key=lambda p: (-p.score, first_owner[p.chunk_id], p.chunk_id))


def pick_reason(pick: ChunkPick) -> str:
    """Why a chunk is in the context: who brought it and its similarity to the question."""
    who = pick.brought_by[0]
    if len(pick.brought_by) > 1:
        who += f" (+{len(pick.brought_by) - 1} more: {', '.join(pick.brought_by[1:4])}" \
               f"{'…' if len(pick.brought_by) > 4 else ''})"
    return f"source chunk of {who}; cosine {pick.score:.3f} to the question"


# --- budgets and rendering ---------------------------------------------------------------------

def entity_row(entity: dict[str, Any], index: int) -> list[Any]:
    return [index, entity["name"], entity["type"], entity["description"], entity.get("degree", 0)]


def relation_row(relation: dict[str, Any], index: int) -> list[Any]:
    return [index, relation["source"], relation["target"], relation["description"],
            ", ".join(relation["keywords"]), f"{relation['weight']:g}", relation.get("degree", 0)]


def _row_text(header: Sequence[str], row: Sequence[Any]) -> str:
    return csv_table(header, [row]).split("\n", 1)[1]


def chunk_block(chunk: dict[str, Any], index: int) -> str:
    """A chunk as it appears in the Sources section (numbered from 1)."""
    return f"[{index}] ({chunk.get('doc_name') or chunk.get('doc_id', '')}, chunk {int(chunk.get('order', 0)) + 1})\n" \
           f"{chunk.get('text', '')}"


def render_context(entities: Sequence[dict[str, Any]], relations: Sequence[dict[str, Any]],
                   chunks: Sequence[dict[str, Any]]) -> str:
    """The LightRAG-style context: entity and relation CSV tables, then the numbered source chunks."""
    entity_table = csv_table(ENTITY_HEADER, (entity_row(e, i + 1) for i, e in enumerate(entities)))
    relation_table = csv_table(RELATION_HEADER, (relation_row(r, i + 1) for i, r in enumerate(relations)))
    sources = "\n\n".join(chunk_block(c, i + 1) for i, c in enumerate(chunks))
    return (f"-----Entities-----\n```csv\n{entity_table}\n```\n\n"
            f"-----Relationships-----\n```csv\n{relation_table}\n```\n\n"
            f"-----Sources-----\n{sources}\n")


def apply_budgets(entities: Sequence[dict[str, Any]], relations: Sequence[dict[str, Any]],
                  chunks: Sequence[dict[str, Any]], *, max_entity_tokens: int, max_relation_tokens: int,
                  max_total_tokens: int) -> Budgeted:
    """Keep the longest prefixes that fit: entity rows in ``max_entity_tokens``, relation rows in
    ``max_relation_tokens``, and chunks in what is left of ``max_total_tokens`` once the two tables
    and the section headers are counted. The rendered context never exceeds ``max_total_tokens``."""
    skeleton = count_tokens(render_context([], [], []))
    room = max(0, max_total_tokens - skeleton)
    indexed_e = list(enumerate(entities))
    kept_e, used_e = take_within_budget(indexed_e, lambda p: _row_text(ENTITY_HEADER, entity_row(p[1], p[0] + 1))
                                        + "\n", min(max_entity_tokens, room))
    room -= used_e
    indexed_r = list(enumerate(relations))
    kept_r, used_r = take_within_budget(indexed_r, lambda p: _row_text(RELATION_HEADER, relation_row(p[1], p[0] + 1))
                                        + "\n", min(max_relation_tokens, room))
    room -= used_r
    kept_c, used_c = take_within_budget(list(enumerate(chunks)), lambda p: chunk_block(p[1], p[0] + 1) + "\n\n",
                                        room)
    ents, rels, chs = [e for _, e in kept_e], [r for _, r in kept_r], [c for _, c in kept_c]
    # Safety net: tokenising the joined text can differ slightly from the sum of its parts.
    total = count_tokens(render_context(ents, rels, chs))
    while total > max_total_tokens and (chs or rels or ents):
        (chs or rels or ents).pop()
        total = count_tokens(render_context(ents, rels, chs))
    return Budgeted(ents, rels, chs, {"entities": used_e, "relations": used_r, "chunks": used_c,
                                      "headers": skeleton, "total": total})


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


def entity_key(entity: dict[str, Any]) -> Hashable:
    return entity.get("key") or entity["name"]


def relation_key(relation: dict[str, Any]) -> Hashable:
    return (relation.get("source_key") or relation["source"], relation.get("target_key") or relation["target"])


def chunk_key(chunk: dict[str, Any]) -> Hashable:
    return chunk["chunk_id"]


def renumber(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reset the 1-based ``position`` of merged or truncated records."""
    return _number(records)


# --- helpers shared by the retrievers (need a QueryContext) --------------------------------------

LIGHTRAG_PARAMS = ["lightrag_top_k", "cosine_threshold", "chunks_per_entity", "max_entity_tokens",
                   "max_relation_tokens", "max_total_tokens"]


def search_terms(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, level: str, prefix: str = ""
                 ) -> tuple[list[str], str]:
    """The keywords one level searches with ('low' or 'high'), falling back to the other level when
    empty; also records both keyword lists in the result. Returns (terms, label for reasons)."""
    with clock.stage("keywords"):
        low, high = ctx.keywords()
    result.keywords = {"low": list(low), "high": list(high)}
    names = {"low": "low-level", "high": "high-level"}
    other = "high" if level == "low" else "low"
    terms = list(low if level == "low" else high)
    used = level
    if not terms:
        terms = list(high if level == "low" else low)
        used = other
        if terms:
            result.trace.append(f"{prefix}no {names[level]} keywords: falling back to the {names[other]} ones")
    if not terms:
        result.trace.append(f"{prefix}no keywords at all: nothing to search with")
        return [], ""
    joined = ", ".join(terms)
    result.trace.append(f"{prefix}{names[used]} keywords searched: {joined}")
    return terms, f"{names[used]} keywords '{joined}'"


def chunk_records(ctx: QueryContext, clock: Stopwatch, owners: Sequence[tuple[str, Sequence[str]]], via: str
                  ) -> list[dict[str, Any]]:
    """Source chunks of ranked owners, ``chunks_per_entity`` each, ranked by cosine to the question."""
    candidate_ids = list(dict.fromkeys(c for _, ids in owners for c in ids))
    if not candidate_ids:
        return []
    with clock.stage("embed_query"):
        question = ctx.embed(ctx.question)
    with clock.stage("vector_search"):
        vectors = ctx.ws.vectors.get_vectors("chunks", candidate_ids)
    with clock.stage("ranking"):
        similarity = {cid: float(np.dot(vec, question)) for cid, vec in vectors.items()}
        picks = select_chunks(owners, similarity, ctx.settings.chunks_per_entity)
        records = []
        for pick in picks:
            record = chunk_record(ctx.ws, pick.chunk_id, pick.score, pick_reason(pick))
            record.update(via=via, brought_by=list(pick.brought_by))
            records.append(record)
    return records


def assemble(ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, gathered: Gathered) -> RetrievalResult:
    """Fill chunk texts, apply the token budgets, render the context and finish the result."""
    s = ctx.settings
    with clock.stage("context"):
        chunks = fill_chunk_texts(ctx.ws, gathered.chunks)
        fit = apply_budgets(gathered.entities, gathered.relations, chunks, max_entity_tokens=s.max_entity_tokens,
                            max_relation_tokens=s.max_relation_tokens, max_total_tokens=s.max_total_tokens)
        result.entities, result.relations = renumber(fit.entities), renumber(fit.relations)
        result.chunks = renumber(fit.chunks)
        t = fit.tokens
        result.trace.append(
            f"budgets: {len(fit.entities)}/{len(gathered.entities)} entities in {t['entities']} tokens "
            f"(max {s.max_entity_tokens}); {len(fit.relations)}/{len(gathered.relations)} relations in "
            f"{t['relations']} tokens (max {s.max_relation_tokens}); {len(fit.chunks)}/{len(chunks)} chunks in "
            f"{t['chunks']} tokens (what is left of {s.max_total_tokens})")
        nothing = not (fit.entities or fit.relations or fit.chunks)
        context = "" if nothing else render_context(fit.entities, fit.relations, fit.chunks)
        finish(result, context, [c["chunk_id"] for c in fit.chunks])
    usage = ctx.keyword_usage
    result.llm_calls += int(usage.get("llm_calls", 0))
    result.prompt_tokens += int(usage.get("prompt_tokens", 0))
    result.completion_tokens += int(usage.get("completion_tokens", 0))
    return result
