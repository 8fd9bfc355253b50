"""Hand edits of the knowledge graph (core.editing, core.api.editing; issue 33): each edit changes exactly
what it should, rows and vectors; a viewer is refused in the library; an edit during indexing is refused;
an older workspace without the edit table opens and takes edits; undo equals never having made the edit;
edits survive an incremental add that re-mentions the merged names and a delete + re-add of a document;
an exported log replays onto a second workspace with the same result."""
from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from core.auth import Principal, Role
from core.errors import PermissionDeniedError, WorkspaceBusyError

EDITOR = Principal("ed", "editor@example.org", Role.editor)
VIEWER = Principal("vi", "viewer@example.org", Role.viewer)


def snapshot(ws) -> tuple[dict, dict]:
    """The merged graph as comparable values (order-free lists sorted)."""
    graph = ws.knowledge_graph()
    nodes = {k: (d["name"], d["type"], d["description"], tuple(sorted(d["source_chunk_ids"])),
                 tuple(sorted(d["aliases"]))) for k, d in graph.nodes(data=True)}
    edges = {tuple(sorted((a, b))): (tuple(sorted(d["keywords"])), d["description"], round(d["weight"], 6),
                                     tuple(sorted(d["source_chunk_ids"]))) for a, b, d in graph.edges(data=True)}
    return nodes, edges


def assert_vectors_match_rows(ws) -> None:
    expected = ws.records.expected_vector_ids()
    for collection in ("entities", "relations"):
        assert ws.vectors.all_ids(collection) == expected[collection], collection


def test_merge_combines_the_pair_and_changes_nothing_else(sample_ws_copy):
    from core.api import edit_graph, graph_edits

    ws = sample_ws_copy
    nodes, edges = snapshot(ws)
    quay, port = nodes["port sallow quay"], nodes["port sallow"]
    quay_edges = {p for p in edges if "port sallow quay" in p}
    result = edit_graph(EDITOR, ws, "merge", {"names": ["PORT SALLOW QUAY"], "into": "port sallow"})
    after_nodes, after_edges = snapshot(ws)
    assert set(after_nodes) == set(nodes) - {"port sallow quay"}
    merged = after_nodes["port sallow"]
    assert merged[0] == port[0] and merged[1] == port[1]  # the survivor keeps its name and type
    assert set(merged[3]) == set(port[3]) | set(quay[3])  # source chunks combined
    assert "Port Sallow Quay" in merged[4] and set(quay[4]) <= set(merged[4])  # aliases combined
    assert all("port sallow quay" not in p for p in after_edges)
    assert ("port sallow", "port sallow") not in after_edges  # the self-loop is dropped
    for pair in quay_edges:  # every other relation of the merged entity moved onto the survivor
        other = pair[0] if pair[1] == "port sallow quay" else pair[1]
        if other != "port sallow":
            assert tuple(sorted((other, "port sallow"))) in after_edges
    untouched = {p: v for p, v in edges.items() if "port sallow" not in p and "port sallow quay" not in p}
    assert all(after_edges[p] == v for p, v in untouched.items())
    assert all(after_nodes[k] == v for k, v in nodes.items() if k not in ("port sallow", "port sallow quay"))
    assert result.summary["merged"] == 1 and result.summary["dropped_self_loops"] == 1
    assert_vectors_match_rows(ws)
    [logged] = graph_edits(EDITOR, ws)
    assert logged.op == "merge" and logged.principal == "editor@example.org" and not logged.undone
    assert logged.before["port sallow quay"]["name"] == "Port Sallow Quay"


def test_rename_retype_describe_delete_and_relate(sample_ws_copy):
    from core.editing.log import make_edit
    from core.editing.replay import EditError

    ws = sample_ws_copy
    nodes, edges = snapshot(ws)
    make_edit(ws, "retype", {"name": "Dunmore", "type": "GPE"})
    make_edit(ws, "describe", {"name": "Dunmore", "description": "A town on the coast."})
    n, e = snapshot(ws)
    assert n["dunmore"][1] == "GPE" and n["dunmore"][2] == "A town on the coast." and e == edges
    assert {k: v for k, v in n.items() if k != "dunmore"} == {k: v for k, v in nodes.items() if k != "dunmore"}

    degree = sum(1 for p in edges if "greywick" in p)
    make_edit(ws, "rename", {"name": "greywick", "to": "Greywick Town"})
    n, e = snapshot(ws)
    assert "greywick" not in n and n["greywick town"][0] == "Greywick Town" and "Greywick" in n["greywick town"][4]
    assert sum(1 for p in e if "greywick town" in p) == degree and len(e) == len(edges)

    millbrook = sum(1 for p in e if "millbrook" in p)
    make_edit(ws, "delete_entity", {"name": "Millbrook"})
    n2, e2 = snapshot(ws)
    assert "millbrook" not in n2 and len(n2) == len(n) - 1 and len(e2) == len(e) - millbrook

    pair = next(p for p in e2 if "port sallow" in p)
    make_edit(ws, "delete_relation", {"source": pair[1], "target": pair[0]})
    n3, e3 = snapshot(ws)
    assert pair not in e3 and len(e3) == len(e2) - 1 and n3 == n2

    make_edit(ws, "relate", {"source": "Dunmore", "target": "Ashcombe", "description": "<b>rivals</b>",
                             "keywords": ["rivalry"]})
    _, e4 = snapshot(ws)
    assert e4[("ashcombe", "dunmore")][1].endswith("<b>rivals</b>") and "rivalry" in e4[("ashcombe", "dunmore")][0]
    assert_vectors_match_rows(ws)
    with pytest.raises(EditError, match="no entity named"):
        make_edit(ws, "retype", {"name": "Nowhere Town", "type": "GPE"})
    with pytest.raises(EditError, match="merge the two"):
        make_edit(ws, "rename", {"name": "Dunmore", "to": "Ashcombe"})
    with pytest.raises(EditError, match="unknown argument"):
        make_edit(ws, "retype", {"name": "Dunmore", "type": "GPE", "extra": 1})
    assert len(ws.records.graph_edits()) == 6  # refused edits are not logged


