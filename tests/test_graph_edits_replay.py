"""Graph edits survive a repair, a re-embedding and a LightRAG re-import (issue 33): the graph after each is
the edited one, every edited row has its vector, and a re-import with edits equals a fresh import of the
same LightRAG folder with the same edit log imported (core.editing, core.indexing.reconcile/reembed,
core.importers.lightrag)."""
from __future__ import annotations

from pathlib import Path

import pytest

from test_graph_edits import assert_vectors_match_rows, snapshot

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "lightrag"
EDITS = [("merge", {"names": ["Harlow Valley"], "into": "Harlow Valley Railway"}),
         ("delete_entity", {"name": "River Lin"}),
         ("retype", {"name": "Tomas Greer", "type": "inventor"})]


def _edit(ws, edits) -> None:
    from core.editing.log import make_edit

    for op, args in edits:
        make_edit(ws, op, args)


@pytest.mark.slow
def test_edits_survive_repair_and_reembed(sample_ws_copy):
    from core.editing.log import make_edit
    from core.indexing.reconcile import reconcile
    from core.indexing.reembed import reembed
    from core.workspace import Workspace

    ws = sample_ws_copy
    make_edit(ws, "merge", {"names": ["Port Sallow Quay"], "into": "Port Sallow"})
    make_edit(ws, "delete_entity", {"name": "Greywick"})
    make_edit(ws, "retype", {"name": "Dunmore", "type": "GPE"})
    edited = snapshot(ws)
    ws.vectors.delete("entities", [ws.records.entity_rows(["port sallow"])["port sallow"]["vector_id"]])
    assert reconcile(ws)["entities"] == {"removed": 0, "added": 1}  # repair: the edited row's vector back
    assert snapshot(ws) == edited
    assert_vectors_match_rows(ws)
    path, settings = ws.path, ws.settings
    ws.close()
    reembed(path, settings)
    again = Workspace(path)
    try:
        assert snapshot(again) == edited and "port sallow quay" not in again.knowledge_graph()
        assert_vectors_match_rows(again)
        assert len(again.records.graph_edits(include_undone=False)) == 3
    finally:
        again.close()


@pytest.mark.slow
def test_edits_survive_a_lightrag_reimport_like_a_fresh_import_with_the_log(tmp_path):
    from core.editing.log import export_log, import_log
    from core.importers.lightrag.importer import import_lightrag
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "re")
    fresh = Workspace(tmp_path / "fresh")
    try:
        import_lightrag(ws, FIXTURES / "ainsert", source_model="stand-in (fixtures)")
        _edit(ws, EDITS)
        import_lightrag(ws, FIXTURES / "ainsert_updated", source_model="stand-in (fixtures)")
        graph = ws.knowledge_graph()
        assert "harlow valley" not in graph and "river lin" not in graph
        assert graph.nodes["tomas greer"]["type"] == "inventor"
        assert "Harlow Valley" in graph.nodes["harlow valley railway"]["aliases"]
        assert_vectors_match_rows(ws)

        import_lightrag(fresh, FIXTURES / "ainsert_updated", source_model="stand-in (fixtures)")
        report = import_log(fresh, export_log(ws))
        assert report.skipped == [] and len(report.applied) == len(EDITS)
        assert snapshot(ws) == snapshot(fresh)
    finally:
        ws.close()
        fresh.close()
