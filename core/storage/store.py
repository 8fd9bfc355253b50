"""The SQLite ``RecordStore`` (``core.storage.ports``): typed access to the workspace's database —
documents, chunks, graph fragments, merged entities/relations, mention graph, summary tree, meta and
run log. One ``Store`` is one connection; ``Workspace`` gives every thread its own, so a reader never
sees the writer's uncommitted unit of work (WAL: each read sees the last commit)."""
from __future__ import annotations

import json
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional

from core.embeddings import window_id
from core.storage.graph_rows import GraphRows
from core.storage.schema import connect
from core.types import Chunk


@dataclass
class DocumentRow:
    doc_id: str
    name: str
    source: str
    content_hash: str
    tokens: int
    status: str
    error: str
    seq: int
    created_at: float
    updated_at: float
    elapsed_s: float


@dataclass
class TreeNode:
    node_id: str
    scope: str  # "doc" | "corpus"
    doc_id: Optional[str]
    level: int
    ord: int
    parent_id: Optional[str]
    child_ids: list[str]
    leaf_chunk_ids: list[str]
    text: str
    tokens: int
    vector_id: str = ""


def _placeholders(n: int) -> str:
    return ",".join("?" * n)


class Store(GraphRows):
    """One SQLite connection (WAL). Writers wrap their writes in ``unit_of_work()``; reads are plain queries."""

    def __init__(self, path: Path, readonly: bool = False) -> None:
        self.path = Path(path)
        self.conn: sqlite3.Connection = connect(self.path, readonly=readonly)

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def unit_of_work(self) -> Iterator["Store"]:
        """BEGIN IMMEDIATE … COMMIT: the block's writes land together or, when it raises, not at all."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            self.conn.rollback()
            raise
        self.conn.commit()

    transaction = unit_of_work  # the older name

    def in_unit_of_work(self) -> bool:
        return self.conn.in_transaction

    def rollback(self) -> None:
        """Abandon the open unit of work (nothing happens outside one)."""
        if self.conn.in_transaction:
            self.conn.rollback()

    def commit(self) -> None:
        """Commit writes made outside a unit of work (single bookkeeping rows)."""
        self.conn.commit()

    # --- meta / log ----------------------------------------------------------------------
    def get_meta(self, key: str, default: str = "") -> str:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def delete_meta(self, *keys: str) -> None:
        self.conn.execute(f"DELETE FROM meta WHERE key IN ({_placeholders(len(keys))})", keys)

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def log(self, event: str, detail: dict | str) -> None:
        text = detail if isinstance(detail, str) else json.dumps(detail, sort_keys=True)
        self.conn.execute("INSERT INTO run_log(ts, event, detail) VALUES (?, ?, ?)", (time.time(), event, text))

    # --- documents -----------------------------------------------------------------------
    def documents(self, status: Optional[str] = None) -> list[DocumentRow]:
        sql = ("SELECT doc_id, name, source, content_hash, tokens, status, error, seq, created_at, updated_at, "
               "elapsed_s FROM documents")
        args: tuple = ()
        if status:
            sql += " WHERE status=?"
            args = (status,)
        return [DocumentRow(*row) for row in self.conn.execute(sql + " ORDER BY seq", args)]

    def document(self, doc_id: str) -> Optional[DocumentRow]:
        row = self.conn.execute(
            "SELECT doc_id, name, source, content_hash, tokens, status, error, seq, created_at, updated_at, elapsed_s "
            "FROM documents WHERE doc_id=?", (doc_id,)).fetchone()
        return DocumentRow(*row) if row else None

    def document_text(self, doc_id: str) -> str:
        row = self.conn.execute("SELECT text FROM documents WHERE doc_id=?", (doc_id,)).fetchone()
        return row[0] if row else ""

    def documents_named(self, name: str) -> list[DocumentRow]:
        return [d for d in self.documents() if d.name == name]

    def next_seq(self) -> int:
        return int(self.conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM documents").fetchone()[0])

    def insert_document(self, doc_id: str, name: str, source: str, content_hash: str, text: str, tokens: int) -> None:
        now = time.time()
        self.conn.execute(
            "INSERT INTO documents(doc_id, name, source, content_hash, text, tokens, status, error, seq, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', '', ?, ?, ?)",
            (doc_id, name, source, content_hash, text, tokens, self.next_seq(), now, now),
        )

    def set_status(self, doc_id: str, status: str, error: str = "", elapsed_s: Optional[float] = None) -> None:
        if elapsed_s is None:
            self.conn.execute("UPDATE documents SET status=?, error=?, updated_at=? WHERE doc_id=?",
                              (status, error, time.time(), doc_id))
        else:
            self.conn.execute("UPDATE documents SET status=?, error=?, updated_at=?, elapsed_s=? WHERE doc_id=?",
                              (status, error, time.time(), elapsed_s, doc_id))

    def delete_document_row(self, doc_id: str) -> None:
        self.conn.execute("DELETE FROM documents WHERE doc_id=?", (doc_id,))

    def delete_load_failure(self, name: str) -> None:
        """Drop the placeholder row of a file that failed to load (it has no content) named ``name``."""
        self.conn.execute("DELETE FROM documents WHERE name=? AND status='failed' AND content_hash=''", (name,))

    def processing_to_pending(self, doc_ids: list[str]) -> int:
        """Documents of ``doc_ids`` still 'processing' go back to 'pending'; returns how many."""
        return self.conn.execute(f"UPDATE documents SET status='pending', error='' WHERE status='processing' "
                                 f"AND doc_id IN ({_placeholders(len(doc_ids))})", tuple(doc_ids)).rowcount

    def failed_to_pending(self) -> int:
        """Failed documents that still have their text go back to 'pending'; returns how many."""
        return self.conn.execute(
            "UPDATE documents SET status='pending', error='' WHERE status='failed' AND content_hash != ''").rowcount

    # --- chunks --------------------------------------------------------------------------
    def insert_chunks(self, chunks: Iterable[Chunk]) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO chunks(chunk_id, doc_id, ord, text, tokens, start_token, windows) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(c.chunk_id, c.doc_id, c.order, c.text, c.tokens, c.start_token, c.windows) for c in chunks],
        )

    def chunks_of(self, doc_id: str) -> list[Chunk]:
        rows = self.conn.execute(
            "SELECT chunk_id, doc_id, ord, text, tokens, start_token, windows FROM chunks WHERE doc_id=? ORDER BY ord",
            (doc_id,))
        return [Chunk(row[0], row[1], row[2], row[3], row[4], row[5], windows=int(row[6])) for row in rows]

    def chunks_by_id(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, Chunk] = {}
        for start in range(0, len(ids), 900):
            part = ids[start : start + 900]
            rows = self.conn.execute(
                f"SELECT chunk_id, doc_id, ord, text, tokens, start_token, windows FROM chunks WHERE chunk_id IN "
                f"({_placeholders(len(part))})", part)
            out.update({row[0]: Chunk(row[0], row[1], row[2], row[3], row[4], row[5], windows=int(row[6])) for row in rows})
        return out

    def has_chunks(self) -> bool:
        return self.conn.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None

    def all_chunk_ids(self) -> list[str]:
        return [r[0] for r in self.conn.execute(
            "SELECT c.chunk_id FROM chunks c JOIN documents d USING(doc_id) ORDER BY d.seq, c.ord")]

    def delete_chunks_of(self, doc_id: str) -> list[str]:
        ids = [r[0] for r in self.conn.execute("SELECT chunk_id FROM chunks WHERE doc_id=?", (doc_id,))]
        self.conn.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
        return ids

    # --- counts --------------------------------------------------------------------------
    def count(self, table: str, where: str = "") -> int:
        allowed = {"documents", "chunks", "entities", "relations", "mention_edges", "tree_nodes", "llm_cache"}
        if table not in allowed:
            raise ValueError(table)
        return int(self.conn.execute(f"SELECT count(*) FROM {table} {where}").fetchone()[0])

    def mention_node_count(self) -> int:
        return int(self.conn.execute("SELECT count(DISTINCT term) FROM mentions").fetchone()[0])

    # --- tree ----------------------------------------------------------------------------
    def tree_nodes(self, scope: Optional[str] = None, doc_id: Optional[str] = None) -> list[TreeNode]:
        sql = ("SELECT node_id, scope, doc_id, level, ord, parent_id, child_ids, leaf_chunk_ids, text, tokens, "
               "vector_id FROM tree_nodes")
        clauses, args = [], []
        if scope:
            clauses.append("scope=?")
            args.append(scope)
        if doc_id:
            clauses.append("doc_id=?")
            args.append(doc_id)
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        sql += " ORDER BY scope, doc_id, level, ord"
        return [
            TreeNode(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), json.loads(r[7]), r[8], r[9], r[10])
            for r in self.conn.execute(sql, args)
        ]

    def upsert_tree_node(self, node: TreeNode) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO tree_nodes(node_id, scope, doc_id, level, ord, parent_id, child_ids, leaf_chunk_ids, "
            "text, tokens, vector_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (node.node_id, node.scope, node.doc_id, node.level, node.ord, node.parent_id, json.dumps(node.child_ids),
             json.dumps(node.leaf_chunk_ids), node.text, node.tokens, node.vector_id),
        )

    def set_tree_parent(self, node_id: str, parent_id: str) -> None:
        self.conn.execute("UPDATE tree_nodes SET parent_id=? WHERE node_id=?", (parent_id, node_id))

    def delete_tree_nodes(self, node_ids: Iterable[str]) -> None:
        self.conn.executemany("DELETE FROM tree_nodes WHERE node_id=?", [(i,) for i in node_ids])

    def doc_roots(self) -> dict[str, tuple[str, Optional[str]]]:
        return {r[0]: (r[1], r[2]) for r in self.conn.execute("SELECT doc_id, root_id, corpus_parent FROM doc_roots")}

    def set_doc_root(self, doc_id: str, root_id: str, corpus_parent: Optional[str]) -> None:
        self.conn.execute("INSERT OR REPLACE INTO doc_roots(doc_id, root_id, corpus_parent) VALUES (?, ?, ?)",
                          (doc_id, root_id, corpus_parent))

    def delete_doc_root(self, doc_id: str) -> None:
        self.conn.execute("DELETE FROM doc_roots WHERE doc_id=?", (doc_id,))

    # --- reports ---------------------------------------------------------------------------
    def status_counts(self) -> dict[str, int]:
        """Documents per status."""
        return dict(self.conn.execute("SELECT status, count(*) FROM documents GROUP BY status").fetchall())

    def total_tokens(self) -> int:
        return int(self.conn.execute("SELECT coalesce(sum(tokens), 0) FROM documents").fetchone()[0])

    def log_details(self, event: str) -> list[str]:
        """The JSON details of the run-log entries of ``event``, oldest first."""
        return [r[0] for r in self.conn.execute("SELECT detail FROM run_log WHERE event=? ORDER BY id", (event,))]

    def llm_usage_rows(self) -> list[tuple]:
        """(stage, calls, cached, prompt_tokens, completion_tokens, seconds) per LLM stage."""
        return [tuple(r) for r in self.conn.execute(
            "SELECT stage, calls, cached, prompt_tokens, completion_tokens, seconds FROM llm_usage ORDER BY stage")]

    def chunks_per_document(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT doc_id, count(*) FROM chunks GROUP BY doc_id").fetchall())

    def entities_per_document(self) -> dict[str, int]:
        return dict(self.conn.execute(
            "SELECT doc_id, count(DISTINCT entity_key) FROM entity_fragments GROUP BY doc_id").fetchall())

    # --- expected vector ids (for reconciliation) -----------------------------------------
    def expected_vector_ids(self) -> dict[str, set[str]]:
        return {
            "chunks": {window_id(cid, i) for cid, n in self.conn.execute("SELECT chunk_id, windows FROM chunks")
                       for i in range(max(1, int(n)))},
            "entities": {r[0] for r in self.conn.execute("SELECT vector_id FROM entities")},
            "relations": {r[0] for r in self.conn.execute("SELECT vector_id FROM relations")},
            "tree": {r[0] for r in self.conn.execute("SELECT vector_id FROM tree_nodes")},
        }
