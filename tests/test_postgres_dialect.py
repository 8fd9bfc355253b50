"""The SQL shim that runs the SQLite adapter's statements on PostgreSQL, and the schema derived from the
SQLite one (no server needed: these check the translated text)."""
from __future__ import annotations

import numpy as np
import pytest

from core.storage.postgres_dialect import adapt, translate
from core.storage.postgres_schema import TABLES, added_columns_ddl, postgres_ddl
from core.storage.schema import ADDED_COLUMNS, SCHEMA


def test_placeholders_outside_literals_only():
    assert translate("SELECT a FROM t WHERE b=? AND c LIKE '%?%'", True) == \
        "SELECT a FROM t WHERE b=%s AND c LIKE '%?%'"
    assert translate("SELECT a FROM t WHERE b LIKE '%x'", False) == "SELECT a FROM t WHERE b LIKE '%x'"
    assert translate("SELECT 100 % 7 FROM t WHERE a=?", True) == "SELECT 100 %% 7 FROM t WHERE a=%s"
    assert translate("BEGIN IMMEDIATE", False) == "BEGIN"


def test_insert_or_replace_replaces_the_whole_row():
    sql = translate("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", True)
    assert sql == ("INSERT INTO meta(key, value) VALUES (%s, %s) "
                   "ON CONFLICT (key) DO UPDATE SET value = excluded.value")
    # no column list: every column, in table order; the key columns are the conflict target
    sql = translate("INSERT OR REPLACE INTO relation_fragments VALUES (?, ?, ?, ?, ?, ?, ?)", True)
    assert sql.startswith("INSERT INTO relation_fragments(source_key, target_key, chunk_id, doc_id, keywords, "
                          "description, weight) VALUES (%s, %s, %s, %s, %s, %s, %s) "
                          "ON CONFLICT (source_key, target_key, chunk_id) DO UPDATE SET doc_id = excluded.doc_id")
    # an unlisted column goes back to its default, as SQLite's REPLACE (delete + insert) does
    sql = translate("INSERT OR REPLACE INTO entities(entity_key, name, type, description, source_chunk_ids, "
                    "vector_id) VALUES (?, ?, ?, ?, ?, ?)", True)
    assert sql.endswith("vector_id = excluded.vector_id, aliases = DEFAULT")
    assert translate("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)", True).endswith("ON CONFLICT DO NOTHING")
    with pytest.raises(Exception, match="unknown table"):
        translate("INSERT OR REPLACE INTO nowhere(a) VALUES (?)", True)


def test_upsert_arithmetic_is_qualified():
    sql = translate("INSERT INTO mention_edges(a, b, weight) VALUES (?, ?, ?) "
                    "ON CONFLICT(a, b) DO UPDATE SET weight = weight + excluded.weight", True)
    assert sql.endswith("DO UPDATE SET weight = mention_edges.weight + excluded.weight")
    sql = translate("INSERT INTO annotations(qid, chunk_id, doc_id, relevant, mode, created_at) VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(qid, chunk_id) DO UPDATE SET relevant = excluded.relevant", True)
    assert sql.endswith("DO UPDATE SET relevant = excluded.relevant")


def test_parameters_are_stored_as_sqlite_stores_them():
    assert adapt(True) == 1 and adapt(False) == 0 and type(adapt(True)) is int
    assert adapt(np.float32(0.5)) == 0.5 and type(adapt(np.int64(3))) is int
    assert adapt("a\x00b") == "a\ufffdb" and adapt(b"\x00") == b"\x00" and adapt(None) is None


def test_schema_is_derived_from_the_sqlite_one():
    created = {s.split()[5] for s in postgres_ddl() if s.startswith("CREATE TABLE")}
    assert created == set(TABLES) and "documents" in created and "annotations" in created
    assert TABLES["relations"][1] == ("source_key", "target_key") and TABLES["run_log"][1] == ("id",)
    ddl = "\n".join(postgres_ddl())
    assert " REAL" not in ddl and "DOUBLE PRECISION" in ddl and "AUTOINCREMENT" not in ddl
    assert ddl.count('COLLATE "C"') == SCHEMA.count(" TEXT")
    assert len(added_columns_ddl()) == len(ADDED_COLUMNS)
    assert all("ADD COLUMN IF NOT EXISTS" in s for s in added_columns_ddl())
