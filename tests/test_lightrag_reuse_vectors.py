"""``import-lightrag --reuse-vectors``: LightRAG's stored vectors are used only when dimension, model and every
embedded text match what the workspace embedder would embed (core/importers/lightrag/vectors.py).

Accept: ``custom_kg_vectors`` (written by the real lightrag-hku 1.5.7: chunks of one embedding window,
single-chunk entities with one-line descriptions, no relations), whose stored texts are RAGScope's.
Refuse: the ``ainsert`` fixture (LightRAG's ``name\\n<SEP>-joined descriptions`` and relation texts), a
wrong dimension, an unnamed or different model. A refused import writes nothing."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.importers.lightrag import LightRAGImportError, import_lightrag
from core.importers.lightrag.vectors import read_vdb
from core.indexing.profiles import tree_vector_text
from core.workspace import Workspace

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "lightrag"


class RecordingEmbedder:
    """64-d like the fixtures' HashEmbedder, under another name; records every text it is asked to embed."""

    name, dim, remote = "fixture-hash-64", 64, False

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts += list(texts)
        rows = [[(hash(t) >> (3 * i)) % 11 + 1.0 for i in range(self.dim)] for t in texts]
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _nothing_written(ws: Workspace) -> None:
    status = ws.status()
    assert (status["documents"], status["chunks"], status["entities"]) == (0, 0, 0)
    assert ws.records.get_meta("lightrag_import") == ""


def test_matching_vectors_are_reused_and_only_the_tree_is_embedded(tmp_path):
    embedder = RecordingEmbedder()
    ws = Workspace(tmp_path / "ws", embedder=embedder)
    report = import_lightrag(ws, FIXTURES / "custom_kg_vectors", reuse_vectors=True,
                             vectors_model="sentence-transformers/FIXTURE-hash-64")  # owner/ and case ignored
    manifest = json.loads((FIXTURES / "manifest.json").read_text())["custom_kg_vectors"]
    assert report.embedded["reused"] == manifest["chunks"] + manifest["entities"]
    tree_texts = {tree_vector_text(n.text) for n in ws.records.tree_nodes()}  # what a node embeds
    assert embedder.texts and set(embedder.texts) <= tree_texts  # nothing but summary-tree nodes was embedded
    _, rows, matrix = read_vdb(FIXTURES / "custom_kg_vectors", "vdb_chunks.json")
    stored = ws.vectors.get_vectors("chunks", [r["__id__"] for r in rows])
    for row, vector in zip(rows, matrix):
        assert np.allclose(stored[row["__id__"]], vector, atol=1e-6)
    _, rows, matrix = read_vdb(FIXTURES / "custom_kg_vectors", "vdb_entities.json")
    graph = ws.knowledge_graph()
    by_name = {data["name"]: key for key, data in graph.nodes(data=True)}
    ids = {row["entity_name"]: ws.records.existing_vector_ids("entities", [by_name[row["entity_name"]]])
           [by_name[row["entity_name"]]] for row in rows}
    stored = ws.vectors.get_vectors("entities", list(ids.values()))
    for row, vector in zip(rows, matrix):
        assert np.allclose(stored[ids[row["entity_name"]]], vector, atol=1e-6)
    assert ws.status()["entities"] == manifest["entities"]
    ws.close()


def test_the_default_re_embeds_everything(tmp_path):
    embedder = RecordingEmbedder()
    ws = Workspace(tmp_path / "ws", embedder=embedder)
    report = import_lightrag(ws, FIXTURES / "custom_kg_vectors")
    assert report.embedded["reused"] == 0
    chunks = json.loads((FIXTURES / "custom_kg_vectors" / "kv_store_text_chunks.json").read_text())
    assert {c["content"] for c in chunks.values()} <= set(embedder.texts)
    ws.close()


def test_other_texts_are_refused_naming_collection_count_and_example(tmp_path):
    ws = Workspace(tmp_path / "ws", embedder=RecordingEmbedder())
    with pytest.raises(LightRAGImportError) as err:
        import_lightrag(ws, FIXTURES / "ainsert", reuse_vectors=True, vectors_model="fixture-hash-64")
    message = str(err.value)
    assert "dimension" not in message and "model:" not in message
    assert "of 18 entities were embedded from another text than RAGScope embeds" in message
    assert "of 31 relations were embedded from another text" in message
    assert "LightRAG embedded 'Brennock Observatory\\\\nBrennock Observatory<SEP>" in message
    assert "without --reuse-vectors" in message
    _nothing_written(ws)
    ws.close()


