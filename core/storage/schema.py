"""SQLite schema of a workspace (the system of record) and connection set-up (WAL)."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from core.errors import CorruptWorkspaceError

SCHEMA_VERSION = 4  # 3: annotation tables; 4: indexes on the second endpoint of relations and mention edges

# Analyst annotations (core.annotations): questions with an optional expected answer, and chunks marked
# relevant / not relevant for them. Created with the schema and again, idempotently, before annotations are used.
ANNOTATION_SCHEMA = """
CREATE TABLE IF NOT EXISTS annotation_questions (
    qid TEXT PRIMARY KEY,
    question TEXT NOT NULL,
    answer TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS annotations (
    qid TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    relevant INTEGER NOT NULL,         -- 1 relevant, 0 not relevant
    mode TEXT NOT NULL DEFAULT '',     -- the mode whose result the analyst was reading
    created_at REAL NOT NULL,
    PRIMARY KEY (qid, chunk_id)
);
CREATE INDEX IF NOT EXISTS annotations_doc ON annotations(doc_id);
"""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL,
    text TEXT NOT NULL,
    tokens INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,               -- pending | processing | processed | failed
    error TEXT NOT NULL DEFAULT '',
    seq INTEGER NOT NULL,              -- insertion order (corpus level of the summary tree)
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    elapsed_s REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS documents_name ON documents(name);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    ord INTEGER NOT NULL,
    text TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    start_token INTEGER NOT NULL,
    windows INTEGER NOT NULL DEFAULT 1  -- vectors of the chunk in the chunks collection (one per window)
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, ord);
-- knowledge graph fragments: one row per (entity, chunk), the source of truth for merges
CREATE TABLE IF NOT EXISTS entity_fragments (
    entity_key TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    description TEXT NOT NULL,
    type_votes TEXT NOT NULL DEFAULT '{}',  -- JSON {label: mentions}: the entity's type is voted over mentions
    aliases TEXT NOT NULL DEFAULT '[]',     -- JSON list of surface forms merged into this name
    PRIMARY KEY (entity_key, chunk_id)
);
CREATE INDEX IF NOT EXISTS entity_fragments_chunk ON entity_fragments(chunk_id);
CREATE TABLE IF NOT EXISTS relation_fragments (
    source_key TEXT NOT NULL,
    target_key TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    keywords TEXT NOT NULL,            -- JSON list
    description TEXT NOT NULL,
    weight REAL NOT NULL,
    PRIMARY KEY (source_key, target_key, chunk_id)
);
CREATE INDEX IF NOT EXISTS relation_fragments_chunk ON relation_fragments(chunk_id);
-- merged (deduplicated) knowledge graph
CREATE TABLE IF NOT EXISTS entities (
    entity_key TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    description TEXT NOT NULL,
    source_chunk_ids TEXT NOT NULL,    -- JSON list, in fragment order
    vector_id TEXT NOT NULL,
    aliases TEXT NOT NULL DEFAULT '[]'  -- JSON list of merged surface forms
);
CREATE TABLE IF NOT EXISTS relations (
    source_key TEXT NOT NULL,
    target_key TEXT NOT NULL,
    keywords TEXT NOT NULL,            -- JSON list
    description TEXT NOT NULL,
    weight REAL NOT NULL,
    source_chunk_ids TEXT NOT NULL,
    vector_id TEXT NOT NULL,
    PRIMARY KEY (source_key, target_key)
);
CREATE INDEX IF NOT EXISTS relations_target ON relations(target_key);  -- a node's relations, its degree
-- E2GraphRAG mention graph: per-chunk counts and aggregated co-occurrence edges
CREATE TABLE IF NOT EXISTS mentions (
    term TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    count INTEGER NOT NULL,
    label TEXT NOT NULL,
    PRIMARY KEY (term, chunk_id)
);
CREATE INDEX IF NOT EXISTS mentions_chunk ON mentions(chunk_id);
CREATE TABLE IF NOT EXISTS chunk_cooccurrence (
    chunk_id TEXT NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (chunk_id, a, b)
);
CREATE TABLE IF NOT EXISTS mention_edges (
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    weight INTEGER NOT NULL,
    PRIMARY KEY (a, b)
);
CREATE INDEX IF NOT EXISTS mention_edges_b ON mention_edges(b);
-- sentences of each chunk (markup removed) with their typed mentions, for offline answers
CREATE TABLE IF NOT EXISTS sentences (
    chunk_id TEXT NOT NULL,
    ord INTEGER NOT NULL,
    text TEXT NOT NULL,
    mentions TEXT NOT NULL,            -- JSON [[label, surface, entity key or ""], ...]
    PRIMARY KEY (chunk_id, ord)
);
-- summary tree (summaries only; leaves are chunks)
CREATE TABLE IF NOT EXISTS tree_nodes (
    node_id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,               -- 'doc' | 'corpus'
    doc_id TEXT,                       -- owning document for scope 'doc'
    level INTEGER NOT NULL,            -- height above the leaves (chunks are 0)
    ord INTEGER NOT NULL,              -- position among siblings
    parent_id TEXT,
    child_ids TEXT NOT NULL,           -- JSON list of node ids or chunk ids
    leaf_chunk_ids TEXT NOT NULL,      -- JSON list
    text TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    vector_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS tree_nodes_doc ON tree_nodes(doc_id);
CREATE TABLE IF NOT EXISTS doc_roots (
    doc_id TEXT PRIMARY KEY,
    root_id TEXT NOT NULL,             -- a tree node id, or the single chunk id
    corpus_parent TEXT                 -- corpus-level node holding this root
);
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY,
    response TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS llm_usage (
    stage TEXT PRIMARY KEY,
    calls INTEGER NOT NULL DEFAULT 0,
    cached INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    seconds REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS run_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    event TEXT NOT NULL,
    detail TEXT NOT NULL
);
""" + ANNOTATION_SCHEMA


# Columns added after version 1: (table, column, declaration). Older workspaces get them on open, with
# defaults that read as "no aliases, one vote for the stored type"; re-indexing fills them.
ADDED_COLUMNS = [
    ("entity_fragments", "type_votes", "TEXT NOT NULL DEFAULT '{}'"),
    ("entity_fragments", "aliases", "TEXT NOT NULL DEFAULT '[]'"),
    ("entities", "aliases", "TEXT NOT NULL DEFAULT '[]'"),
    ("chunks", "windows", "INTEGER NOT NULL DEFAULT 1"),
]


def _migrate(conn: sqlite3.Connection) -> None:
    for table, column, declaration in ADDED_COLUMNS:
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in present:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")


def _schema_ready(conn: sqlite3.Connection) -> bool:
    """True when the schema of this version exists (checked with a read, which WAL never blocks)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.OperationalError:  # no meta table yet: a new database
        return False
    return row is not None and int(row[0]) >= SCHEMA_VERSION


def connect(path: Path, readonly: bool = False) -> sqlite3.Connection:
    """Open the workspace database in WAL mode and make sure the schema exists."""
    try:
        if readonly:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, timeout=30)
        else:
            conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout=30000")
        if not readonly:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            if not _schema_ready(conn):  # writing the schema would wait for (and block on) an active writer
                conn.executescript(SCHEMA)
                _migrate(conn)
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
                )
                conn.commit()
        conn.execute("SELECT count(*) FROM documents").fetchone()
    except sqlite3.DatabaseError as exc:
        raise CorruptWorkspaceError(
            f"the workspace database {path} is damaged or not a RAGScope database ({exc}). "
            "Move the workspace folder aside and re-index the documents into a new workspace."
        ) from exc
    return conn
