"""The graph-edit half of the SQL ``RecordStore``: the edit log (``graph_edits``) and the few reads of
merged rows and fragments an edit needs, on the store's own connection (so an edit is part of the
caller's unit of work). Mixed into ``core.storage.store.SqlRecordStore``; statements in SQLAlchemy Core,
the same on both backends."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterable, Optional

from sqlalchemy import insert, or_, select, update

from core.storage import schema as s
from core.storage.records import GraphEdit, Pair

if TYPE_CHECKING:
    from core.storage.sql_connection import SqlConnection

_g, _e, _r, _rf = s.graph_edits, s.entities, s.relations, s.relation_fragments
_EDIT = select(_g.c.id, _g.c.ts, _g.c.principal, _g.c.op, _g.c.args, _g.c.before, _g.c.after, _g.c.undone)
_ENTITY = select(_e.c.entity_key, _e.c.name, _e.c.type, _e.c.description, _e.c.source_chunk_ids, _e.c.vector_id,
                 _e.c.aliases)
_RELATION = select(_r.c.source_key, _r.c.target_key, _r.c.keywords, _r.c.description, _r.c.weight,
                   _r.c.source_chunk_ids, _r.c.vector_id)


def _edit(row: Any) -> GraphEdit:
    return GraphEdit(int(row[0]), float(row[1]), row[2], row[3], json.loads(row[4] or "{}"),
                     json.loads(row[5] or "{}"), json.loads(row[6] or "{}"), bool(row[7]))


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class EditRows:
    """Mixed into ``core.storage.store.SqlRecordStore`` (which provides ``db``)."""

    db: "SqlConnection"

    def ensure_edit_tables(self) -> None:
        """Create the edit log if missing (idempotent; inside the caller's unit of work)."""
        s.create_or_upgrade(self.db.sql, s.EDIT_TABLES)

    def append_edit(self, ts: float, principal: str, op: str, args: dict[str, Any], before: dict[str, Any],
                    after: dict[str, Any]) -> int:
        """Add one edit to the log; its id (ids grow: the log replays in id order)."""
        result = self.db.execute(insert(_g).returning(_g.c.id), {
            "ts": ts, "principal": principal, "op": op, "args": _json(args), "before": _json(before),
            "after": _json(after), "undone": 0})
        return int(result.scalar_one())

    def graph_edits(self, include_undone: bool = True) -> list[GraphEdit]:
        """The edit log in id order (the undone edits too unless ``include_undone`` is False)."""
        statement = _EDIT if include_undone else _EDIT.where(_g.c.undone == 0)
        return [_edit(row) for row in self.db.rows(statement.order_by(_g.c.id))]

    def set_edit_undone(self, edit_id: int, undone: bool) -> int:
        """Mark one edit undone (or redone); 1 when it exists."""
        result = self.db.execute(update(_g).where(_g.c.id == edit_id).values(undone=int(undone)))
        return int(result.rowcount or 0)

    def entity_rows(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The merged rows of the given entities (keys without a row left out)."""
        wanted = list(dict.fromkeys(keys))
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(wanted), 500):
            for row in self.db.rows(_ENTITY.where(_e.c.entity_key.in_(wanted[start:start + 500]))):
                out[row[0]] = {"name": row[1], "type": row[2], "description": row[3],
                               "source_chunk_ids": json.loads(row[4] or "[]"), "vector_id": row[5],
                               "aliases": json.loads(row[6] or "[]")}
        return out

    def relation_row(self, pair: Pair) -> Optional[dict[str, Any]]:
        """The merged row of one relation (stored order of its keys), None when absent."""
        row = self.db.execute(_RELATION.where(_r.c.source_key == pair[0], _r.c.target_key == pair[1])).first()
        if row is None:
            return None
        return {"keywords": json.loads(row[2] or "[]"), "description": row[3], "weight": float(row[4]),
                "source_chunk_ids": json.loads(row[5] or "[]"), "vector_id": row[6]}

    def fragment_pairs_touching(self, keys: Iterable[str]) -> set[Pair]:
        """Every (source, target) of a relation fragment with one of ``keys`` as an endpoint."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return set()
        statement = select(_rf.c.source_key, _rf.c.target_key).distinct().where(
            or_(_rf.c.source_key.in_(wanted), _rf.c.target_key.in_(wanted)))
        return {(a, b) for a, b in self.db.rows(statement)}
