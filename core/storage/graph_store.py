"""SQL for the two graphs: knowledge-graph fragments and merged rows, and the E2GraphRAG mention graph
(per-chunk counts, per-chunk co-occurrence and the aggregated edge weights)."""
from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

import networkx as nx

from core.extraction.names import normalize_name
from core.types import ChunkExtraction


@dataclass
class EntityFragment:
    chunk_id: str
    doc_id: str
    name: str
    type: str
    description: str
    type_votes: dict[str, int] = field(default_factory=dict)
    aliases: list[str] = field(default_factory=list)


@dataclass
class RelationFragment:
    chunk_id: str
    doc_id: str
    keywords: list[str]
    description: str
    weight: float


def relation_key(a: str, b: str) -> tuple[str, str]:
    """Relations are undirected: the key is the sorted pair of entity keys."""
    return (a, b) if a <= b else (b, a)


def insert_chunk_extraction(conn: sqlite3.Connection, doc_id: str, chunk_id: str, ex: ChunkExtraction
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
        src, tgt = relation_key(a, b)
        previous = relation_rows.get((src, tgt))
        if previous:
            keywords = list(dict.fromkeys(json.loads(previous[4]) + rel.keywords))
            description = previous[5] if rel.description in previous[5] else previous[5] + " " + rel.description
            relation_rows[(src, tgt)] = (src, tgt, chunk_id, doc_id, json.dumps(keywords), description,
                                         previous[6] + rel.weight)
        else:
            relation_rows[(src, tgt)] = (src, tgt, chunk_id, doc_id, json.dumps(rel.keywords), rel.description,
                                         rel.weight)
    conn.executemany("INSERT OR REPLACE INTO entity_fragments(entity_key, chunk_id, doc_id, name, type, description, "
                     "type_votes, aliases) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", list(entity_rows.values()))
    conn.executemany("INSERT OR REPLACE INTO sentences(chunk_id, ord, text, mentions) VALUES (?, ?, ?, ?)",
                     [(chunk_id, i, s.text, json.dumps(s.mentions, ensure_ascii=False))
                      for i, s in enumerate(ex.sentences)])
    conn.executemany("INSERT OR REPLACE INTO relation_fragments VALUES (?, ?, ?, ?, ?, ?, ?)",
                     list(relation_rows.values()))
    mentions = ex.mentions
    conn.executemany("INSERT OR REPLACE INTO mentions(term, chunk_id, count, label) VALUES (?, ?, ?, ?)",
                     [(t, chunk_id, c, mentions.labels.get(t, "")) for t, c in mentions.counts.items()])
    pairs = [(chunk_id, a, b, c) for (a, b), c in mentions.cooccurrence.items()]
    conn.executemany("INSERT OR REPLACE INTO chunk_cooccurrence(chunk_id, a, b, count) VALUES (?, ?, ?, ?)", pairs)
    conn.executemany(
        "INSERT INTO mention_edges(a, b, weight) VALUES (?, ?, ?) "
        "ON CONFLICT(a, b) DO UPDATE SET weight = weight + excluded.weight",
        [(a, b, c) for _, a, b, c in pairs])
    return set(entity_rows), set(relation_rows)


def remove_chunks(conn: sqlite3.Connection, chunk_ids: list[str]) -> tuple[set[str], set[tuple[str, str]]]:
    """Remove every contribution of these chunks; return the entity and relation keys they touched."""
    touched_entities: set[str] = set()
    touched_relations: set[tuple[str, str]] = set()
    for chunk_id in chunk_ids:
        touched_entities.update(r[0] for r in conn.execute(
            "SELECT entity_key FROM entity_fragments WHERE chunk_id=?", (chunk_id,)))
        touched_relations.update((r[0], r[1]) for r in conn.execute(
            "SELECT source_key, target_key FROM relation_fragments WHERE chunk_id=?", (chunk_id,)))
        pairs = conn.execute("SELECT a, b, count FROM chunk_cooccurrence WHERE chunk_id=?", (chunk_id,)).fetchall()
        conn.executemany("UPDATE mention_edges SET weight = weight - ? WHERE a=? AND b=?",
                         [(c, a, b) for a, b, c in pairs])
        conn.execute("DELETE FROM chunk_cooccurrence WHERE chunk_id=?", (chunk_id,))
        conn.execute("DELETE FROM mentions WHERE chunk_id=?", (chunk_id,))
        conn.execute("DELETE FROM entity_fragments WHERE chunk_id=?", (chunk_id,))
        conn.execute("DELETE FROM sentences WHERE chunk_id=?", (chunk_id,))
        conn.execute("DELETE FROM relation_fragments WHERE chunk_id=?", (chunk_id,))
    conn.execute("DELETE FROM mention_edges WHERE weight <= 0")
    return touched_entities, touched_relations


_JOIN = "JOIN documents d ON d.doc_id = f.doc_id JOIN chunks c ON c.chunk_id = f.chunk_id"
_ORDER = "ORDER BY d.seq, c.ord"


def entity_fragments(conn: sqlite3.Connection, keys: Iterable[str]) -> dict[str, list[EntityFragment]]:
    """Fragments of each entity, in corpus order (document insertion order, then chunk order)."""
    out: dict[str, list[EntityFragment]] = defaultdict(list)
    for key in keys:
        rows = conn.execute(
            f"SELECT f.chunk_id, f.doc_id, f.name, f.type, f.description, f.type_votes, f.aliases "
            f"FROM entity_fragments f {_JOIN} WHERE f.entity_key=? {_ORDER}", (key,))
        out[key] = [EntityFragment(row[0], row[1], row[2], row[3], row[4], json.loads(row[5] or "{}"), json.loads(row[6] or "[]")) for row in rows]
    return out


def relation_fragments(conn: sqlite3.Connection, keys: Iterable[tuple[str, str]]
                       ) -> dict[tuple[str, str], list[RelationFragment]]:
    out: dict[tuple[str, str], list[RelationFragment]] = defaultdict(list)
    for src, tgt in keys:
        rows = conn.execute(
            f"SELECT f.chunk_id, f.doc_id, f.keywords, f.description, f.weight FROM relation_fragments f {_JOIN} "
            f"WHERE f.source_key=? AND f.target_key=? {_ORDER}", (src, tgt))
        out[(src, tgt)] = [RelationFragment(r[0], r[1], json.loads(r[2]), r[3], r[4]) for r in rows]
    return out


def existing_vector_ids(conn: sqlite3.Connection, table: str, keys: Iterable) -> dict:
    """Current vector id of each merged entity (table 'entities') or relation ('relations')."""
    out = {}
    for key in keys:
        if table == "entities":
            row = conn.execute("SELECT vector_id FROM entities WHERE entity_key=?", (key,)).fetchone()
        else:
            row = conn.execute("SELECT vector_id FROM relations WHERE source_key=? AND target_key=?", key).fetchone()
        if row:
            out[key] = row[0]
    return out


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def entity_name(conn: sqlite3.Connection, key: str) -> str | None:
    """The merged entity's display name (None when it has no row)."""
    row = conn.execute("SELECT name FROM entities WHERE entity_key=?", (key,)).fetchone()
    return row[0] if row else None


def entity_names(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT entity_key, name FROM entities").fetchall())


def write_entity(conn: sqlite3.Connection, key: str, name: str, etype: str, description: str,
                 source_chunk_ids: list[str], vector_id: str, aliases: list[str]) -> None:
    """Insert or replace one merged entity row."""
    conn.execute("INSERT OR REPLACE INTO entities(entity_key, name, type, description, source_chunk_ids, "
                 "vector_id, aliases) VALUES (?, ?, ?, ?, ?, ?, ?)",
                 (key, name, etype, description, _json(source_chunk_ids), vector_id, _json(aliases)))


def delete_entity(conn: sqlite3.Connection, key: str) -> None:
    conn.execute("DELETE FROM entities WHERE entity_key=?", (key,))


def relations_touching(conn: sqlite3.Connection, key: str) -> list[tuple[str, str]]:
    """(source, target) of every merged relation with ``key`` as an endpoint."""
    return [(a, b) for a, b in conn.execute(
        "SELECT source_key, target_key FROM relations WHERE source_key=? OR target_key=?", (key, key))]


def write_relation(conn: sqlite3.Connection, pair: tuple[str, str], keywords: list[str], description: str,
                   weight: float, source_chunk_ids: list[str], vector_id: str) -> None:
    """Insert or replace one merged relation row."""
    conn.execute("INSERT OR REPLACE INTO relations VALUES (?, ?, ?, ?, ?, ?, ?)",
                 (pair[0], pair[1], _json(keywords), description, weight, _json(source_chunk_ids), vector_id))


def delete_relation(conn: sqlite3.Connection, pair: tuple[str, str]) -> None:
    conn.execute("DELETE FROM relations WHERE source_key=? AND target_key=?", pair)


def entity_vector_rows(conn: sqlite3.Connection) -> list[tuple[str, str, str, str]]:
    """(key, name, description, vector id) of every merged entity."""
    return conn.execute("SELECT entity_key, name, description, vector_id FROM entities").fetchall()


def relation_vector_rows(conn: sqlite3.Connection) -> list[tuple[str, str, list[str], str, str]]:
    """(source, target, keywords, description, vector id) of every merged relation."""
    return [(src, tgt, json.loads(kws), desc, vid) for src, tgt, kws, desc, vid in conn.execute(
        "SELECT source_key, target_key, keywords, description, vector_id FROM relations")]


def fragment_type_votes(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    """(entity key, type, type votes JSON) of every entity fragment."""
    return conn.execute("SELECT entity_key, type, type_votes FROM entity_fragments").fetchall()


def load_knowledge_graph(conn: sqlite3.Connection) -> nx.Graph:
    """The merged knowledge graph as an undirected networkx view."""
    graph = nx.Graph()
    for key, name, etype, desc, sources, aliases in conn.execute(
            "SELECT entity_key, name, type, description, source_chunk_ids, aliases FROM entities ORDER BY entity_key"):
        graph.add_node(key, name=name, type=etype, description=desc, source_chunk_ids=json.loads(sources),
                       aliases=json.loads(aliases or "[]"))
    for src, tgt, kws, desc, weight, sources in conn.execute(
            "SELECT source_key, target_key, keywords, description, weight, source_chunk_ids FROM relations "
            "ORDER BY source_key, target_key"):
        graph.add_edge(src, tgt, keywords=json.loads(kws), description=desc, weight=weight,
                       source_chunk_ids=json.loads(sources))
    return graph


def load_mention_graph(conn: sqlite3.Connection) -> nx.Graph:
    """The E2GraphRAG co-occurrence graph (node attr: label; edge attr: weight)."""
    graph = nx.Graph()
    for term, label in conn.execute("SELECT term, max(label) FROM mentions GROUP BY term ORDER BY term"):
        graph.add_node(term, label=label)
    graph.add_weighted_edges_from(conn.execute("SELECT a, b, weight FROM mention_edges ORDER BY a, b"))
    return graph


def load_mention_index(conn: sqlite3.Connection) -> dict[str, dict[str, int]]:
    """term -> {chunk_id: occurrences} (E2GraphRAG's entity -> chunks index)."""
    index: dict[str, dict[str, int]] = defaultdict(dict)
    for term, chunk_id, count in conn.execute("SELECT term, chunk_id, count FROM mentions"):
        index[term][chunk_id] = count
    return dict(index)


def chunk_sentences(conn: sqlite3.Connection, chunk_ids: Iterable[str]) -> dict[str, list[tuple[str, list[list[str]]]]]:
    """chunk id -> its sentences in order, each (text, typed mentions [[label, surface, key], ...])."""
    out: dict[str, list[tuple[str, list[list[str]]]]] = {}
    ids = list(dict.fromkeys(chunk_ids))
    for start in range(0, len(ids), 900):
        part = ids[start : start + 900]
        marks = ",".join("?" * len(part))
        for chunk_id, text, mentions in conn.execute(
                f"SELECT chunk_id, text, mentions FROM sentences WHERE chunk_id IN ({marks}) ORDER BY chunk_id, ord",
                part):
            out.setdefault(chunk_id, []).append((text, json.loads(mentions)))
    return out
