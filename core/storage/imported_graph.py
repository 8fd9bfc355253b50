"""SQL for graphs imported from another system (``core.importers``): fragment rows with keys the importer
chose (``graph_store.insert_chunk_extraction`` keys by ``normalize_name`` and would merge names the other
system kept apart), removal of the imported fragments only, and the stored rows an import compares against."""
from __future__ import annotations

import json
import sqlite3
from typing import Iterable


def stored_entities(conn: sqlite3.Connection) -> dict[str, tuple]:
    """key -> (name, type, description, source chunk ids, vector id) of every merged entity."""
    rows = conn.execute("SELECT entity_key, name, type, description, source_chunk_ids, vector_id FROM entities")
    return {r[0]: (r[1], r[2], r[3], json.loads(r[4]), r[5]) for r in rows}


def stored_relations(conn: sqlite3.Connection) -> dict[tuple[str, str], tuple]:
    """(source, target) -> (keywords, description, weight, source chunk ids, vector id) of every merged relation."""
    rows = conn.execute("SELECT source_key, target_key, keywords, description, weight, source_chunk_ids, vector_id "
                        "FROM relations")
    return {(r[0], r[1]): (json.loads(r[2]), r[3], float(r[4]), json.loads(r[5]), r[6]) for r in rows}


def insert_entity_fragments(conn: sqlite3.Connection, rows: Iterable[tuple[str, str, str, str, str, str]]) -> None:
    """(key, chunk id, doc id, name, type, description) rows; one type vote each, no aliases."""
    conn.executemany(
        "INSERT OR REPLACE INTO entity_fragments(entity_key, chunk_id, doc_id, name, type, description, type_votes, "
        "aliases) VALUES (?, ?, ?, ?, ?, ?, ?, '[]')",
        [(*row, json.dumps({row[4]: 1})) for row in rows])


def insert_relation_fragments(conn: sqlite3.Connection,
                              rows: Iterable[tuple[str, str, str, str, list[str], str, float]]) -> None:
    """(source key, target key, chunk id, doc id, keywords, description, weight) rows."""
    conn.executemany("INSERT OR REPLACE INTO relation_fragments VALUES (?, ?, ?, ?, ?, ?, ?)",
                     [(s, t, c, d, json.dumps(k), desc, w) for s, t, c, d, k, desc, w in rows])


def drop_fragments_of_documents(conn: sqlite3.Connection, entity_key: str | None,
                                relation: tuple[str, str] | None, doc_ids: Iterable[str]) -> None:
    """Delete one entity's (or one relation's) fragments that come from ``doc_ids`` (others are kept)."""
    docs = sorted(set(doc_ids))
    for start in range(0, len(docs), 900):
        part = docs[start:start + 900]
        marks = ",".join("?" * len(part))
        if entity_key is not None:
            conn.execute(f"DELETE FROM entity_fragments WHERE entity_key=? AND doc_id IN ({marks})",
                         (entity_key, *part))
        if relation is not None:
            conn.execute(f"DELETE FROM relation_fragments WHERE source_key=? AND target_key=? AND doc_id IN ({marks})",
                         (*relation, *part))
