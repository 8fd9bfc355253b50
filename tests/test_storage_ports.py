"""The storage ports (issue 21): the SQLite + networkx + Chroma adapter implements every port member
with the declared parameters, every record-store and vector-index call the library makes is declared
on its port (so a second backend that implements the ports serves all of them), the unit of work
commits or rolls back as one, and the registry selects backends by name."""
from __future__ import annotations

import ast
import inspect
import sqlite3
import threading
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from core.errors import SettingsError
from core.storage import ports, records, registry
from core.storage.annotations import SqlAnnotationStore, SqlAnnotationWriter
from core.storage.graph_overview import KnowledgeGraphReader, MentionGraphReader
from core.storage.graph_view import NetworkxGraphView
from core.storage.llm_cache import SqliteLLMCache, cache_store
from core.storage.postgres_backend import PostgresBackend
from core.storage.postgres_llm_cache import PostgresLLMCache
from core.storage.sqlite_backend import SqliteBackend
from core.storage.sqlite_backend import SqliteStore as Store
from core.storage.vector_search import MatrixSearch
from core.storage.vector_search import VectorMatrix
from core.storage.vectors import VectorStore

ROOT = Path(__file__).resolve().parent.parent


def _members(protocol: type) -> dict[str, inspect.Signature]:
    out = {}
    for klass in protocol.__mro__:
        if klass in (object, ports.Protocol) or not getattr(klass, "_is_protocol", False):
            continue
        for name, value in vars(klass).items():
            if callable(value) and (not name.startswith("_") or name in ("__contains__", "__len__")):
                out.setdefault(name, inspect.signature(value))
    return out


ADAPTERS = [(ports.RecordStore, Store), (ports.GraphView, NetworkxGraphView), (ports.VectorSearch, MatrixSearch),
            (ports.VectorIndex, VectorStore), (ports.LLMCacheStore, SqliteLLMCache),
            (registry.StorageBackend, SqliteBackend), (ports.AnnotationStore, SqlAnnotationStore),
            (ports.AnnotationWriter, SqlAnnotationWriter), (ports.LLMCacheStore, PostgresLLMCache),
            (registry.StorageBackend, PostgresBackend), (ports.GraphOverview, KnowledgeGraphReader),
            (ports.GraphOverview, MentionGraphReader)]


@pytest.mark.parametrize("protocol, adapter", ADAPTERS, ids=[a.__name__ for _, a in ADAPTERS])
def test_the_sqlite_adapter_implements_every_port_member(protocol, adapter) -> None:
    missing, mismatched = [], []
    for name, declared in _members(protocol).items():
        implemented = getattr(adapter, name, None)
        if implemented is None:
            missing.append(name)
            continue
        want = [p for p in declared.parameters if p != "self"]
        have = [p for p in inspect.signature(implemented).parameters if p != "self"]
        if have[: len(want)] != want:
            mismatched.append((name, want, have))
    assert missing == [] and mismatched == []


LIST_METHODS = {"append", "extend", "sort", "pop", "insert"}  # local lists that happen to be named records


