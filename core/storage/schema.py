"""The schema of a workspace's system of record, written once as SQLAlchemy Core ``Table``s for both
backends, and its creation / upgrade on an open connection.

Each dialect renders its own DDL from the same tables. The column types are chosen so that both
databases hold what SQLite held from the start:

* text is ``TEXT`` on SQLite and ``TEXT COLLATE "C"`` on PostgreSQL (byte order, which is code-point
  order in UTF-8 — what SQLite and Python sort by — so every ``ORDER BY`` and every tie-break is the
  same on both backends). On PostgreSQL a NUL character, which its text cannot hold, is stored as U+FFFD;
* numbers are ``INTEGER`` and ``REAL`` on SQLite, ``INTEGER`` and ``DOUBLE PRECISION`` on PostgreSQL
  (its ``real`` has 4 bytes: timestamps would lose their seconds); on PostgreSQL a numpy scalar or a
  ``bool`` parameter is bound as the Python number SQLite would have stored;
* ``run_log.id`` is SQLite's ``INTEGER PRIMARY KEY AUTOINCREMENT`` and PostgreSQL's identity column.

The bind adaptations live in PostgreSQL-only type variants, so SQLite binds run no Python code per value.

``create_or_upgrade(conn)`` creates what is missing — tables, the columns added after version 1 and the
indexes added later — with SQLAlchemy's DDL constructs; each backend calls it under its own lock and
records ``SCHEMA_VERSION``. The schema is the one of version 4 written by earlier releases as SQL text
(the tables, columns, types, defaults, keys and index names are unchanged), so their databases open as
they are.
"""
from __future__ import annotations

from typing import Any, Optional

from sqlalchemy import (REAL, BigInteger, Column, Connection, Dialect, Identity, Index, Integer, LargeBinary,
                        MetaData, PrimaryKeyConstraint, Table, Text, bindparam, delete, inspect, select, text, update)
from sqlalchemy.dialects.postgresql import DOUBLE_PRECISION
from sqlalchemy.schema import CreateColumn
from sqlalchemy.types import TypeDecorator, TypeEngine

SCHEMA_VERSION = 10  # 3: annotation tables; 4: indexes on the second endpoint of relations and mention edges;
# 5: documents_seq (the next sequence number is an index probe, not a scan per registered document);
# 6: the graph edit log (graph_edits); 7: chunks.start_char and the doc_positions table (pages of a PDF);
# 8: chunk spans recovered for chunks stored without one (``recover_chunk_spans``); doc_files (a PDF's
# original bytes, for the source viewer); 9: sentence_vectors (sentence vectors pooled from the chunk-window
# pass; a workspace without them answers as before, ``repair --sentences`` back-fills them); 10: line starts
# computed from the stored text on read, the per-line doc_positions rows deleted (``drop_line_rows``)


def _plain_number(value: Any) -> Any:
    """A ``bool`` as 0/1 and a numpy scalar as its Python number (what sqlite3 would have stored)."""
    if isinstance(value, bool):
        return int(value)
    item = getattr(value, "item", None)
    if item is not None and getattr(value, "shape", None) == ():
        return item()
    return value


class _PgText(TypeDecorator):
    """PostgreSQL text in byte order; NUL (which PostgreSQL text cannot hold) is bound as U+FFFD."""

    impl = Text
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        return dialect.type_descriptor(Text(collation="C"))

    def process_bind_param(self, value: Optional[Any], dialect: Dialect) -> Optional[Any]:
        if isinstance(value, str) and "\x00" in value:
            return value.replace("\x00", "\ufffd")
        return value


class _PgInteger(TypeDecorator):
    impl = Integer
    cache_ok = True

    def process_bind_param(self, value: Optional[Any], dialect: Dialect) -> Optional[Any]:
        return _plain_number(value)


class _PgDouble(TypeDecorator):
    impl = DOUBLE_PRECISION
    cache_ok = True

    def process_bind_param(self, value: Optional[Any], dialect: Dialect) -> Optional[Any]:
        return _plain_number(value)


TEXT = Text().with_variant(_PgText(), "postgresql")
INTEGER = Integer().with_variant(_PgInteger(), "postgresql")
DOUBLE: TypeEngine[float] = REAL().with_variant(_PgDouble(), "postgresql")

