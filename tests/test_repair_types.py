"""``python -m core repair --types`` (issue 32): an existing workspace's entities take the current typing rule's
types from their stored mentions, without re-indexing; names, descriptions and vectors stay; a hand-edited
entity keeps its hand type; a second run changes nothing."""
from __future__ import annotations

import json

from core import api
from core.auth import LOCAL_ADMIN
from core.cli.main import main as cli_main
from core.extraction.names import normalize_name
from core.indexing.retype import retype_entities

# the types the old rule (the mentions' vote alone) gave these sample entities, and the right ones
STALE = {"Port Sallow": ("FAC", "GPE"), "Ashcombe": ("PERSON", "GPE"), "Agnes Marlowe": ("LOC", "PERSON"),
         "Kestrel Point Lighthouse": ("ORG", "FAC")}


def _rows(ws, names):
    return ws.records.entity_rows([normalize_name(n) for n in names])


def _make_stale(ws, types: dict[str, str]) -> None:
    rows = _rows(ws, types)
    with ws.writer(), ws.records.unit_of_work():
        for name, etype in types.items():
            key = normalize_name(name)
            row = rows[key]
            ws.records.write_entity(key, row["name"], etype, row["description"], row["source_chunk_ids"],
                                    row["vector_id"], row["aliases"])
        ws.bump_generation()


def test_repair_types_retypes_stale_entities_and_keeps_the_rest(sample_ws_copy) -> None:
    ws = sample_ws_copy
    names = list(STALE) + ["Greywick"]
    fresh = _rows(ws, names)
    assert {n: fresh[normalize_name(n)]["type"] for n in STALE} == {n: new for n, (_, new) in STALE.items()}
    _make_stale(ws, {n: old for n, (old, _) in STALE.items()})
    api.edit_graph(LOCAL_ADMIN, ws, "retype", {"name": "Greywick", "type": "ORG"})  # a hand type wins
    vectors_before = {k: r["vector_id"] for k, r in ws.records.entity_rows(ws.records.entity_names()).items()}

    report = retype_entities(ws)

    assert report["retyped"] == len(STALE)
    assert {c["name"]: (c["from"], c["to"]) for c in report["changes"]} == STALE
    assert report["kept_by_hand_edits"] == 1
    after = _rows(ws, names)
    for name, (_, new) in STALE.items():
        row, old_row = after[normalize_name(name)], fresh[normalize_name(name)]
        assert row["type"] == new
        assert (row["name"], row["description"], row["aliases"]) == (old_row["name"], old_row["description"],
                                                                     old_row["aliases"])
    assert after[normalize_name("Greywick")]["type"] == "ORG"
    assert {k: r["vector_id"] for k, r in ws.records.entity_rows(ws.records.entity_names()).items()} == vectors_before
    assert ws.knowledge_graph().nodes[normalize_name("Port Sallow")]["type"] == "GPE"  # the graph view is fresh

    again = retype_entities(ws)  # idempotent
    assert (again["retyped"], again["changes"]) == (0, [])


def test_repair_types_on_the_command_line(sample_ws_copy, capsys) -> None:
    ws = sample_ws_copy
    _make_stale(ws, {"Ashcombe": "PERSON"})
    ws.close()
    assert cli_main(["repair", "--types", "--quiet", "--workspace", str(ws.path)]) == 0
    report = json.loads(capsys.readouterr().out)["types"]
    assert report["changes"] == [{"name": "Ashcombe", "from": "PERSON", "to": "GPE"}]