def test_a_viewer_is_refused_in_the_library_and_nothing_changes(sample_ws_copy):
    from core.api import edit_graph, export_graph_edits, graph_edits, import_graph_edits, undo_graph_edit

    ws = sample_ws_copy
    before = snapshot(ws)
    for call in (lambda: edit_graph(VIEWER, ws, "delete_entity", {"name": "Dunmore"}),
                 lambda: graph_edits(VIEWER, ws), lambda: undo_graph_edit(VIEWER, ws),
                 lambda: export_graph_edits(VIEWER, ws), lambda: import_graph_edits(VIEWER, ws, "{}")):
        with pytest.raises(PermissionDeniedError):
            call()
    assert snapshot(ws) == before and ws.records.graph_edits() == []


def test_an_edit_while_another_writer_holds_the_workspace_is_refused(sample_ws_copy):
    from core.editing.log import make_edit
    from core.workspace import Workspace

    ws = sample_ws_copy
    before = snapshot(ws)
    other = Workspace(ws.path)
    try:
        with other.writer():  # what an indexing job holds for its whole run
            with pytest.raises(WorkspaceBusyError):
                make_edit(ws, "delete_entity", {"name": "Dunmore"})
    finally:
        other.close()
    assert snapshot(ws) == before and ws.records.graph_edits() == []


def test_an_older_workspace_without_the_edit_table_opens_and_takes_edits(sample_workspace_dir, tmp_path):
    from core.editing.log import edit_log, make_edit
    from core.storage.schema import SCHEMA_VERSION
    from core.workspace import DB_FILE, Workspace

    shutil.copytree(sample_workspace_dir, tmp_path / "old")
    with sqlite3.connect(tmp_path / "old" / DB_FILE) as conn:
        conn.execute("DROP TABLE IF EXISTS graph_edits")
        conn.execute("UPDATE meta SET value='4' WHERE key='schema_version'")
    ws = Workspace(tmp_path / "old")
    try:
        assert ws.store.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert edit_log(ws) == []
        make_edit(ws, "retype", {"name": "Dunmore", "type": "GPE"})
        assert [e.op for e in edit_log(ws)] == ["retype"]
    finally:
        ws.close()


EDITS = [("merge", {"names": ["Port Sallow Quay"], "into": "Port Sallow"}),
         ("retype", {"name": "Dunmore", "type": "GPE"}),
         ("rename", {"name": "Greywick", "to": "Greywick Town"}),
         ("delete_entity", {"name": "Millbrook"}),
         ("relate", {"source": "Dunmore", "target": "Kestrel Island", "description": "near", "keywords": ["near"]})]


def _copy(sample_workspace_dir, tmp_path, name):
    from core.workspace import Workspace

    shutil.copytree(sample_workspace_dir, tmp_path / name)
    return Workspace(tmp_path / name)


def test_undo_equals_never_having_made_the_edit(sample_workspace_dir, tmp_path):
    from core.editing.log import edit_log, make_edit, undo

    ws, never = _copy(sample_workspace_dir, tmp_path, "a"), _copy(sample_workspace_dir, tmp_path, "b")
    try:
        original = snapshot(ws)
        for op, args in EDITS:
            make_edit(ws, op, args)
        for op, args in EDITS[1:]:
            make_edit(never, op, args)
        assert undo(ws, edit_log(ws)[0].id).op == "merge"
        assert snapshot(ws) == snapshot(never)
        assert_vectors_match_rows(ws)
        for _ in EDITS[1:]:
            undo(ws)  # the last active edit each time
        assert snapshot(ws) == original and all(e.undone for e in edit_log(ws))
        assert_vectors_match_rows(ws)
    finally:
        ws.close()
        never.close()