metadata = MetaData()


def _text(name: str, default: Optional[str] = None, nullable: bool = False) -> Column[Any]:
    return Column(name, TEXT, nullable=nullable, server_default=default)


def _int(name: str, default: Optional[int] = None) -> Column[Any]:
    return Column(name, INTEGER, nullable=False, server_default=None if default is None else text(str(default)))


def _real(name: str, default: Optional[int] = None) -> Column[Any]:
    return Column(name, DOUBLE, nullable=False, server_default=None if default is None else text(str(default)))


meta = Table("meta", metadata, Column("key", TEXT, primary_key=True), _text("value"))

documents = Table(
    "documents", metadata,
    Column("doc_id", TEXT, primary_key=True), _text("name"), _text("source", ""), _text("content_hash"),
    _text("text"), _int("tokens", 0),
    _text("status"),  # pending | processing | processed | failed
    _text("error", ""),
    _int("seq"),  # insertion order (corpus level of the summary tree)
    _real("created_at"), _real("updated_at"), _real("elapsed_s", 0))
Index("documents_name", documents.c.name)
Index("documents_seq", documents.c.seq)

chunks = Table(
    "chunks", metadata,
    Column("chunk_id", TEXT, primary_key=True), _text("doc_id"), _int("ord"), _text("text"), _int("tokens"),
    _int("start_token"),
    _int("windows", 1),  # vectors of the chunk in the chunks collection (one per window)
    _int("start_char", -1))  # offset of the chunk in its document's text (-1: not known)
Index("chunks_doc", chunks.c.doc_id, chunks.c.ord)

# where each page (kind 'page': PDF) and section heading ('section': DOCX, HTML, Markdown; the heading is read
# back from the stored text) of a document starts in its extracted text, ord 1-based; a text or Markdown
# document cited by line has one 'line' row (line 1 at 0: the other lines are computed from the text on read); a document without rows has no known places (JSONL records, imports, or indexed before)
doc_positions = Table(
    "doc_positions", metadata,
    _text("doc_id"), _text("kind"), _int("ord"), _int("start_char"),
    PrimaryKeyConstraint("doc_id", "kind", "ord"))

# the uploaded file of a document with pages (a PDF), kept for the source viewer up to ORIGINAL_MAX_BYTES
# and deleted with the document; a document without a row has no original (text formats use their text)
doc_files = Table(
    "doc_files", metadata,
    Column("doc_id", TEXT, primary_key=True), _text("name"), Column("data", LargeBinary, nullable=False))
ORIGINAL_MAX_BYTES = 20 * 1024 * 1024

# knowledge graph fragments: one row per (entity, chunk), the source of truth for merges
entity_fragments = Table(
    "entity_fragments", metadata,
    _text("entity_key"), _text("chunk_id"), _text("doc_id"), _text("name"), _text("type"), _text("description"),
    _text("type_votes", "{}"),  # JSON {label: mentions}: the entity's type is voted over mentions
    _text("aliases", "[]"),  # JSON list of surface forms merged into this name
    PrimaryKeyConstraint("entity_key", "chunk_id"))
Index("entity_fragments_chunk", entity_fragments.c.chunk_id)

relation_fragments = Table(
    "relation_fragments", metadata,
    _text("source_key"), _text("target_key"), _text("chunk_id"), _text("doc_id"),
    _text("keywords"),  # JSON list
    _text("description"), _real("weight"),
    PrimaryKeyConstraint("source_key", "target_key", "chunk_id"))
Index("relation_fragments_chunk", relation_fragments.c.chunk_id)

# merged (deduplicated) knowledge graph
entities = Table(
    "entities", metadata,
    Column("entity_key", TEXT, primary_key=True), _text("name"), _text("type"), _text("description"),
    _text("source_chunk_ids"),  # JSON list, in fragment order
    _text("vector_id"),
    _text("aliases", "[]"))  # JSON list of merged surface forms

relations = Table(
    "relations", metadata,
    _text("source_key"), _text("target_key"), _text("keywords"), _text("description"), _real("weight"),
    _text("source_chunk_ids"), _text("vector_id"),
    PrimaryKeyConstraint("source_key", "target_key"))
Index("relations_target", relations.c.target_key)  # a node's relations, its degree

