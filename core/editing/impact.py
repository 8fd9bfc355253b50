"""What the graph edits changed: every mode's evaluation on the index as it was before edit N against the
index as it is (``python -m core eval --since-edit N``, the Knowledge graph page's before → after).

The "before" index is a copy of the workspace folder in which every active edit numbered N or later is
undone, newest first (``core.editing.log.undo``: the graph is rebuilt as the log without them gives). The
copy is taken under the writer lock, so no indexing runs while it is made, and deleted afterwards; the
workspace itself is never written. The copy is always a SQLite workspace: a SQLite one is copied as it
is, a PostgreSQL one has its records copied into a new SQLite file (``core.storage.record_copy``); the
vectors must be in the folder (embedded ChromaDB; a ChromaDB server is refused with a message).

``compare`` returns the two evaluations, a per-mode table of before → after and the questions whose
evidence or answer changed in some mode (gold ranks, recall@k, answer found in the answer).
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence
from contextlib import contextmanager

from core.editing.log import edit_log, undo
from core.editing.replay import EditError
from core.evaluation.questions import Question
from core.evaluation.runner import EvalReport, evaluate
from core.settings import Settings
from core.workspace import Workspace

SKIPPED_FILES = ("write.lock",)


@dataclass
class EditImpact:
    """Before (edits < ``since`` only) and after (every active edit) evaluations of one question file."""

    since: int
    undone: list[int]
    before: EvalReport
    after: EvalReport
    changed: list[dict[str, Any]] = field(default_factory=list)  # one per (question, mode) that changed

    def table(self) -> list[dict[str, Any]]:
        """Per mode: recall@k, all@k and answer-in-answer before and after (fractions)."""
        rows = []
        for mode, after in self.after.modes.items():
            before = self.before.modes.get(mode, {})
            row: dict[str, Any] = {"mode": mode}
            for k in self.after.ks:
                row[f"R@{k}"] = (before.get("recall@k", {}).get(str(k)), after["recall@k"][str(k)])
            for k in self.after.ks:
                row[f"all@{k}"] = (before.get("all@k", {}).get(str(k)), after["all@k"][str(k)])
            row["ans-in-ans"] = (before.get("answer_in_answer"), after.get("answer_in_answer"))
            row["ctx-tokens"] = (before.get("context_tokens"), after.get("context_tokens"))
            row["changed"] = sum(1 for c in self.changed if c["mode"] == mode)
            rows.append(row)
        return rows

    def summary(self) -> dict[str, Any]:
        return {"since_edit": self.since, "undone_in_copy": self.undone, "table": self.table(),
                "changed": self.changed, "before": self.before.summary(), "after": self.after.summary()}


def _check_copyable(ws: Workspace) -> None:
    if ws.backend.name not in ("sqlite", "postgresql") or ws.settings.chroma_url:
        raise EditError("the before → after of edits copies the workspace: it needs its vectors in the workspace "
                        f"folder (embedded ChromaDB; this one is {ws.store_description()})")


def _copy_store(ws: Workspace, target: Path) -> Workspace:
    """The folder (settings, embedded vectors; a SQLite file as it is) copied to ``target`` and opened on
    SQLite; a PostgreSQL workspace's records are copied into the new SQLite file."""
    shutil.copytree(ws.path, target, ignore=shutil.ignore_patterns(*SKIPPED_FILES))
    copy = Workspace(target, settings=ws.settings, embedder=ws.loaded_embedder, store="sqlite")
    if ws.backend.name != "sqlite":
        from core.storage.record_copy import copy_records

        copy_records(ws.records, copy.records)  # type: ignore[arg-type]  # both are SQL record stores
    return copy


def copy_before(ws: Workspace, since: int) -> tuple[tempfile.TemporaryDirectory, Workspace, list[int]]:
    """A copy of ``ws`` in a new temporary folder with every active edit numbered ``since`` or later undone
    (newest first), and the ids undone. The caller closes the copy and cleans the folder up."""
    _check_copyable(ws)
    later = [e.id for e in edit_log(ws, include_undone=False) if e.id >= since]
    if not later:
        raise EditError(f"no active edit numbered {since} or later: nothing to compare")
    tmp = tempfile.TemporaryDirectory(prefix="ragscope-before-")
    try:
        target = Path(tmp.name) / ws.path.name
        with ws.writer():
            ws.records.commit()
            copy = _copy_store(ws, target)
    except BaseException:
        tmp.cleanup()
        raise
    try:
        for edit_id in sorted(later, reverse=True):
            undo(copy, edit_id, who="before-after")
    except BaseException:
        copy.close()
        tmp.cleanup()
        raise
    return tmp, copy, later


@contextmanager
def workspace_before(ws: Workspace, since: int) -> Iterator[tuple[Workspace, list[int]]]:
    """A temporary copy of ``ws`` with every active edit numbered ``since`` or later undone (newest
    first), and the ids undone; deleted when the block ends."""
    tmp, copy, later = copy_before(ws, since)
    try:
        yield copy, later
    finally:
        copy.close()
        tmp.cleanup()


def _key(row: dict[str, Any], ks: Sequence[int]) -> tuple:
    return (tuple(sorted((g, r or 0) for g, r in row["found_ranks"].items())),
            tuple(row[f"recall@{k}"] for k in ks), row.get("answer_in_answer"))


def changed_rows(before: EvalReport, after: EvalReport) -> list[dict[str, Any]]:
    """The (question, mode) pairs whose gold ranks, recall@k or answer-in-answer differ."""
    old = {(r["qid"], r["mode"]): r for r in before.rows}
    out = []
    for row in after.rows:
        prior = old.get((row["qid"], row["mode"]))
        if prior is None or _key(prior, after.ks) == _key(row, after.ks):
            continue
        out.append({"qid": row["qid"], "mode": row["mode"], "gold_ranks_before": prior["found_ranks"],
                    "gold_ranks_after": row["found_ranks"],
                    **{f"R@{k}": (prior[f"recall@{k}"], row[f"recall@{k}"]) for k in after.ks},
                    "answer_in_answer": (prior.get("answer_in_answer"), row.get("answer_in_answer"))})
    return out


def compare(ws: Workspace, questions: list[Question], modes: Sequence[str], since: int,
            ks: Sequence[int] = (2, 5, 10), settings: Optional[Settings] = None, keywords: Any = None) -> EditImpact:
    """Evaluate ``questions`` on the index before edit ``since`` and on the index as it is."""
    with workspace_before(ws, since) as (copy, undone):
        before = evaluate(copy, questions, modes, ks, settings=settings, keywords=keywords)
    after = evaluate(ws, questions, modes, ks, settings=settings, keywords=keywords)
    return EditImpact(since, undone, before, after, changed_rows(before, after))
