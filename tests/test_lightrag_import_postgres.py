"""The LightRAG import on the PostgreSQL record store: the importer writes only through the storage ports
(``core.storage.import_writes`` for its bulk writes), so the same import, and the re-import after LightRAG's
own deletion, give the same records on PostgreSQL as on SQLite."""
from __future__ import annotations

from pathlib import Path

from conftest import HashEmbedder
from postgres_fixture import pg_store, postgres_server  # noqa: F401 - fixtures

from core.importers.lightrag import import_lightrag
from core.importers.lightrag.writer import origin_counts
from core.workspace import Workspace

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "lightrag"


def _graph(ws: Workspace) -> tuple:
    graph = ws.knowledge_graph()
    nodes = sorted((k, d["name"], d["type"], d["description"], tuple(d["source_chunk_ids"]))
                   for k, d in graph.nodes(data=True))
    edges = sorted((*sorted((a, b)), tuple(sorted(d["keywords"])), d["description"], round(d["weight"], 6))
                   for a, b, d in graph.edges(data=True))
    docs = sorted((d.doc_id, d.name, d.status) for d in ws.records.documents())
    return docs, nodes, edges, ws.records.count("chunks"), ws.records.count("tree_nodes")


def test_import_and_reimport_on_postgresql_equal_sqlite(tmp_path, pg_store):  # noqa: F811 - fixture
    pg = Workspace(tmp_path / "pg", embedder=HashEmbedder(), store=pg_store)
    first = import_lightrag(pg, FIXTURES / "ainsert", source_model="stand-in")
    assert first.ragscope["entities"] == first.lightrag["entities"] == 18
    again = import_lightrag(pg, FIXTURES / "ainsert_deleted")
    assert (again.deleted_documents, again.new_documents) == (1, 0) and again.entities_removed > 0
    lite = Workspace(tmp_path / "lite", embedder=HashEmbedder())
    import_lightrag(lite, FIXTURES / "ainsert_deleted")
    assert _graph(pg) == _graph(lite)
    counts = origin_counts(pg)
    assert counts["documents"] == {"imported": 4, "added": 0}
    assert counts["entities"]["imported"] == again.ragscope["entities"] and counts["entities"]["added"] == 0
    for collection in ("chunks", "entities", "relations"):
        assert pg.vectors.all_ids(collection) == pg.records.expected_vector_ids()[collection], collection
    pg.close()
    lite.close()
