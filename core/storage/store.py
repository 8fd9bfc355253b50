"""The SQL ``RecordStore`` (``core.storage.ports``) of both backends: typed access to the workspace's
database — documents, chunks, graph fragments, merged entities/relations, mention graph, summary tree,
meta and run log — with statements written once in SQLAlchemy Core.

One store is one connection (``core.storage.sql_connection.SqlConnection``); ``Workspace`` gives every
thread its own, so a reader never sees the writer's uncommitted unit of work. The SQLite backend
(``SqliteStore``) and the PostgreSQL one (``PostgresStore``) give the connection; the statements are
the same.
"""
from __future__ import annotations

import json
import time
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Optional

from sqlalchemy import BindParameter, bindparam, delete, distinct, func, insert, literal, select, update

from core.embeddings import window_id
from core.storage import schema as s
from core.storage.edit_rows import EditRows
from core.storage.graph_rows import GraphRows
from core.storage.position_rows import PositionRows
from core.storage.records import DocumentRow, TreeNode
from core.storage.sql_connection import SqlConnection
from core.storage.upserts import replace_row
from core.types import Chunk

BATCH = 900  # keys per IN (...) list


_d, _c, _t, _p, _f = s.documents, s.chunks, s.tree_nodes, s.doc_positions, s.doc_files
_DOCUMENT = select(_d.c.doc_id, _d.c.name, _d.c.source, _d.c.content_hash, _d.c.tokens, _d.c.status, _d.c.error,
                   _d.c.seq, _d.c.created_at, _d.c.updated_at, _d.c.elapsed_s)
_CHUNK = select(_c.c.chunk_id, _c.c.doc_id, _c.c.ord, _c.c.text, _c.c.tokens, _c.c.start_token, _c.c.windows,
                _c.c.start_char)
_CHUNKS_OF = _CHUNK.where(_c.c.doc_id == bindparam("doc_id")).order_by(_c.c.ord)
_CHUNKS_BY_ID = _CHUNK.where(_c.c.chunk_id.in_(bindparam("ids", expanding=True)))
_CHUNK_PLACES = select(_c.c.chunk_id, _c.c.doc_id, _c.c.ord, _c.c.start_char, func.length(_c.c.text)).where(
    _c.c.chunk_id.in_(bindparam("ids", expanding=True)))
_TREE = select(_t.c.node_id, _t.c.scope, _t.c.doc_id, _t.c.level, _t.c.ord, _t.c.parent_id, _t.c.child_ids,
               _t.c.leaf_chunk_ids, _t.c.text, _t.c.tokens, _t.c.vector_id)
_GET_META = select(s.meta.c.value).where(s.meta.c.key == bindparam("key"))
# statements run once per document or per log line: built once (a Core statement built per call costs more
# than running it)
_DOC: BindParameter[str] = bindparam("doc")
_DOCUMENT_BY_ID = _DOCUMENT.where(_d.c.doc_id == _DOC)
_DOCUMENTS_BY_IDS = _DOCUMENT.where(_d.c.doc_id.in_(bindparam("ids", expanding=True)))
_DOCUMENTS_NAMED = _DOCUMENT.where(_d.c.name == bindparam("name")).order_by(_d.c.seq)  # the documents_name index
_DOCUMENT_TEXT = select(_d.c.text).where(_d.c.doc_id == _DOC)
_INSERT_DOCUMENT = insert(_d).values(status="pending", error="")
_SET_STATUS = update(_d).where(_d.c.doc_id == _DOC)
_DELETE_DOCUMENT = delete(_d).where(_d.c.doc_id == _DOC)
_DELETE_LOAD_FAILURE = delete(_d).where(_d.c.name == bindparam("failed_name"), _d.c.status == "failed",
                                        _d.c.content_hash == "")
_LOG = insert(s.run_log)
_DELETE_TREE_NODE = delete(_t).where(_t.c.node_id == bindparam("node"))
COUNTED_TABLES = ("documents", "chunks", "entities", "relations", "mention_edges", "tree_nodes", "llm_cache")


def _chunk(row: Any) -> Chunk:
    return Chunk(row[0], row[1], row[2], row[3], row[4], row[5], windows=int(row[6]), start_char=int(row[7]))