# E2GraphRAG mention graph: per-chunk counts and aggregated co-occurrence edges
mentions = Table(
    "mentions", metadata,
    _text("term"), _text("chunk_id"), _int("count"), _text("label"),
    PrimaryKeyConstraint("term", "chunk_id"))
Index("mentions_chunk", mentions.c.chunk_id)

chunk_cooccurrence = Table(
    "chunk_cooccurrence", metadata,
    _text("chunk_id"), _text("a"), _text("b"), _int("count"),
    PrimaryKeyConstraint("chunk_id", "a", "b"))

mention_edges = Table(
    "mention_edges", metadata,
    _text("a"), _text("b"), _int("weight"),
    PrimaryKeyConstraint("a", "b"))
Index("mention_edges_b", mention_edges.c.b)

# sentences of each chunk (markup removed) with their typed mentions, for offline answers
sentences = Table(
    "sentences", metadata,
    _text("chunk_id"), _int("ord"), _text("text"),
    _text("mentions"),  # JSON [[label, surface, entity key or ""], ...]
    PrimaryKeyConstraint("chunk_id", "ord"))

# one vector per sentence of a chunk (``core.sentence_vectors``): the chunk window pass's token outputs
# mean-pooled over the sentence's character span of the chunk text, stored as float16 bytes
sentence_vectors = Table(
    "sentence_vectors", metadata,
    _text("chunk_id"), _int("start_char"), _int("end_char"), Column("vector", LargeBinary, nullable=False),
    PrimaryKeyConstraint("chunk_id", "start_char", "end_char"))

# summary tree (summaries only; leaves are chunks)
tree_nodes = Table(
    "tree_nodes", metadata,
    Column("node_id", TEXT, primary_key=True),
    _text("scope"),  # 'doc' | 'corpus'
    _text("doc_id", nullable=True),  # owning document for scope 'doc'
    _int("level"),  # height above the leaves (chunks are 0)
    _int("ord"),  # position among siblings
    _text("parent_id", nullable=True),
    _text("child_ids"),  # JSON list of node ids or chunk ids
    _text("leaf_chunk_ids"),  # JSON list
    _text("text"), _int("tokens"), _text("vector_id", ""))
Index("tree_nodes_doc", tree_nodes.c.doc_id)

doc_roots = Table(
    "doc_roots", metadata,
    Column("doc_id", TEXT, primary_key=True),
    _text("root_id"),  # a tree node id, or the single chunk id
    _text("corpus_parent", nullable=True))  # corpus-level node holding this root

llm_cache = Table(
    "llm_cache", metadata,
    Column("key", TEXT, primary_key=True), _text("response"), _int("prompt_tokens", 0),
    _int("completion_tokens", 0), _real("created_at"))

llm_usage = Table(
    "llm_usage", metadata,
    Column("stage", TEXT, primary_key=True), _int("calls", 0), _int("cached", 0), _int("prompt_tokens", 0),
    _int("completion_tokens", 0), _real("seconds", 0))

run_log = Table(
    "run_log", metadata,
    Column("id", Integer().with_variant(BigInteger(), "postgresql"), Identity(), primary_key=True),
    _real("ts"), _text("event"), _text("detail"),
    sqlite_autoincrement=True)

# Analyst annotations (core.annotations): questions with an optional expected answer, and chunks marked
# relevant / not relevant for them. Created with the schema and again, idempotently, before annotations are used.
annotation_questions = Table(
    "annotation_questions", metadata,
    Column("qid", TEXT, primary_key=True), _text("question"), _text("answer", ""), _real("created_at"),
    _real("updated_at"))

annotation_marks = Table(
    "annotations", metadata,
    _text("qid"), _text("chunk_id"), _text("doc_id"),
    _int("relevant"),  # 1 relevant, 0 not relevant
    _text("mode", ""),  # the mode whose result the analyst was reading
    _real("created_at"),
    PrimaryKeyConstraint("qid", "chunk_id"))
Index("annotations_doc", annotation_marks.c.doc_id)

ANNOTATION_TABLES = (annotation_questions, annotation_marks)

