"""Statements for the two graphs: knowledge-graph fragments and merged rows, and the E2GraphRAG mention
graph (per-chunk counts, per-chunk co-occurrence and the aggregated edge weights), in SQLAlchemy Core;
the hot ones are built once here and compiled once per engine."""
from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Iterable

import networkx as nx
from sqlalchemy import BindParameter, bindparam, delete, func, select, update

from core.extraction.names import normalize_name
from core.storage import schema as s
from core.storage.records import EntityFragment, RelationFragment, node_pair
from core.storage.sql_connection import SqlConnection
from core.storage.upserts import replace_row, upsert
from core.types import ChunkExtraction


_ef, _rf, _e, _r = s.entity_fragments, s.relation_fragments, s.entities, s.relations
_m, _co, _me, _sent = s.mentions, s.chunk_cooccurrence, s.mention_edges, s.sentences
_ENTITY_FRAGMENT_COLUMNS = ("entity_key", "chunk_id", "doc_id", "name", "type", "description", "type_votes", "aliases")
_RELATION_FRAGMENT_COLUMNS = ("source_key", "target_key", "chunk_id", "doc_id", "keywords", "description", "weight")
_CHUNK: BindParameter[str] = bindparam("chunk")
_ENTITY_KEYS_OF_CHUNK = select(_ef.c.entity_key).where(_ef.c.chunk_id == _CHUNK)
_RELATION_KEYS_OF_CHUNK = select(_rf.c.source_key, _rf.c.target_key).where(_rf.c.chunk_id == _CHUNK)
_PAIRS_OF_CHUNK = select(_co.c.a, _co.c.b, _co.c.count).where(_co.c.chunk_id == _CHUNK)
_LOWER_EDGE = update(_me).where(_me.c.a == bindparam("edge_a"), _me.c.b == bindparam("edge_b")).values(
    weight=_me.c.weight - bindparam("by"))
_sv = s.sentence_vectors
_DELETE_OF_CHUNK = [delete(table).where(table.c.chunk_id == _CHUNK) for table in (_co, _m, _ef, _sent, _sv, _rf)]
_KEYS: BindParameter[Any] = bindparam("keys", expanding=True)
# fragments of several graph parts in one read each, in corpus order (document insertion order, then chunk
# order); the rows are split by key in Python, which keeps that order within each key. Relations are read
# by their first key (an index prefix; a row-value IN would scan the table on SQLite) and picked in Python.
_ENTITY_FRAGMENTS = (
    select(_ef.c.entity_key, _ef.c.chunk_id, _ef.c.doc_id, _ef.c.name, _ef.c.type, _ef.c.description,
           _ef.c.type_votes, _ef.c.aliases)
    .join(s.documents, s.documents.c.doc_id == _ef.c.doc_id).join(s.chunks, s.chunks.c.chunk_id == _ef.c.chunk_id)
    .where(_ef.c.entity_key.in_(_KEYS)).order_by(s.documents.c.seq, s.chunks.c.ord))
_RELATION_FRAGMENTS = (
    select(_rf.c.source_key, _rf.c.target_key, _rf.c.chunk_id, _rf.c.doc_id, _rf.c.keywords, _rf.c.description,
           _rf.c.weight)
    .join(s.documents, s.documents.c.doc_id == _rf.c.doc_id).join(s.chunks, s.chunks.c.chunk_id == _rf.c.chunk_id)
    .where(_rf.c.source_key.in_(_KEYS)).order_by(s.documents.c.seq, s.chunks.c.ord))
_ENTITY_VECTOR_IDS = select(_e.c.entity_key, _e.c.vector_id).where(_e.c.entity_key.in_(_KEYS))
_RELATION_VECTOR_IDS = select(_r.c.source_key, _r.c.target_key, _r.c.vector_id).where(_r.c.source_key.in_(_KEYS))
_ENTITY_NAME = select(_e.c.name).where(_e.c.entity_key == bindparam("key"))
_SENTENCES = (select(_sent.c.chunk_id, _sent.c.text, _sent.c.mentions)
              .where(_sent.c.chunk_id.in_(bindparam("ids", expanding=True))).order_by(_sent.c.chunk_id, _sent.c.ord))


def _rows(columns: tuple[str, ...], values: Iterable[tuple]) -> list[dict[str, Any]]:
    return [dict(zip(columns, row)) for row in values]


