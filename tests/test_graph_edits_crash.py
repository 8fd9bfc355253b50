"""A SIGKILL in the middle of a graph edit (issue 33): the process is killed after the edit's vectors are
written but before its unit of work commits, or after the commit but before the replaced vectors are
deleted. Reopened, the workspace holds the graph of before the edit or of after it, never a mix; the
edit log agrees; ``repair`` (reconcile) then leaves exactly the vectors the rows name."""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from test_graph_edits import assert_vectors_match_rows, snapshot

ROOT = Path(__file__).resolve().parent.parent
MERGE = {"names": ["Port Sallow Quay"], "into": "Port Sallow"}
CHILD = r"""
import os, signal, sys
sys.path.insert(0, sys.argv[1])
import core.editing.log as log
from core.workspace import Workspace

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

if sys.argv[3] == "before_commit":  # the vectors are upserted, the rows not yet committed
    upsert = log.upsert_graph_vectors
    def upsert_then_die(*args, **kwargs):
        upsert(*args, **kwargs)
        die()
    log.upsert_graph_vectors = upsert_then_die
else:  # the rows are committed, the replaced vectors not yet deleted
    log.delete_vectors = die
ws = Workspace(sys.argv[2])
log.make_edit(ws, "merge", {"names": ["Port Sallow Quay"], "into": "Port Sallow"})
sys.exit(3)  # not reached
"""


def _kill_mid_edit(path: Path, point: str) -> None:
    result = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(path), point], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == -signal.SIGKILL, result.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("point,expect_after", [("before_commit", False), ("after_commit", True)])
def test_a_sigkill_mid_edit_leaves_before_or_after(sample_workspace_dir, tmp_path, point, expect_after):
    from core.editing.log import make_edit
    from core.indexing.reconcile import reconcile
    from core.workspace import Workspace

    reference = tmp_path / "reference"
    shutil.copytree(sample_workspace_dir, reference)
    ws = Workspace(reference)
    before = snapshot(ws)
    make_edit(ws, "merge", MERGE)
    after = snapshot(ws)
    ws.close()
    assert before != after

    target = tmp_path / "killed"
    shutil.copytree(sample_workspace_dir, target)
    _kill_mid_edit(target, point)
    ws = Workspace(target)  # the killed writer's lock marker is cleared (its process is gone)
    try:
        assert snapshot(ws) == (after if expect_after else before)
        assert len(ws.records.graph_edits()) == (1 if expect_after else 0)
        reconcile(ws)
        assert_vectors_match_rows(ws)
        assert snapshot(ws) == (after if expect_after else before)
        if not expect_after:  # the edit can be made again, in full
            make_edit(ws, "merge", MERGE)
            assert snapshot(ws) == after
            assert_vectors_match_rows(ws)
    finally:
        ws.close()