# Hand edits of the knowledge graph (core.editing): one row per edit, replayed in id order after every
# re-merge; ``undone`` edits are kept for the record and skipped. Created with the schema and again,
# idempotently, before an edit is written (a workspace written before version 5 has no such table).
graph_edits = Table(
    "graph_edits", metadata,
    Column("id", Integer().with_variant(BigInteger(), "postgresql"), Identity(), primary_key=True),
    _real("ts"), _text("principal", ""),
    _text("op"),  # merge | rename | retype | delete_entity | delete_relation | relate | describe
    _text("args"),  # JSON: the target identity (names) and the state asked for
    _text("before", "{}"), _text("after", "{}"),  # JSON: what the first application changed
    _int("undone", 0),
    sqlite_autoincrement=True)

EDIT_TABLES = (graph_edits,)

# Columns added after version 1: (table, column). Older workspaces get them on open, with defaults that
# read as "no aliases, one vote for the stored type"; re-indexing fills them.
ADDED_COLUMNS = [(entity_fragments, "type_votes"), (entity_fragments, "aliases"), (entities, "aliases"),
                 (chunks, "windows"), (chunks, "start_char")]


def create_or_upgrade(conn: Connection, tables: Optional[tuple[Table, ...]] = None) -> None:
    """Create the missing tables, added columns and indexes of ``tables`` (default: all) on ``conn``,
    inside the caller's transaction (each backend holds its own lock around it)."""
    chosen = list(tables) if tables is not None else list(metadata.sorted_tables)
    metadata.create_all(conn, tables=chosen, checkfirst=True)
    inspector = inspect(conn)
    for table, name in ADDED_COLUMNS:
        if table in chosen and name not in {c["name"] for c in inspector.get_columns(table.name)}:
            # ALTER TABLE … ADD COLUMN is the same statement in both databases; the column is rendered by
            # the dialect from its Table definition
            definition = CreateColumn(table.c[name]).compile(dialect=conn.dialect)
            conn.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {definition}"))
    for table in chosen:
        for index in table.indexes:
            index.create(conn, checkfirst=True)
    if chunks in chosen and documents in chosen:
        recover_chunk_spans(conn)
    if doc_positions in chosen:
        drop_line_rows(conn)


def drop_line_rows(conn: Connection) -> int:
    """Delete the per-line ``doc_positions`` rows of the layout before version 10 (one row per line,
    ~84 bytes each), keeping each document's first ``line`` row: it says the document is cited by line,
    and the line starts are computed from the stored text on read. Returns the rows deleted; idempotent."""
    return int(conn.execute(delete(doc_positions).where(doc_positions.c.kind == "line", doc_positions.c.ord > 1))
               .rowcount or 0)


RECOVER_BATCH = 200  # documents read at a time by the span recovery


def recover_chunk_spans(conn: Connection) -> int:
    """Fill ``chunks.start_char`` where it is unknown (-1: indexed before spans were stored) by locating
    each chunk's text in its stored document text (``core.citations.chunk_offsets``), so old workspaces
    get page ranges without re-indexing once their pages are known. Returns how many chunks got a span;
    chunks not found keep -1. Idempotent (only unknown spans are read)."""
    from core.citations import chunk_offsets

    rows = conn.execute(select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.text).where(chunks.c.start_char < 0)
                        .order_by(chunks.c.doc_id, chunks.c.ord)).all()
    if not rows:
        return 0
    by_doc: dict[str, list[tuple[str, str]]] = {}
    for chunk_id, doc_id, chunk_text in rows:
        by_doc.setdefault(doc_id, []).append((chunk_id, chunk_text or ""))
    doc_ids = list(by_doc)
    found: list[dict[str, Any]] = []
    for start in range(0, len(doc_ids), RECOVER_BATCH):
        part = doc_ids[start:start + RECOVER_BATCH]
        for doc_id, doc_text in conn.execute(select(documents.c.doc_id, documents.c.text)
                                             .where(documents.c.doc_id.in_(part))).all():
            mine = by_doc[doc_id]
            offsets = chunk_offsets(doc_text or "", [t for _, t in mine])
            found.extend({"cid": cid, "at": at} for (cid, _), at in zip(mine, offsets) if at >= 0)
    if found:
        conn.execute(update(chunks).where(chunks.c.chunk_id == bindparam("cid")).values(start_char=bindparam("at")),
                     found)
    return len(found)