def insert_chunk_extraction(db: SqlConnection, doc_id: str, chunk_id: str, ex: ChunkExtraction
                            ) -> tuple[set[str], set[tuple[str, str]]]:
    """Store one chunk's fragments and mention counts; return the touched entity and relation keys."""
    entity_rows = {}
    for ent in ex.entities:
        key = normalize_name(ent.name)
        if key:
            entity_rows[key] = (key, chunk_id, doc_id, ent.name, ent.type, ent.description,
                                json.dumps(ent.type_votes or {ent.type: 1}, sort_keys=True),
                                json.dumps(list(ent.aliases), ensure_ascii=False))
    relation_rows: dict[tuple[str, str], tuple[str, str, str, str, str, str, float]] = {}
    for rel in ex.relations:
        a, b = normalize_name(rel.source), normalize_name(rel.target)
        if not a or not b or a == b:
            continue
        for key, name in ((a, rel.source), (b, rel.target)):
            entity_rows.setdefault(key, (key, chunk_id, doc_id, name, "UNKNOWN", rel.description, "{}", "[]"))
        src, tgt = node_pair(a, b)
        previous = relation_rows.get((src, tgt))
        if previous:
            keywords = list(dict.fromkeys(json.loads(previous[4]) + rel.keywords))
            description = previous[5] if rel.description in previous[5] else previous[5] + " " + rel.description
            relation_rows[(src, tgt)] = (src, tgt, chunk_id, doc_id, json.dumps(keywords), description,
                                         previous[6] + rel.weight)
        else:
            relation_rows[(src, tgt)] = (src, tgt, chunk_id, doc_id, json.dumps(rel.keywords), rel.description,
                                         rel.weight)
    dialect = db.dialect
    db.execute_many(replace_row(dialect, _ef), _rows(_ENTITY_FRAGMENT_COLUMNS, entity_rows.values()))
    db.execute_many(replace_row(dialect, _sent), [
        {"chunk_id": chunk_id, "ord": i, "text": sentence.text,
         "mentions": json.dumps(sentence.mentions, ensure_ascii=False)} for i, sentence in enumerate(ex.sentences)])
    db.execute_many(replace_row(dialect, _rf), _rows(_RELATION_FRAGMENT_COLUMNS, relation_rows.values()))
    mentions = ex.mentions
    db.execute_many(replace_row(dialect, _m), [
        {"term": t, "chunk_id": chunk_id, "count": c, "label": mentions.labels.get(t, "")}
        for t, c in mentions.counts.items()])
    pairs = [(a, b, c) for (a, b), c in mentions.cooccurrence.items()]
    db.execute_many(replace_row(dialect, _co), [{"chunk_id": chunk_id, "a": a, "b": b, "count": c} for a, b, c in pairs])
    db.execute_many(upsert(dialect, _me, added=("weight",)), [{"a": a, "b": b, "weight": c} for a, b, c in pairs])
    return set(entity_rows), set(relation_rows)


def remove_chunks(db: SqlConnection, chunk_ids: list[str]) -> tuple[set[str], set[tuple[str, str]]]:
    """Remove every contribution of these chunks; return the entity and relation keys they touched."""
    touched_entities: set[str] = set()
    touched_relations: set[tuple[str, str]] = set()
    for chunk_id in chunk_ids:
        chunk = {"chunk": chunk_id}
        touched_entities.update(db.scalars(_ENTITY_KEYS_OF_CHUNK, chunk))
        touched_relations.update((r[0], r[1]) for r in db.rows(_RELATION_KEYS_OF_CHUNK, chunk))
        pairs = db.execute(_PAIRS_OF_CHUNK, chunk).all()
        db.execute_many(_LOWER_EDGE, [{"by": c, "edge_a": a, "edge_b": b} for a, b, c in pairs])
        for statement in _DELETE_OF_CHUNK:
            db.execute(statement, chunk)
    db.execute(delete(_me).where(_me.c.weight <= 0))
    return touched_entities, touched_relations


