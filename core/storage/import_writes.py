"""The import port: bulk writes of a graph imported from another system (``core.importers``), and the origin
of each graph part (imported, or added later by RAGScope's own indexing).

``ImportWrites`` is the small protocol the importer writes through; ``import_writes(records)`` gives the one
for a workspace's ``RecordStore``. The SQL adapter serves both SQLite and PostgreSQL (the PostgreSQL store
runs the same SQL through ``postgres_dialect``). What it adds to the record store's own methods:

* fragment rows with keys the importer chose (``graph_store.insert_chunk_extraction`` keys by
  ``normalize_name`` and would merge names the other system kept apart), written in bulk;
* "replace what the import wrote": an entity's (or relation's) fragments from the imported documents are
  dropped before the new ones are written; fragments from documents RAGScope indexed itself stay. The
  imported documents are the ones whose ``source`` is the import's (``"lightrag"``);
* the merged rows an import compares against (to write only what changed), and per-part origin counts.

Rows are plain tuples (no backend type leaves this module):

* entity: (key, name, type, description, source chunk ids, vector id)
* entity fragment: (key, chunk id, doc id, name, type, description)
* relation: (source key, target key, keywords, description, weight, source chunk ids, vector id)
* relation fragment: (source key, target key, chunk id, doc id, keywords, description, weight)
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Protocol, Sequence, runtime_checkable

from core.storage.ports import Pair, RecordStore

EntityRow = tuple[str, str, str, str, list[str], str]
EntityFragmentRow = tuple[str, str, str, str, str, str]
RelationRow = tuple[str, str, list[str], str, float, list[str], str]
RelationFragmentRow = tuple[str, str, str, str, list[str], str, float]
ORIGINS = ("imported", "added", "both")


@runtime_checkable
class ImportWrites(Protocol):
    """Bulk writes of one import, inside the record store's ``unit_of_work()``."""

    def stored_entities(self) -> dict[str, tuple]:
        """key -> (name, type, description, source chunk ids, vector id) of every merged entity."""

    def stored_relations(self) -> dict[Pair, tuple]:
        """(source, target) -> (keywords, description, weight, source chunk ids, vector id)."""

    def replace_entities(self, entities: Sequence[EntityRow], fragments: Sequence[EntityFragmentRow],
                         source: str) -> None:
        """Drop these entities' fragments from documents of ``source``, insert ``fragments``, write the rows."""

    def replace_relations(self, relations: Sequence[RelationRow], fragments: Sequence[RelationFragmentRow],
                          source: str) -> None: ...

    def drop_fragments(self, entity_keys: Iterable[str], relation_keys: Iterable[Pair], source: str) -> None:
        """Drop the fragments of these entities/relations that came from documents of ``source``."""

    def origin_counts(self, source: str) -> dict[str, dict[str, int]]:
        """Documents, chunks, entities, relations by origin: from documents of ``source`` ("imported"), from
        other documents ("added"), or, for entities and relations, from both."""

    def origin_of(self, source: str, entity_keys: Iterable[str] = (), relation_keys: Iterable[Pair] = ()
                  ) -> dict[Any, str]:
        """The origin ("imported", "added", "both") of each given entity key and relation pair."""


_PART = 400  # keys per IN (...) list: below SQLite's and PostgreSQL's parameter limits with room to spare


def _parts(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), _PART):
        yield items[start:start + _PART]


