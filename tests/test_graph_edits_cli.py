"""``python -m core edit …`` / ``edits …`` (issue 33): the last name survives a merge, names are
case-insensitive, ``undo`` without an id undoes the last edit, export → import on a second workspace
gives the same graph, a bad edit exits with status 2 and a message."""
from __future__ import annotations

import json
import shutil

from core.cli.main import main


def _graph(path):
    from core.workspace import Workspace

    ws = Workspace(path)
    try:
        graph = ws.knowledge_graph()
        return sorted(graph.nodes), sorted(tuple(sorted(e)) for e in graph.edges)
    finally:
        ws.close()


def test_cli_edits_list_undo_export_import(sample_workspace_dir, tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(sample_workspace_dir, a)
    shutil.copytree(sample_workspace_dir, b)
    original = _graph(a)
    assert main(["edit", "merge", "PORT SALLOW QUAY", "port sallow", "--workspace", str(a), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["merged"] == 1
    assert main(["edit", "retype", "Dunmore", "GPE", "--workspace", str(a)]) == 0
    assert main(["edit", "delete", "Dunmore", "Ashcombe", "--workspace", str(a)]) == 0
    nodes, edges = _graph(a)
    assert "port sallow quay" not in nodes and ("ashcombe", "dunmore") not in edges
    capsys.readouterr()
    assert main(["edits", "list", "--workspace", str(a), "--json"]) == 0
    assert [e["op"] for e in json.loads(capsys.readouterr().out)] == ["merge", "retype", "delete_relation"]
    assert main(["edits", "export", str(tmp_path / "edits.json"), "--workspace", str(a)]) == 0
    assert main(["edits", "import", str(tmp_path / "edits.json"), "--workspace", str(b), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["applied"]) == 3
    assert _graph(b) == _graph(a)
    assert main(["edits", "undo", "--workspace", str(a)]) == 0  # the last edit: the relation is back
    assert ("ashcombe", "dunmore") in _graph(a)[1]
    assert main(["edits", "undo", "1", "--workspace", str(a)]) == 0
    assert main(["edits", "undo", "2", "--workspace", str(a)]) == 0
    assert _graph(a) == original
    capsys.readouterr()
    assert main(["edit", "rename", "Nowhere", "Somewhere", "--workspace", str(a)]) == 2
    assert "no entity named 'Nowhere'" in capsys.readouterr().err
    assert main(["edit", "merge", "Dunmore", "--workspace", str(a)]) == 2