def _parts(items: list[Any], size: int = 400) -> Iterable[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def entity_fragments(db: SqlConnection, keys: Iterable[str]) -> dict[str, list[EntityFragment]]:
    """Fragments of each entity, in corpus order (document insertion order, then chunk order)."""
    out: dict[str, list[EntityFragment]] = defaultdict(list, {key: [] for key in keys})
    for part in _parts(list(out)):
        for row in db.rows(_ENTITY_FRAGMENTS, {"keys": part}):
            out[row[0]].append(EntityFragment(row[1], row[2], row[3], row[4], row[5], json.loads(row[6] or "{}"),
                                              json.loads(row[7] or "[]")))
    return out


def relation_fragments(db: SqlConnection, keys: Iterable[tuple[str, str]]
                       ) -> dict[tuple[str, str], list[RelationFragment]]:
    """Fragments of each relation (source, target), in corpus order."""
    out: dict[tuple[str, str], list[RelationFragment]] = defaultdict(list, {(src, tgt): [] for src, tgt in keys})
    for part in _parts(sorted({src for src, _ in out})):
        for row in db.rows(_RELATION_FRAGMENTS, {"keys": part}):
            found = out.get((row[0], row[1]))
            if found is not None:
                found.append(RelationFragment(row[2], row[3], json.loads(row[4]), row[5], row[6]))
    return out


def existing_vector_ids(db: SqlConnection, table: str, keys: Iterable) -> dict:
    """Current vector id of each merged entity (table 'entities') or relation ('relations')."""
    wanted = list(dict.fromkeys(keys))
    found: dict[Any, str] = {}
    if table == "entities":
        for part in _parts(wanted):
            found.update((row[0], row[1]) for row in db.rows(_ENTITY_VECTOR_IDS, {"keys": part}))
    else:
        for part in _parts(sorted({src for src, _ in wanted})):
            found.update(((row[0], row[1]), row[2]) for row in db.rows(_RELATION_VECTOR_IDS, {"keys": part}))
    return {key: found[key] for key in wanted if key in found}


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def entity_name(db: SqlConnection, key: str) -> str | None:
    """The merged entity's display name (None when it has no row)."""
    row = db.execute(_ENTITY_NAME, {"key": key}).first()
    return row[0] if row else None


def entity_names(db: SqlConnection) -> dict[str, str]:
    return {row[0]: row[1] for row in db.rows(select(_e.c.entity_key, _e.c.name))}


def write_entity(db: SqlConnection, key: str, name: str, etype: str, description: str,
                 source_chunk_ids: list[str], vector_id: str, aliases: list[str]) -> None:
    """Insert or replace one merged entity row."""
    db.execute(replace_row(db.dialect, _e), {
        "entity_key": key, "name": name, "type": etype, "description": description,
        "source_chunk_ids": _json(source_chunk_ids), "vector_id": vector_id, "aliases": _json(aliases)})


def delete_entity(db: SqlConnection, key: str) -> None:
    db.execute(delete(_e).where(_e.c.entity_key == key))


def relations_touching(db: SqlConnection, key: str) -> list[tuple[str, str]]:
    """(source, target) of every merged relation with ``key`` as an endpoint."""
    return [(a, b) for a, b in db.rows(
        select(_r.c.source_key, _r.c.target_key).where((_r.c.source_key == key) | (_r.c.target_key == key)))]


def write_relation(db: SqlConnection, pair: tuple[str, str], keywords: list[str], description: str,
                   weight: float, source_chunk_ids: list[str], vector_id: str) -> None:
    """Insert or replace one merged relation row."""
    db.execute(replace_row(db.dialect, _r), {
        "source_key": pair[0], "target_key": pair[1], "keywords": _json(keywords), "description": description,
        "weight": weight, "source_chunk_ids": _json(source_chunk_ids), "vector_id": vector_id})


def delete_relation(db: SqlConnection, pair: tuple[str, str]) -> None:
    db.execute(delete(_r).where(_r.c.source_key == pair[0], _r.c.target_key == pair[1]))


def entity_vector_rows(db: SqlConnection) -> list[tuple[str, str, str, str]]:
    """(key, name, description, vector id) of every merged entity."""
    return [(r[0], r[1], r[2], r[3]) for r in db.rows(
        select(_e.c.entity_key, _e.c.name, _e.c.description, _e.c.vector_id))]


def relation_vector_rows(db: SqlConnection) -> list[tuple[str, str, list[str], str, str]]:
    """(source, target, keywords, description, vector id) of every merged relation."""
    return [(src, tgt, json.loads(kws), desc, vid) for src, tgt, kws, desc, vid in db.rows(
        select(_r.c.source_key, _r.c.target_key, _r.c.keywords, _r.c.description, _r.c.vector_id))]


def fragment_type_votes(db: SqlConnection) -> list[tuple[str, str, str]]:
    """(entity key, type, type votes JSON) of every entity fragment."""
    return [(r[0], r[1], r[2]) for r in db.rows(select(_ef.c.entity_key, _ef.c.type, _ef.c.type_votes))]


def load_knowledge_graph(db: SqlConnection) -> nx.Graph:
    """The merged knowledge graph as an undirected networkx view."""
    graph = nx.Graph()
    for key, name, etype, desc, sources, aliases in db.rows(
            select(_e.c.entity_key, _e.c.name, _e.c.type, _e.c.description, _e.c.source_chunk_ids, _e.c.aliases)
            .order_by(_e.c.entity_key)):
        graph.add_node(key, name=name, type=etype, description=desc, source_chunk_ids=json.loads(sources),
                       aliases=json.loads(aliases or "[]"))
    for src, tgt, kws, desc, weight, sources in db.rows(
            select(_r.c.source_key, _r.c.target_key, _r.c.keywords, _r.c.description, _r.c.weight,
                   _r.c.source_chunk_ids).order_by(_r.c.source_key, _r.c.target_key)):
        graph.add_edge(src, tgt, keywords=json.loads(kws), description=desc, weight=weight,
                       source_chunk_ids=json.loads(sources))
    return graph


def load_mention_graph(db: SqlConnection) -> nx.Graph:
    """The E2GraphRAG co-occurrence graph (node attr: label; edge attr: weight)."""
    graph = nx.Graph()
    for term, label in db.rows(select(_m.c.term, func.max(_m.c.label)).group_by(_m.c.term).order_by(_m.c.term)):
        graph.add_node(term, label=label)
    graph.add_weighted_edges_from(
        (a, b, w) for a, b, w in db.rows(select(_me.c.a, _me.c.b, _me.c.weight).order_by(_me.c.a, _me.c.b)))
    return graph


def load_mention_index(db: SqlConnection) -> dict[str, dict[str, int]]:
    """term -> {chunk_id: occurrences} (E2GraphRAG's entity -> chunks index)."""
    index: dict[str, dict[str, int]] = defaultdict(dict)
    for term, chunk_id, count in db.rows(select(_m.c.term, _m.c.chunk_id, _m.c.count)):
        index[term][chunk_id] = count
    return dict(index)


def chunk_sentences(db: SqlConnection, chunk_ids: Iterable[str]) -> dict[str, list[tuple[str, list[list[str]]]]]:
    """chunk id -> its sentences in order, each (text, typed mentions [[label, surface, key], ...])."""
    out: dict[str, list[tuple[str, list[list[str]]]]] = {}
    ids = list(dict.fromkeys(chunk_ids))
    for start in range(0, len(ids), 900):
        for chunk_id, text, mentions in db.rows(_SENTENCES, {"ids": ids[start:start + 900]}):
            out.setdefault(chunk_id, []).append((text, json.loads(mentions)))
    return out


_SENTENCE_VECTORS = (select(_sv.c.chunk_id, _sv.c.start_char, _sv.c.end_char, _sv.c.vector)
                     .where(_sv.c.chunk_id.in_(bindparam("ids", expanding=True)))
                     .order_by(_sv.c.chunk_id, _sv.c.start_char, _sv.c.end_char))


def write_sentence_vectors(db: SqlConnection, rows: Iterable[tuple[str, int, int, bytes]]) -> int:
    """Store (chunk id, start, end, vector bytes) rows, replacing a row with the same key; returns how many."""
    values = [{"chunk_id": c, "start_char": int(a), "end_char": int(b), "vector": bytes(v)} for c, a, b, v in rows]
    if values:
        db.execute_many(replace_row(db.dialect, _sv), values)
    return len(values)


def sentence_vectors(db: SqlConnection, chunk_ids: Iterable[str]) -> dict[str, list[tuple[int, int, bytes]]]:
    """chunk id -> its stored sentence vectors, each (start, end, vector bytes), by span."""
    out: dict[str, list[tuple[int, int, bytes]]] = {}
    ids = list(dict.fromkeys(chunk_ids))
    for start in range(0, len(ids), 900):
        for chunk_id, a, b, data in db.rows(_SENTENCE_VECTORS, {"ids": ids[start:start + 900]}):
            out.setdefault(chunk_id, []).append((int(a), int(b), bytes(data)))
    return out


def chunks_with_sentence_vectors(db: SqlConnection) -> set[str]:
    """Ids of the chunks that have at least one stored sentence vector."""
    return set(db.scalars(select(_sv.c.chunk_id).distinct()))