def _calls_on(receivers: set[str], attribute_chain: tuple[str, ...] = ()) -> dict[str, set[str]]:
    """Method names called on ``records``/``store``-like receivers across core (outside core/storage)."""
    used: dict[str, set[str]] = {}
    for path in sorted((ROOT / "core").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel.startswith("core/storage/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            target = node.func.value
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name in receivers and node.func.attr not in LIST_METHODS:
                used.setdefault(node.func.attr, set()).add(rel)
    return used


def test_every_record_store_call_of_the_library_is_declared_on_the_port() -> None:
    used = _calls_on({"records", "store"})
    assert "unit_of_work" in used and "insert_chunk_extraction" in used  # the scan sees the indexing code
    declared = set(_members(ports.RecordStore))
    pending = {"transaction"}  # the older name of unit_of_work, still called by the LightRAG importer
    assert {name: sorted(files) for name, files in used.items() if name not in declared | pending} == {}


def test_every_vector_index_call_of_the_library_is_declared_on_the_port() -> None:
    used = _calls_on({"vectors", "vs"})
    declared = set(_members(ports.VectorIndex)) | set(_members(ports.VectorSearch))
    assert "upsert" in used and "cosines" in used
    assert {name: sorted(files) for name, files in used.items() if name not in declared} == {}


def test_a_unit_of_work_commits_as_one_or_not_at_all(tmp_path) -> None:
    writer, reader = Store(tmp_path / "db.sqlite3"), Store(tmp_path / "db.sqlite3")
    try:
        with writer.unit_of_work():
            writer.set_meta("a", "1")
            writer.set_meta("b", "2")
            assert writer.in_unit_of_work() and reader.get_meta("a") == ""  # not visible before the commit
        assert reader.get_meta("a") == "1" and reader.get_meta("b") == "2"
        with pytest.raises(RuntimeError):
            with writer.unit_of_work():
                writer.set_meta("a", "changed")
                writer.log("doomed", {"x": 1})
                raise RuntimeError("fails half-way")
        assert not writer.in_unit_of_work()
        assert writer.get_meta("a") == reader.get_meta("a") == "1" and writer.log_details("doomed") == []
    finally:
        writer.close()
        reader.close()


def test_meta_reads_see_every_change(tmp_path) -> None:
    """The SQLite store serves meta rows from memory while the database is unchanged; any change shows."""
    path = tmp_path / "db.sqlite3"
    writer, reader = Store(path), Store(path)
    try:
        writer.set_meta("g", "1")
        writer.commit()
        assert reader.get_meta("g") == "1" and reader.get_meta("g") == "1"  # the second read: from memory
        writer.set_meta("g", "2")
        assert reader.get_meta("g") == "1"  # not committed yet
        writer.commit()
        assert reader.get_meta("g") == "2"  # another connection's commit
        reader.set_meta("g", "3")  # its own write, in the transaction it opened
        assert reader.get_meta("g") == "3"
        reader.rollback()
        assert reader.get_meta("g") == "2"
        with reader.unit_of_work():
            reader.set_meta("g", "4")
            assert reader.get_meta("g") == "4"
        assert reader.get_meta("g") == writer.get_meta("g") == "4"
        reader.conn.execute("UPDATE meta SET value='5' WHERE key='g'")  # straight through the driver
        assert reader.get_meta("g") == "5" and reader.get_meta("absent", "default") == "default"
    finally:
        writer.close()
        reader.close()


def test_graph_view_records_names_and_adjacency() -> None:
    graph = nx.Graph()
    graph.add_node("ada lovelace", name="Ada Lovelace", type="PERSON", description="d", aliases=["Ada"],
                   source_chunk_ids=["c1"])
    graph.add_node("london", name="", type="GPE")
    graph.add_edge("london", "ada lovelace", keywords=["lived"], description="r", weight=2.0, source_chunk_ids=["c1"])
    view = NetworkxGraphView(graph)
    assert view.entity("ada lovelace") == records.GraphEntity("ada lovelace", "Ada Lovelace", "PERSON", "d", ("Ada",),
                                                              ("c1",))
    assert view.name("london") == "london" and view.name("nobody") == "nobody"  # display name, else the key
    relation = view.relation("london", "ada lovelace")
    assert relation is not None and relation.pair == ("ada lovelace", "london") and relation.weight == 2.0
    assert view.has_relation("ada lovelace", "london") and not view.has_relation("london", "nobody")
    assert list(view.neighbours("london")) == ["ada lovelace"] and view.degree("london") == 1
    assert view.degree("nobody") == 0 and dict(view.adjacency("nobody")) == {}
    assert view.alias_owner("ada") == "ada lovelace" and view.entities_with_word("lovelace") == {"ada lovelace"}
    assert view.relation_count() == 1 and len(view) == 2 and "london" in view
    assert records.node_pair("b", "a") == records.node_pair("a", "b") == ("a", "b")


def test_matrix_search_matches_brute_force() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(12, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    metas = [{"source": f"e{i}", "target": f"e{i + 1}"} for i in range(12)]
    search = MatrixSearch(lambda c: VectorMatrix([f"r{i}" for i in range(12)], vectors, metas))
    query = vectors[3] * 0.5 + vectors[5] * 0.5
    scores = vectors @ query
    want = sorted(range(12), key=lambda i: (-scores[i], i))[:4]
    assert search.ranked_keys("relations", query, 4) == [((f"e{i}", f"e{i + 1}"), float(scores[i])) for i in want]
    keys = [("e2", "e3"), ("zz", "zz"), ("e9", "e10")]
    found = search.cosines("relations", query, keys)  # one product over the rows asked for (float32)
    assert found == pytest.approx({("e2", "e3"): float(scores[2]), ("e9", "e10"): float(scores[9])}, abs=1e-6)
    assert search.cosine("relations", query, ("zz", "zz")) is None and search.size("relations") == 12


def test_the_registry_selects_backends_by_name_and_explains_an_unknown_one(tmp_path, monkeypatch) -> None:
    assert "sqlite" in registry.backend_names() and registry.backend_name("") == "sqlite"
    assert registry.backend_name("postgresql://u@h/db") == registry.backend_name("postgres://h") == "postgresql"
    assert "postgresql" in registry.backend_names()
    with pytest.raises(SettingsError, match="no storage backend named 'neo4j'.*postgresql, sqlite"):
        registry.open_backend("neo4j://127.0.0.1/x", tmp_path, None)
    opened: list[str] = []

    class Recording(SqliteBackend):
        name = "recording"

        def open_records(self):
            opened.append(threading.current_thread().name)
            return super().open_records()

    monkeypatch.setitem(registry._BACKENDS, "recording", lambda folder, settings, spec: Recording(folder, settings))
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "ws", store="recording://")
    try:
        assert ws.backend.name == "recording" and ws.records.get_meta("schema_version")
        assert opened  # the workspace opened its records through the registered backend
    finally:
        ws.close()


def test_the_llm_cache_store_round_trips_and_defers_while_the_file_is_locked(tmp_path) -> None:
    path = tmp_path / "db.sqlite3"
    Store(path).close()
    cache = cache_store(path)
    cache.put("k", records.CachedReply("hello", 3, 1))
    assert cache.get("k") == records.CachedReply("hello", 3, 1)
    blocker = sqlite3.connect(path)
    blocker.execute("BEGIN IMMEDIATE")
    cache.put("k2", records.CachedReply("later", 1, 1))  # the file is locked: kept in memory
    assert not cache.flush() and cache.get("k2") is None
    blocker.rollback()
    blocker.close()
    assert cache.flush() and cache.get("k2") == records.CachedReply("later", 1, 1)