@pytest.mark.parametrize("model, words", [
    (None, ["model: LightRAG's vector files do not record", "--vectors-model", "'fixture-hash-64'"]),
    ("text-embedding-3-small", ["written by 'text-embedding-3-small'", "workspace embedder is 'fixture-hash-64'"]),
])
def test_an_unnamed_or_other_model_is_refused(tmp_path, model, words):
    ws = Workspace(tmp_path / "ws", embedder=RecordingEmbedder())
    with pytest.raises(LightRAGImportError) as err:
        import_lightrag(ws, FIXTURES / "custom_kg_vectors", reuse_vectors=True, vectors_model=model)
    assert all(w in str(err.value) for w in words), str(err.value)
    assert "text:" not in str(err.value)  # the texts do match here: only the model is named
    _nothing_written(ws)
    ws.close()


def test_another_dimension_is_refused(tmp_path):
    class Wide(RecordingEmbedder):
        dim = 96

    ws = Workspace(tmp_path / "ws", embedder=Wide())
    with pytest.raises(LightRAGImportError) as err:
        import_lightrag(ws, FIXTURES / "custom_kg_vectors", reuse_vectors=True, vectors_model="fixture-hash-64")
    message = str(err.value)
    assert "dimension: vdb_chunks.json holds 64-d vectors, the workspace embedder 'fixture-hash-64' gives 96-d" in message
    assert "dimension: vdb_entities.json holds 64-d" in message
    _nothing_written(ws)
    ws.close()


def test_cli_flags(tmp_path, capsys, monkeypatch):
    from core.cli.main import main

    code = main(["import-lightrag", str(FIXTURES / "custom_kg_vectors"), "--workspace", str(tmp_path / "cli"),
                 "--reuse-vectors", "--quiet"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--vectors-model" in err and "dimension: vdb_chunks.json holds 64-d vectors" in err
    assert not (tmp_path / "cli" / "ragscope.db").exists() or Workspace(tmp_path / "cli").status()["chunks"] == 0


def test_a_reused_entity_keeps_the_text_its_vector_came_from(tmp_path):
    """LightRAG embedded ``name\\ndescription``; RAGScope's entity text today is shorter (the profile start without
    the name it opens with). The reused vector's id names LightRAG's text, a repair restores a lost vector from
    that text, and a second import with reuse finds every entity unchanged (nothing written, nothing embedded)."""
    from core.indexing.profiles import entity_vector_id, entity_vector_text
    from core.indexing.reconcile import reconcile

    embedder = RecordingEmbedder()
    ws = Workspace(tmp_path / "ws", embedder=embedder)
    folder = FIXTURES / "custom_kg_vectors"
    import_lightrag(ws, folder, reuse_vectors=True, vectors_model="fixture-hash-64")
    _, rows, _ = read_vdb(folder, "vdb_entities.json")
    lightrag_text = {row["entity_name"]: row["content"] for row in rows}
    stored = {name: (key, vid) for key, name, _, vid in ws.records.entity_vector_rows()}
    today = {name: entity_vector_text(name, desc) for _, name, desc, _ in ws.records.entity_vector_rows()}
    assert any(today[name] != text for name, text in lightrag_text.items())  # the fixture tests the difference
    for name, text in lightrag_text.items():
        key, vid = stored[name]
        assert vid == entity_vector_id(key, text)

    ws.vectors.delete("entities", [vid for _, vid in stored.values()])
    embedder.texts.clear()
    assert reconcile(ws)["entities"]["added"] == len(stored)
    assert sorted(embedder.texts) == sorted(lightrag_text.values())

    embedder.texts.clear()
    again = import_lightrag(ws, folder, reuse_vectors=True, vectors_model="fixture-hash-64")
    assert again.entities_written == 0 and embedder.texts == []
    ws.close()