class SqlRecordStore(GraphRows, EditRows, PositionRows):
    """The record store over one ``SqlConnection``. Writers wrap their writes in ``unit_of_work()``;
    reads are plain queries."""

    def __init__(self, db: SqlConnection) -> None:
        self.db = db

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def unit_of_work(self) -> Iterator["SqlRecordStore"]:
        """BEGIN … COMMIT: the block's writes land together or, when it raises, not at all."""
        self.db.begin(immediate=True)
        try:
            yield self
        except BaseException:
            self.db.rollback()
            raise
        self.db.commit()

    transaction = unit_of_work  # the older name

    def in_unit_of_work(self) -> bool:
        return self.db.in_transaction

    def rollback(self) -> None:
        """Abandon the open unit of work (nothing happens outside one)."""
        self.db.rollback()

    def commit(self) -> None:
        """Commit writes made outside a unit of work (single bookkeeping rows)."""
        self.db.commit()

    def _replace(self, table: Any, rows: list[dict[str, Any]]) -> None:
        if len(rows) == 1:
            self.db.execute(replace_row(self.db.dialect, table), rows[0])
        else:
            self.db.execute_many(replace_row(self.db.dialect, table), rows)

    # --- meta / log ----------------------------------------------------------------------
    def get_meta(self, key: str, default: str = "") -> str:
        value = self._read_meta(key)
        return default if value is None else value

    def _read_meta(self, key: str) -> Optional[str]:
        row = self.db.execute(_GET_META, {"key": key}).first()
        return row[0] if row else None

    def delete_meta(self, *keys: str) -> None:
        self.db.execute(delete(s.meta).where(s.meta.c.key.in_(keys)))

    def set_meta(self, key: str, value: str) -> None:
        self._replace(s.meta, [{"key": key, "value": value}])

    def log(self, event: str, detail: dict | str) -> None:
        text = detail if isinstance(detail, str) else json.dumps(detail, sort_keys=True)
        self.db.execute(_LOG, {"ts": time.time(), "event": event, "detail": text})

    # --- documents -----------------------------------------------------------------------
    def documents(self, status: Optional[str] = None) -> list[DocumentRow]:
        query = _DOCUMENT.where(_d.c.status == status) if status else _DOCUMENT
        return [DocumentRow(*row) for row in self.db.rows(query.order_by(_d.c.seq))]

    def document(self, doc_id: str) -> Optional[DocumentRow]:
        row = self.db.execute(_DOCUMENT_BY_ID, {"doc": doc_id}).first()
        return DocumentRow(*row) if row else None

    def document_text(self, doc_id: str) -> str:
        row = self.db.execute(_DOCUMENT_TEXT, {"doc": doc_id}).first()
        return row[0] if row else ""

    def documents_by_ids(self, doc_ids: Iterable[str]) -> dict[str, DocumentRow]:
        """doc_id -> row of those of ``doc_ids`` that exist (primary-key lookups, ``BATCH`` ids a query)."""
        ids = list(dict.fromkeys(doc_ids))
        out: dict[str, DocumentRow] = {}
        for start in range(0, len(ids), BATCH):
            for row in self.db.rows(_DOCUMENTS_BY_IDS, {"ids": ids[start:start + BATCH]}):
                out[row[0]] = DocumentRow(*row)
        return out

    def documents_named(self, name: str) -> list[DocumentRow]:
        return [DocumentRow(*row) for row in self.db.rows(_DOCUMENTS_NAMED, {"name": name})]

    def next_seq(self) -> int:
        """One more than the largest ``seq`` (the ``documents_seq`` index: one index probe, not a scan)."""
        return int(self.db.execute(select(func.coalesce(func.max(_d.c.seq), 0) + 1)).scalar_one())

    def insert_document(self, doc_id: str, name: str, source: str, content_hash: str, text: str, tokens: int) -> None:
        self.insert_documents([(doc_id, name, source, content_hash, text, tokens)])

    def insert_documents(self, rows: list[tuple[str, str, str, str, str, int]]) -> None:
        """Insert pending documents ``(doc_id, name, source, content_hash, text, tokens)`` in one
        ``executemany``, numbered in order after the last ``seq`` (read once for the batch)."""
        if not rows:
            return
        now, first = time.time(), self.next_seq()
        self.db.execute_many(_INSERT_DOCUMENT, [
            {"doc_id": doc_id, "name": name, "source": source, "content_hash": digest, "text": text, "tokens": tokens,
             "seq": first + i, "created_at": now, "updated_at": now}
            for i, (doc_id, name, source, digest, text, tokens) in enumerate(rows)])

    def set_status(self, doc_id: str, status: str, error: str = "", elapsed_s: Optional[float] = None) -> None:
        values: dict[str, Any] = {"status": status, "error": error, "updated_at": time.time()}
        if elapsed_s is not None:
            values["elapsed_s"] = elapsed_s
        self.db.execute(_SET_STATUS, {"doc": doc_id, **values})

    def delete_document_row(self, doc_id: str) -> None:
        self.db.execute(_DELETE_DOCUMENT, {"doc": doc_id})
        self.db.execute(delete(_p).where(_p.c.doc_id == _DOC), {"doc": doc_id})
        self.db.execute(delete(_f).where(_f.c.doc_id == _DOC), {"doc": doc_id})

    def delete_load_failure(self, name: str) -> None:
        """Drop the placeholder row of a file that failed to load (it has no content) named ``name``."""
        self.delete_load_failures([name])

    def delete_load_failures(self, names: Iterable[str]) -> None:
        """``delete_load_failure`` for each of ``names`` in one ``executemany`` (the name index)."""
        self.db.execute_many(_DELETE_LOAD_FAILURE, [{"failed_name": n} for n in dict.fromkeys(names)])

    def processing_to_pending(self, doc_ids: list[str]) -> int:
        """Documents of ``doc_ids`` still 'processing' go back to 'pending'; returns how many."""
        return int(self.db.execute(update(_d).where(_d.c.status == "processing", _d.c.doc_id.in_(doc_ids))
                                   .values(status="pending", error="")).rowcount)

    def failed_to_pending(self) -> int:
        """Failed documents that still have their text go back to 'pending'; returns how many."""
        return int(self.db.execute(update(_d).where(_d.c.status == "failed", _d.c.content_hash != "")
                                   .values(status="pending", error="")).rowcount)

    # --- chunks --------------------------------------------------------------------------
    def insert_chunks(self, chunks: Iterable[Chunk]) -> None:
        self._replace(_c, [{"chunk_id": c.chunk_id, "doc_id": c.doc_id, "ord": c.order, "text": c.text,
                            "tokens": c.tokens, "start_token": c.start_token, "windows": c.windows,
                            "start_char": c.start_char} for c in chunks])

    def chunks_of(self, doc_id: str) -> list[Chunk]:
        return [_chunk(row) for row in self.db.rows(_CHUNKS_OF, {"doc_id": doc_id})]

    def chunks_by_id(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, Chunk] = {}
        for start in range(0, len(ids), BATCH):
            rows = self.db.rows(_CHUNKS_BY_ID, {"ids": ids[start:start + BATCH]})
            out.update({row[0]: _chunk(row) for row in rows})
        return out

    def chunk_places(self, chunk_ids: Iterable[str]) -> dict[str, tuple[str, int, int, int]]:
        """``chunk_id -> (doc_id, order, start_char, length)`` without the texts (citations of graph hits)."""
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, tuple[str, int, int, int]] = {}
        for start in range(0, len(ids), BATCH):
            for row in self.db.rows(_CHUNK_PLACES, {"ids": ids[start:start + BATCH]}):
                out[row[0]] = (row[1], int(row[2]), int(row[3] if row[3] is not None else -1), int(row[4] or 0))
        return out

    def has_chunks(self) -> bool:
        return self.db.execute(select(literal(1)).select_from(_c).limit(1)).first() is not None

    def all_chunk_ids(self) -> list[str]:
        return self.db.scalars(select(_c.c.chunk_id).select_from(_c.join(_d, _c.c.doc_id == _d.c.doc_id))
                               .order_by(_d.c.seq, _c.c.ord))

    def delete_chunks_of(self, doc_id: str) -> list[str]:
        ids = self.db.scalars(select(_c.c.chunk_id).where(_c.c.doc_id == doc_id))
        self.db.execute(delete(_c).where(_c.c.doc_id == doc_id))
        return ids

    # --- counts --------------------------------------------------------------------------
    def count(self, table: str) -> int:
        if table not in COUNTED_TABLES:
            raise ValueError(table)
        return int(self.db.execute(select(func.count()).select_from(s.metadata.tables[table])).scalar_one())

    def mention_node_count(self) -> int:
        return int(self.db.execute(select(func.count(distinct(s.mentions.c.term)))).scalar_one())

    # --- tree ----------------------------------------------------------------------------
    def tree_nodes(self, scope: Optional[str] = None, doc_id: Optional[str] = None) -> list[TreeNode]:
        query = _TREE
        if scope:
            query = query.where(_t.c.scope == scope)
        if doc_id:
            query = query.where(_t.c.doc_id == doc_id)
        return [TreeNode(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), json.loads(r[7]), r[8], r[9], r[10])
                for r in self.db.rows(query.order_by(_t.c.scope, _t.c.doc_id, _t.c.level, _t.c.ord))]

    def upsert_tree_node(self, node: TreeNode) -> None:
        self._replace(_t, [{"node_id": node.node_id, "scope": node.scope, "doc_id": node.doc_id, "level": node.level,
                            "ord": node.ord, "parent_id": node.parent_id, "child_ids": json.dumps(node.child_ids),
                            "leaf_chunk_ids": json.dumps(node.leaf_chunk_ids), "text": node.text,
                            "tokens": node.tokens, "vector_id": node.vector_id}])

    def set_tree_parent(self, node_id: str, parent_id: str) -> None:
        self.db.execute(update(_t).where(_t.c.node_id == node_id).values(parent_id=parent_id))

    def delete_tree_nodes(self, node_ids: Iterable[str]) -> None:
        self.db.execute_many(_DELETE_TREE_NODE, [{"node": i} for i in node_ids])

    def doc_roots(self) -> dict[str, tuple[str, Optional[str]]]:
        r = s.doc_roots.c
        return {row[0]: (row[1], row[2]) for row in self.db.rows(select(r.doc_id, r.root_id, r.corpus_parent))}

    def set_doc_root(self, doc_id: str, root_id: str, corpus_parent: Optional[str]) -> None:
        self._replace(s.doc_roots, [{"doc_id": doc_id, "root_id": root_id, "corpus_parent": corpus_parent}])

    def delete_doc_root(self, doc_id: str) -> None:
        self.db.execute(delete(s.doc_roots).where(s.doc_roots.c.doc_id == doc_id))

    # --- reports ---------------------------------------------------------------------------
    def status_counts(self) -> dict[str, int]:
        """Documents per status."""
        return {row[0]: int(row[1]) for row in self.db.rows(
            select(_d.c.status, func.count()).group_by(_d.c.status))}

    def total_tokens(self) -> int:
        return int(self.db.execute(select(func.coalesce(func.sum(_d.c.tokens), 0))).scalar_one())

    def log_details(self, event: str) -> list[str]:
        """The JSON details of the run-log entries of ``event``, oldest first."""
        log = s.run_log.c
        return self.db.scalars(select(log.detail).where(log.event == event).order_by(log.id))

    def llm_usage_rows(self) -> list[tuple]:
        """(stage, calls, cached, prompt_tokens, completion_tokens, seconds) per LLM stage."""
        u = s.llm_usage.c
        return [tuple(r) for r in self.db.rows(
            select(u.stage, u.calls, u.cached, u.prompt_tokens, u.completion_tokens, u.seconds).order_by(u.stage))]

    def chunks_per_document(self) -> dict[str, int]:
        return {row[0]: int(row[1]) for row in self.db.rows(
            select(_c.c.doc_id, func.count()).group_by(_c.c.doc_id))}

    def entities_per_document(self) -> dict[str, int]:
        f = s.entity_fragments.c
        return {row[0]: int(row[1]) for row in self.db.rows(
            select(f.doc_id, func.count(distinct(f.entity_key))).group_by(f.doc_id))}

    # --- expected vector ids (for reconciliation) -----------------------------------------
    def expected_vector_ids(self) -> dict[str, set[str]]:
        return {
            "chunks": {window_id(cid, i) for cid, n in self.db.rows(select(_c.c.chunk_id, _c.c.windows))
                       for i in range(max(1, int(n)))},
            "entities": set(self.db.scalars(select(s.entities.c.vector_id))),
            "relations": set(self.db.scalars(select(s.relations.c.vector_id))),
            "tree": set(self.db.scalars(select(_t.c.vector_id))),
        }
