"""A viewer is refused by every edit action in the library, not only hidden on the page (issue 33): each
edit operation, undo, export, import, the merge suggestions, a dismissal and the before → after
evaluation raise PermissionDeniedError, and the graph and the edit log stay as they were."""
from __future__ import annotations

import pytest

from core.auth import Principal, Role
from core.errors import PermissionDeniedError
from test_graph_edits import snapshot

VIEWER = Principal("vi", "viewer@example.org", Role.viewer)
EDITOR = Principal("ed", "editor@example.org", Role.editor)
REQUESTS = {"merge": {"names": ["Port Sallow Quay"], "into": "Port Sallow"},
            "rename": {"name": "Dunmore", "to": "Dunmore Town"}, "retype": {"name": "Dunmore", "type": "GPE"},
            "describe": {"name": "Dunmore", "description": "x"}, "delete_entity": {"name": "Greywick"},
            "delete_relation": {"source": "Port Sallow", "target": "Port Sallow Quay"},
            "relate": {"source": "Dunmore", "target": "Greywick"}}


def test_every_edit_action_refuses_a_viewer(sample_ws_copy):
    from core import api
    from core.editing.replay import OPS

    ws = sample_ws_copy
    assert set(REQUESTS) == set(OPS)  # a new operation must be added here
    api.edit_graph(EDITOR, ws, "retype", {"name": "Greywick", "type": "GPE"})
    before, log = snapshot(ws), api.graph_edits(EDITOR, ws)
    exported = api.export_graph_edits(EDITOR, ws)
    calls = [lambda op=op, args=args: api.edit_graph(VIEWER, ws, op, args) for op, args in REQUESTS.items()]
    calls += [lambda: api.undo_graph_edit(VIEWER, ws), lambda: api.undo_graph_edit(VIEWER, ws, 1),
              lambda: api.graph_edits(VIEWER, ws), lambda: api.export_graph_edits(VIEWER, ws),
              lambda: api.import_graph_edits(VIEWER, ws, exported), lambda: api.merge_suggestions(VIEWER, ws),
              lambda: api.dismiss_merge_suggestion(VIEWER, ws, "Port Sallow Quay", "Port Sallow"),
              lambda: api.evaluate_edits(VIEWER, ws, [], ["naive"], 1)]
    for call in calls:
        with pytest.raises(PermissionDeniedError):
            call()
    assert snapshot(ws) == before and api.graph_edits(EDITOR, ws) == log
    assert ws.records.get_meta("merge_suggestions_dismissed", "") == ""