class SqlImportWrites:
    """``ImportWrites`` over a SQL record store's connection (SQLite, or PostgreSQL through its dialect shim)."""

    _IMPORTED = "doc_id IN (SELECT doc_id FROM documents WHERE source=?)"

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def stored_entities(self) -> dict[str, tuple]:
        rows = self.conn.execute("SELECT entity_key, name, type, description, source_chunk_ids, vector_id FROM entities")
        return {r[0]: (r[1], r[2], r[3], json.loads(r[4]), r[5]) for r in rows}

    def stored_relations(self) -> dict[Pair, tuple]:
        rows = self.conn.execute("SELECT source_key, target_key, keywords, description, weight, source_chunk_ids, "
                                 "vector_id FROM relations")
        return {(r[0], r[1]): (json.loads(r[2]), r[3], float(r[4]), json.loads(r[5]), r[6]) for r in rows}

    def _any_imported(self, table: str, source: str) -> bool:
        return self.conn.execute(f"SELECT 1 FROM {table} WHERE {self._IMPORTED} LIMIT 1", (source,)).fetchone() is not None

    def drop_fragments(self, entity_keys: Iterable[str], relation_keys: Iterable[Pair], source: str) -> None:
        keys = sorted(set(entity_keys)) if self._any_imported("entity_fragments", source) else []
        for part in _parts(keys):
            self.conn.execute(f"DELETE FROM entity_fragments WHERE entity_key IN ({','.join('?' * len(part))}) "
                              f"AND {self._IMPORTED}", (*part, source))
        pairs = sorted(set(relation_keys)) if self._any_imported("relation_fragments", source) else []
        if pairs:
            self.conn.executemany(f"DELETE FROM relation_fragments WHERE source_key=? AND target_key=? AND "
                                  f"{self._IMPORTED}", [(a, b, source) for a, b in pairs])

    def replace_entities(self, entities: Sequence[EntityRow], fragments: Sequence[EntityFragmentRow],
                         source: str) -> None:
        self.drop_fragments([e[0] for e in entities], (), source)
        self.conn.executemany(
            "INSERT OR REPLACE INTO entity_fragments(entity_key, chunk_id, doc_id, name, type, description, "
            "type_votes, aliases) VALUES (?, ?, ?, ?, ?, ?, ?, '[]')",
            [(*row, json.dumps({row[4]: 1})) for row in fragments])
        self.conn.executemany(
            "INSERT OR REPLACE INTO entities(entity_key, name, type, description, source_chunk_ids, vector_id, "
            "aliases) VALUES (?, ?, ?, ?, ?, ?, '[]')",
            [(k, n, t, d, json.dumps(s), v) for k, n, t, d, s, v in entities])

    def replace_relations(self, relations: Sequence[RelationRow], fragments: Sequence[RelationFragmentRow],
                          source: str) -> None:
        self.drop_fragments((), [(r[0], r[1]) for r in relations], source)
        self.conn.executemany(
            "INSERT OR REPLACE INTO relation_fragments(source_key, target_key, chunk_id, doc_id, keywords, "
            "description, weight) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(s, t, c, d, json.dumps(k), desc, w) for s, t, c, d, k, desc, w in fragments])
        self.conn.executemany(
            "INSERT OR REPLACE INTO relations(source_key, target_key, keywords, description, weight, "
            "source_chunk_ids, vector_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(a, b, json.dumps(k), d, w, json.dumps(s), v) for a, b, k, d, w, s, v in relations])

    def _origins(self, table: str, key_sql: str, source: str, where: str = "", args: Sequence[Any] = ()
                 ) -> dict[Any, str]:
        rows = self.conn.execute(
            f"SELECT {key_sql}, max(CASE WHEN d.source=? THEN 1 ELSE 0 END), "
            f"max(CASE WHEN d.source=? THEN 0 ELSE 1 END) FROM {table} f JOIN documents d ON d.doc_id = f.doc_id "
            f"{where} GROUP BY {key_sql}", (source, source, *args))
        out: dict[Any, str] = {}
        for row in rows:
            key = row[0] if key_sql == "f.entity_key" else (row[0], row[1])
            imported, added = int(row[-2]), int(row[-1])
            out[key] = "both" if imported and added else ("imported" if imported else "added")
        return out

    def origin_of(self, source: str, entity_keys: Iterable[str] = (), relation_keys: Iterable[Pair] = ()
                  ) -> dict[Any, str]:
        out: dict[Any, str] = {}
        for part in _parts(sorted(set(entity_keys))):
            out.update(self._origins("entity_fragments", "f.entity_key", source,
                                     f"WHERE f.entity_key IN ({','.join('?' * len(part))})", part))
        for a, b in sorted(set(relation_keys)):
            out.update(self._origins("relation_fragments", "f.source_key, f.target_key", source,
                                     "WHERE f.source_key=? AND f.target_key=?", (a, b)))
        return out

    def origin_counts(self, source: str) -> dict[str, dict[str, int]]:
        docs = dict(self.conn.execute("SELECT CASE WHEN source=? THEN 'imported' ELSE 'added' END, count(*) "
                                      "FROM documents GROUP BY 1", (source,)).fetchall())
        chunks = dict(self.conn.execute(
            "SELECT CASE WHEN d.source=? THEN 'imported' ELSE 'added' END, count(*) FROM chunks c "
            "JOIN documents d ON d.doc_id = c.doc_id GROUP BY 1", (source,)).fetchall())
        out = {"documents": {o: int(docs.get(o, 0)) for o in ORIGINS[:2]},
               "chunks": {o: int(chunks.get(o, 0)) for o in ORIGINS[:2]}}
        for part, table, key_sql in (("entities", "entity_fragments", "f.entity_key"),
                                     ("relations", "relation_fragments", "f.source_key, f.target_key")):
            origins = list(self._origins(table, key_sql, source).values())
            out[part] = {o: origins.count(o) for o in ORIGINS}
        return out


def import_writes(records: RecordStore) -> ImportWrites:
    """The import port of a workspace's record store (SQLite or PostgreSQL)."""
    from core.storage.store import Store

    if isinstance(records, Store):  # the PostgreSQL store is a Store over a PgConnection
        return SqlImportWrites(records.conn)
    raise TypeError(f"{type(records).__name__} has no import writes: importing another system's graph needs the "
                    "SQLite or PostgreSQL record store")

