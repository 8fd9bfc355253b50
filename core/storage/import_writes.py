"""The import port: bulk writes of a graph imported from another system (``core.importers``), and the origin
of each graph part (imported, or added later by RAGScope's own indexing).

``ImportWrites`` is the small protocol the importer writes through; ``import_writes(records)`` gives the one
for a workspace's ``RecordStore``. The SQL adapter serves both SQLite and PostgreSQL (SQLAlchemy Core
statements, each dialect's own upsert). What it adds to the record store's own methods:

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

from sqlalchemy import ColumnElement, and_, bindparam, case, delete, func, select

from core.storage import schema as s
from core.storage.ports import RecordStore
from core.storage.records import Pair
from core.storage.sql_connection import SqlConnection
from core.storage.upserts import replace_row

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
_d, _c, _e, _r, _ef, _rf = s.documents, s.chunks, s.entities, s.relations, s.entity_fragments, s.relation_fragments


def _parts(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), _PART):
        yield items[start:start + _PART]


def _from_source(doc_id: ColumnElement[Any], source: Any) -> ColumnElement[bool]:
    """The row's document came from ``source`` (an import)."""
    return doc_id.in_(select(_d.c.doc_id).where(_d.c.source == source))


def _by_origin(rows: Iterable[Any], source: str) -> dict[str, int]:
    """{"imported": n, "added": m} from (document source, count) rows."""
    out = {"imported": 0, "added": 0}
    for origin, count in rows:
        out["imported" if origin == source else "added"] += int(count)
    return out


class SqlImportWrites:
    """``ImportWrites`` over a SQL record store's connection (SQLite or PostgreSQL)."""

    def __init__(self, db: SqlConnection) -> None:
        self.db = db

    def stored_entities(self) -> dict[str, tuple]:
        rows = self.db.rows(select(_e.c.entity_key, _e.c.name, _e.c.type, _e.c.description,
                                      _e.c.source_chunk_ids, _e.c.vector_id))
        return {r[0]: (r[1], r[2], r[3], json.loads(r[4]), r[5]) for r in rows}

    def stored_relations(self) -> dict[Pair, tuple]:
        rows = self.db.rows(select(_r.c.source_key, _r.c.target_key, _r.c.keywords, _r.c.description,
                                      _r.c.weight, _r.c.source_chunk_ids, _r.c.vector_id))
        return {(r[0], r[1]): (json.loads(r[2]), r[3], float(r[4]), json.loads(r[5]), r[6]) for r in rows}

    def _any_imported(self, table: Any, source: str) -> bool:
        found = self.db.execute(select(table.c.doc_id).where(_from_source(table.c.doc_id, source)).limit(1))
        return found.first() is not None

    def drop_fragments(self, entity_keys: Iterable[str], relation_keys: Iterable[Pair], source: str) -> None:
        keys = sorted(set(entity_keys)) if self._any_imported(_ef, source) else []
        for part in _parts(keys):
            self.db.execute(delete(_ef).where(_ef.c.entity_key.in_(part), _from_source(_ef.c.doc_id, source)))
        pairs = sorted(set(relation_keys)) if self._any_imported(_rf, source) else []
        statement = delete(_rf).where(_rf.c.source_key == bindparam("pair_source"),
                                      _rf.c.target_key == bindparam("pair_target"),
                                      _from_source(_rf.c.doc_id, bindparam("origin")))
        self.db.execute_many(statement, [{"pair_source": a, "pair_target": b, "origin": source} for a, b in pairs])

    def replace_entities(self, entities: Sequence[EntityRow], fragments: Sequence[EntityFragmentRow],
                         source: str) -> None:
        self.drop_fragments([e[0] for e in entities], (), source)
        self.db.execute_many(replace_row(self.db.dialect, _ef), [
            {"entity_key": k, "chunk_id": c, "doc_id": d, "name": n, "type": t, "description": desc,
             "type_votes": json.dumps({t: 1}), "aliases": "[]"} for k, c, d, n, t, desc in fragments])
        self.db.execute_many(replace_row(self.db.dialect, _e), [
            {"entity_key": k, "name": n, "type": t, "description": d, "source_chunk_ids": json.dumps(src),
             "vector_id": v, "aliases": "[]"} for k, n, t, d, src, v in entities])

    def replace_relations(self, relations: Sequence[RelationRow], fragments: Sequence[RelationFragmentRow],
                          source: str) -> None:
        self.drop_fragments((), [(r[0], r[1]) for r in relations], source)
        self.db.execute_many(replace_row(self.db.dialect, _rf), [
            {"source_key": a, "target_key": b, "chunk_id": c, "doc_id": d, "keywords": json.dumps(k),
             "description": desc, "weight": w} for a, b, c, d, k, desc, w in fragments])
        self.db.execute_many(replace_row(self.db.dialect, _r), [
            {"source_key": a, "target_key": b, "keywords": json.dumps(k), "description": d, "weight": w,
             "source_chunk_ids": json.dumps(src), "vector_id": v} for a, b, k, d, w, src, v in relations])

    def _origins(self, table: Any, keys: tuple[Any, ...], source: str, *where: ColumnElement[bool]
                 ) -> dict[Any, str]:
        query = (select(*keys, func.max(case((_d.c.source == source, 1), else_=0)),
                        func.max(case((_d.c.source == source, 0), else_=1)))
                 .select_from(table.join(_d, _d.c.doc_id == table.c.doc_id)).where(*where).group_by(*keys))
        out: dict[Any, str] = {}
        for row in self.db.rows(query):
            key = row[0] if len(keys) == 1 else (row[0], row[1])
            imported, added = int(row[-2]), int(row[-1])
            out[key] = "both" if imported and added else ("imported" if imported else "added")
        return out

    def origin_of(self, source: str, entity_keys: Iterable[str] = (), relation_keys: Iterable[Pair] = ()
                  ) -> dict[Any, str]:
        out: dict[Any, str] = {}
        for part in _parts(sorted(set(entity_keys))):
            out.update(self._origins(_ef, (_ef.c.entity_key,), source, _ef.c.entity_key.in_(part)))
        for a, b in sorted(set(relation_keys)):
            out.update(self._origins(_rf, (_rf.c.source_key, _rf.c.target_key), source,
                                     and_(_rf.c.source_key == a, _rf.c.target_key == b)))
        return out

    def origin_counts(self, source: str) -> dict[str, dict[str, int]]:
        docs = self.db.execute(select(_d.c.source, func.count()).group_by(_d.c.source))
        chunks = self.db.execute(select(_d.c.source, func.count()).select_from(_c.join(_d, _d.c.doc_id == _c.c.doc_id))
                                 .group_by(_d.c.source))
        out = {"documents": _by_origin(docs, source), "chunks": _by_origin(chunks, source)}
        for part, table, keys in (("entities", _ef, (_ef.c.entity_key,)),
                                  ("relations", _rf, (_rf.c.source_key, _rf.c.target_key))):
            origins = list(self._origins(table, keys, source).values())
            out[part] = {o: origins.count(o) for o in ORIGINS}
        return out


def import_writes(records: RecordStore) -> ImportWrites:
    """The import port of a workspace's record store (SQLite or PostgreSQL)."""
    from core.storage.store import SqlRecordStore

    if isinstance(records, SqlRecordStore):
        return SqlImportWrites(records.db)
    raise TypeError(f"{type(records).__name__} has no import writes: importing another system's graph needs the "
                    "SQLite or PostgreSQL record store")
