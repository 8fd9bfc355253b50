"""Provenance of an imported graph and the origin of each part: records that came from the LightRAG import,
records RAGScope added when the user indexed more documents into the workspace afterwards, and entities
drawn from both — through ``core.api.graph_provenance`` / ``graph_part_origins``, shown (escaped) on the
Knowledge graph and Inspect pages."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from conftest import HashEmbedder
from core import api
from core.auth import LOCAL_ADMIN
from core.importers.lightrag import import_lightrag
from core.workspace import Workspace
from ui.provenance import provenance_text

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "lightrag"
ADDED = ("Ada Vell met Quentin Marlowe at the Port Hesketh Aquarium in 1899. Quentin Marlowe later ran the "
         "Port Hesketh Aquarium for twenty years.")


def _imported_then_added(folder: Path, embedder=None, model: str = "gpt-4o") -> Workspace:
    ws = Workspace(folder, embedder=embedder)
    import_lightrag(ws, FIXTURES / "ainsert", source_model=model)
    report = api.index_text(LOCAL_ADMIN, ws, "added.md", ADDED)
    assert (report.processed, report.failed) == (1, [])
    return ws


def test_parts_are_told_apart_by_origin(tmp_path):
    ws = _imported_then_added(tmp_path / "ws", HashEmbedder())
    prov = api.graph_provenance(LOCAL_ADMIN, ws)
    assert prov["provenance"] == "imported from LightRAG" and prov["source_model"] == "gpt-4o"
    origins = prov["origins"]
    assert origins["documents"] == {"imported": 5, "added": 1}
    assert origins["chunks"]["imported"] == 10 and origins["chunks"]["added"] >= 1
    graph = ws.knowledge_graph()
    keys = {data["name"]: key for key, data in graph.nodes(data=True)}
    marlowe = next(k for n, k in keys.items() if "Quentin Marlowe" in n)
    found = api.graph_part_origins(LOCAL_ADMIN, ws, entity_keys=[keys["Ada Vell"], marlowe, keys["Tarn Ridge"]])
    assert found == {keys["Ada Vell"]: "both", marlowe: "added", keys["Tarn Ridge"]: "imported"}
    assert origins["entities"]["imported"] + origins["entities"]["both"] == 18  # every LightRAG entity is still there
    assert origins["entities"]["added"] >= 1 and origins["entities"]["both"] >= 1
    pair = next((a, b) for a, b in graph.edges(keys["Tarn Ridge"]))
    pair = (pair[0], pair[1]) if pair[0] <= pair[1] else (pair[1], pair[0])
    assert api.graph_part_origins(LOCAL_ADMIN, ws, relation_keys=[pair]) == {pair: "imported"}
    text = provenance_text(prov)
    assert "model: gpt\\-4o" in text and "Added since by RAGScope indexing: 1 documents" in text
    ws.close()


def test_a_graph_ragscope_built_has_no_provenance(sample_ws):
    assert api.graph_provenance(LOCAL_ADMIN, sample_ws) is None
    some = next(iter(sample_ws.knowledge_graph().nodes))
    assert api.graph_part_origins(LOCAL_ADMIN, sample_ws, entity_keys=[some]) == {}
    assert provenance_text(None) == ""


def _app(data: Path, monkeypatch) -> AppTest:
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(data))
    monkeypatch.delenv("RAGSCOPE_WORKSPACE", raising=False)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["workspace_name"] = "imported"
    at.run()
    return at


@pytest.mark.slow
def test_knowledge_graph_and_inspect_pages_show_provenance_and_origins(tmp_path, monkeypatch):
    data = tmp_path / "workspaces"
    data.mkdir()
    _imported_then_added(data / "imported", model="**gpt** <img src=x>").close()
    at = _app(data, monkeypatch)
    at.switch_page("pages/knowledge_graph.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value for c in at.caption]
    assert any("imported from LightRAG" in c and "\\*\\*gpt\\*\\* \\<img" in c for c in captions), captions
    assert not any("**gpt**" in c for c in captions)
    box = at.selectbox(key="kg_entity")
    ada = next(o for o in box.options if "Ada Vell" in str(o))
    box.set_value(ada).run()
    assert any(c.value == "Origin: imported from LightRAG, extended by RAGScope indexing" for c in at.caption), \
        [c.value for c in at.caption]
    at.switch_page("pages/inspect.py")
    at.run()
    assert any("imported from LightRAG" in c.value for c in at.caption)
    at.selectbox(key="inspect_mode").set_value("local").run()
    at.text_area(key="inspect_question").input("Who founded Brennock Observatory?").run()
    at.button(key="inspect_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    frames = [d.value for d in at.dataframe]
    entities = next(f for f in frames if "type" in f.columns and "origin" in f.columns)
    assert set(entities["origin"]) <= {"imported from LightRAG", "added by RAGScope indexing",
                                       "imported from LightRAG, extended by RAGScope indexing"}
    assert "imported from LightRAG" in set(entities["origin"])