def test_edits_survive_an_incremental_add_and_a_delete_and_re_add(sample_ws_copy):
    from core.editing.log import make_edit
    from core.indexing.deletion import delete_documents
    from core.indexing.pipeline import process_pending, register_documents
    from core.loaders import load_path
    from core.api import sample_paths
    from core.auth import LOCAL_ADMIN

    ws = sample_ws_copy
    for op, args in EDITS:
        make_edit(ws, op, args)
    edited = snapshot(ws)
    # a new document that mentions both merged names and the deleted entity
    note = ws.path.parent / "note.md"
    note.write_text("Port Sallow Quay and Port Sallow were busy. Millbrook sent grain to Port Sallow Quay. "
                    "Greywick met Dunmore at Port Sallow.\n", encoding="utf-8")
    docs, _ = load_path(note)
    with ws.writer():
        register_documents(ws, docs, [])
        process_pending(ws)
    nodes, _ = snapshot(ws)
    assert "port sallow quay" not in nodes and "millbrook" not in nodes and "greywick" not in nodes
    assert nodes["dunmore"][1] == "GPE" and "greywick town" in nodes
    assert_vectors_match_rows(ws)
    # delete the new document: the graph is the edited one again
    doc_id = next(d.doc_id for d in ws.records.documents() if d.name == "note.md")
    with ws.writer():
        delete_documents(ws, [doc_id])
    assert snapshot(ws) == edited
    # delete and re-add a source document of the merged entity
    article = next(p for p in sample_paths(LOCAL_ADMIN) if "Port Sallow Quay" in p.read_text(encoding="utf-8"))
    first = next(d.doc_id for d in ws.records.documents() if d.name == article.name)
    with ws.writer():
        delete_documents(ws, [first])
        register_documents(ws, load_path(article)[0], [])
        process_pending(ws)
    nodes, _ = snapshot(ws)
    assert "port sallow quay" not in nodes and "Port Sallow Quay" in nodes["port sallow"][4]
    assert snapshot(ws)[0].keys() == edited[0].keys()
    assert_vectors_match_rows(ws)


def test_an_exported_log_replays_onto_a_second_workspace(sample_workspace_dir, tmp_path):
    from core.editing.log import EditError, export_log, import_log, make_edit, parse_export

    ws, second = _copy(sample_workspace_dir, tmp_path, "a"), _copy(sample_workspace_dir, tmp_path, "b")
    try:
        for op, args in EDITS:
            make_edit(ws, op, args)
        text = export_log(ws)
        data = json.loads(text)
        data["edits"].append({"op": "retype", "args": {"name": "Atlantis", "type": "LOC"}})
        report = import_log(second, json.dumps(data))
        assert len(report.applied) == len(EDITS)
        assert report.skipped == [(len(EDITS) + 1, "no entity named 'Atlantis'")]  # reported, not dropped
        assert snapshot(second) == snapshot(ws)
        for bad in ("[]", "{broken", json.dumps({"format": "other", "edits": []}),
                    json.dumps({"format": "ragscope-graph-edits", "edits": [{"op": "drop_table", "args": {}}]}),
                    "x" * 2_000_001):
            with pytest.raises(EditError):
                parse_export(bad)
    finally:
        ws.close()
        second.close()


def test_a_missing_argument_is_named_with_what_it_is():
    """ "rename needs to" read as a cut sentence (an emptied New name, an imported edit without "to")."""
    from core.editing.log import REQUIRED, EditError, clean_args

    with pytest.raises(EditError, match=r"^rename needs to \(the new name\)$"):
        clean_args("rename", {"name": "ashcombe", "to": "  "})
    with pytest.raises(EditError, match=r"^retype needs type \(the new type\)$"):
        clean_args("retype", {"name": "ashcombe"})
    for op, names in REQUIRED.items():  # every required argument has its words
        with pytest.raises(EditError, match=r"needs \w+ \(the "):
            clean_args(op, {})


def test_an_entity_merged_into_itself_is_refused_and_not_logged(sample_ws_copy):
    """Through the API (the page never offers it) a merge of an entity into itself — any case or spacing —
    was logged as an edit that changed nothing; now it is refused with the reason, and a merge list that also
    names the target keeps only the others."""
    from core.api import edit_graph
    from core.editing.log import EditError, clean_args

    ws = sample_ws_copy
    before = snapshot(ws)
    with pytest.raises(EditError, match="other than the one they merge into"):
        edit_graph(EDITOR, ws, "merge", {"names": ["PORT  Sallow"], "into": "port sallow"})
    assert snapshot(ws) == before and ws.records.graph_edits() == []
    assert clean_args("merge", {"names": ["Port Sallow", "Port Sallow Quay"], "into": "port sallow"})["names"] == [
        "Port Sallow Quay"]
