"""Pipeline behaviour on a copy of the sample workspace: no-op re-index, incremental add,
delete + re-add, replacement, failure isolation, resume after an interruption, reconciliation."""
from __future__ import annotations

import pytest

from core.errors import EmbedderMismatchError
from core.indexing.pipeline import IndexReport, SpacyExtractor, process_pending, register_documents
from core.indexing.reconcile import reconcile
from core.types import SourceDocument
from core.workspace import Workspace

from conftest import sample_sources

NEW_DOC = SourceDocument(
    name="harbour-notes.md",
    text="# Harbour notes\nThe harbourmaster Tobias Wren inspected the breakwater at Port Sallow in 2021. "
         "Tobias Wren reported to Velmora County Council that the breakwater needed repairs.",
)

COUNT_KEYS = ("documents", "processed", "failed", "chunks", "entities", "relations", "mention_nodes",
              "mention_edges", "tree_nodes")


def counts(ws: Workspace) -> dict[str, int]:
    status = ws.status()
    return {k: status[k] for k in COUNT_KEYS}


def index(ws: Workspace, sources, extractor=None) -> IndexReport:
    with ws.writer():
        report = register_documents(ws, sources)
        return process_pending(ws, extractor=extractor, report=report)


def test_reindexing_the_same_documents_does_no_work(sample_ws_copy):
    from core.loaders import load_path

    ws = sample_ws_copy
    before = counts(ws)
    sources, _ = sample_sources()
    report = index(ws, sources)
    assert report.new_documents == 0 and report.unchanged == len(sources)
    assert report.processed == 0 and report.chunks_embedded == 0 and report.summaries_recomputed == 0
    assert counts(ws) == before


def test_adding_one_document_processes_only_its_chunks_and_the_right_most_path(sample_ws_copy):
    ws = sample_ws_copy
    before = counts(ws)
    corpus_before = {n.node_id: n.text for n in ws.store.tree_nodes(scope="corpus")}
    report = index(ws, [NEW_DOC])
    assert report.new_documents == 1 and report.processed == 1
    assert report.chunks_embedded == 1
    # 12 sample documents with g = 5: corpus-L1-2 holds 2 roots; the new root joins it,
    # so only corpus-L1-2 and its parent corpus-L2-0 are recomputed.
    assert report.summaries_recomputed == 2
    corpus_after = {n.node_id: n.text for n in ws.store.tree_nodes(scope="corpus")}
    changed = {k for k in corpus_after if corpus_after[k] != corpus_before.get(k)}
    assert changed <= {"corpus-L1-2", "corpus-L2-0"}
    assert corpus_after["corpus-L1-0"] == corpus_before["corpus-L1-0"]
    after = counts(ws)
    assert after["documents"] == before["documents"] + 1
    assert after["chunks"] == before["chunks"] + 1
    assert "tobias wren" in ws.knowledge_graph()


def test_delete_then_readd_restores_the_same_counts(sample_ws_copy):
    from core.indexing.deletion import delete_documents

    ws = sample_ws_copy
    before = counts(ws)
    graph_before = ws.knowledge_graph()
    doc = next(d for d in ws.store.documents() if d.name.startswith("05-"))
    text = ws.store.document_text(doc.doc_id)
    with ws.writer():
        delete_documents(ws, [doc.doc_id])
    middle = counts(ws)
    assert middle["documents"] == before["documents"] - 1
    assert middle["chunks"] < before["chunks"] and middle["entities"] <= before["entities"]
    assert ws.store.tree_nodes(doc_id=doc.doc_id) == []
    assert reconcile(ws) == {}  # vectors were removed together with the rows
    index(ws, [SourceDocument(name=doc.name, text=text)])
    assert counts(ws) == before
    graph_after = ws.knowledge_graph()
    assert set(graph_after.nodes) == set(graph_before.nodes)
    assert set(map(frozenset, graph_after.edges)) == set(map(frozenset, graph_before.edges))


def test_changed_file_with_same_name_replaces_old_version(sample_ws_copy):
    ws = sample_ws_copy
    index(ws, [NEW_DOC])
    changed = SourceDocument(name=NEW_DOC.name, text=NEW_DOC.text + " Repairs finished in 2023.")
    report = index(ws, [changed])
    assert report.replaced == 1 and report.processed == 1
    named = ws.store.documents_named(NEW_DOC.name)
    assert len(named) == 1 and "2023" in ws.store.document_text(named[0].doc_id)


class ExplodingExtractor(SpacyExtractor):
    """Raises for any chunk containing the word KABOOM."""

    def extract(self, texts):
        if any("KABOOM" in t for t in texts):
            raise RuntimeError("extractor crashed on KABOOM")
        return super().extract(texts)


def test_a_failing_document_is_marked_failed_and_the_rest_is_indexed(sample_ws_copy):
    ws = sample_ws_copy
    before = counts(ws)
    bad = SourceDocument(name="bad.txt", text="KABOOM goes the extractor in Port Sallow.")
    report = index(ws, [bad, NEW_DOC], extractor=ExplodingExtractor(ws.settings.entity_types))
    assert report.processed == 1
    assert [f["name"] for f in report.failed] == ["bad.txt"]
    rows = {r["name"]: r for r in ws.documents_table()}
    assert rows["bad.txt"]["status"] == "failed" and "KABOOM" in rows["bad.txt"]["error"]
    assert rows["harbour-notes.md"]["status"] == "processed"
    after = counts(ws)
    assert after["processed"] == before["processed"] + 1 and after["failed"] == 1


def test_an_interrupted_document_is_resumed(sample_ws_copy):
    ws = sample_ws_copy
    with ws.writer():
        register_documents(ws, [NEW_DOC])
    doc = ws.store.documents_named(NEW_DOC.name)[0]
    ws.store.set_status(doc.doc_id, "processing")  # as left by a crash mid-batch
    ws.store.conn.commit()
    # a vector upserted before the crash but never committed in SQLite is an orphan
    ws.record_embedder()
    ws.vectors.upsert("entities", ["ent-orphan"], ws.embedder.embed(["orphan"]), [{"key": "orphan"}])
    with ws.writer():
        report = process_pending(ws)
    assert report.processed == 1
    assert ws.store.document(doc.doc_id).status == "processed"
    assert "ent-orphan" not in ws.vectors.all_ids("entities")


def test_reconcile_reembeds_missing_vectors(sample_ws_copy):
    ws = sample_ws_copy
    some = sorted(ws.store.expected_vector_ids()["chunks"])[:3]
    ws.vectors.delete("chunks", some)
    repaired = reconcile(ws)
    assert repaired == {"chunks": {"removed": 0, "added": 3}}
    assert set(some) <= ws.vectors.all_ids("chunks")


def test_workspace_refuses_another_embedder(sample_workspace_dir):
    from core.settings import Settings

    with pytest.raises(EmbedderMismatchError, match="repair --reembed"):
        Workspace(sample_workspace_dir, settings=Settings(embedder="openai", embedding_model="text-embedding-3-small"))


def test_second_writer_gets_a_busy_message(sample_ws_copy):
    from core.errors import WorkspaceBusyError

    ws = sample_ws_copy
    other = Workspace(ws.path)
    with ws.writer():
        with pytest.raises(WorkspaceBusyError, match=r"workspace busy \(pid \d+, since"):
            with other.writer():
                pass
    with other.writer():  # released afterwards
        pass
