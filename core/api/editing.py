"""``core.api`` functions for hand edits of the knowledge graph (``core.editing``): the edits, the edit
log with undo, export and import.

* viewer — none: a viewer sees neither the edits nor their log;
* editor — ``edit_graph``, ``graph_edits``, ``undo_graph_edit``, ``export_graph_edits``,
  ``import_graph_edits``, ``merge_suggestions``, ``dismiss_merge_suggestion`` (accepting a suggestion is
  an ``edit_graph`` merge), ``evaluate_edits`` (every mode before edit N → after, on a copy),
  ``edit_question_diff`` (one question before the last edit(s) → after: what entered or left each mode's
  top k; Compare and Inspect), ``junk_suggestions``, ``dismiss_junk`` and ``delete_entities`` (junk nodes
  deleted in one step, one logged edit each).

Each edit takes the workspace's writer lock (refused with ``WorkspaceBusyError`` while an indexing job
runs) and is recorded with the signed-in principal. Re-exported by ``core.api``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

from core.auth import Principal, Role, requires
from core.fairness import slots
from core.storage.records import GraphEdit
from core.workspace import Workspace

if TYPE_CHECKING:
    from core.editing.log import EditResult, ImportReport as EditImportReport
    from core.editing.impact import EditImpact
    from core.editing.junk import JunkNode
    from core.editing.question_diff import QuestionDiff
    from core.editing.suggest import Suggestion as MergeSuggestion
    from core.evaluation.questions import Question
    from core.settings import Settings


@requires(Role.editor)
def edit_graph(principal: Principal, ws: Workspace, op: str, args: dict[str, Any]) -> EditResult:
    """Make one edit (``merge``, ``rename``, ``retype``, ``describe``, ``delete_entity``,
    ``delete_relation``, ``relate``; arguments in ``core.editing.log.ARGS``)."""
    from core.editing.log import make_edit

    return make_edit(ws, op, dict(args), who=principal.label)


@requires(Role.editor)
def graph_edits(principal: Principal, ws: Workspace, include_undone: bool = True) -> list[GraphEdit]:
    """The edit log, oldest first."""
    from core.editing.log import edit_log

    return edit_log(ws, include_undone)


@requires(Role.editor)
def undo_graph_edit(principal: Principal, ws: Workspace, edit_id: Optional[int] = None) -> GraphEdit:
    """Undo one edit (the last one when ``edit_id`` is None); the edit undone."""
    from core.editing.log import undo

    return undo(ws, edit_id, who=principal.label)


@requires(Role.editor)
def export_graph_edits(principal: Principal, ws: Workspace) -> str:
    """The active edits as JSON, for ``import_graph_edits`` on a workspace built from the same documents."""
    from core.editing.log import export_log

    return export_log(ws)


@requires(Role.editor)
def import_graph_edits(principal: Principal, ws: Workspace, text: str | bytes) -> EditImportReport:
    """Apply an exported edit log; edits whose targets do not exist here are reported, not dropped silently."""
    from core.editing.log import import_log

    return import_log(ws, text, who=principal.label)


@requires(Role.editor)
def merge_suggestions(principal: Principal, ws: Workspace, top: int = 50) -> list[MergeSuggestion]:
    """The ``top`` ranked candidate duplicates, each with its evidence; dismissed pairs left out."""
    from core.editing.suggest import suggestions

    return suggestions(ws, max(1, min(int(top), 500)))


@requires(Role.editor)
def dismiss_merge_suggestion(principal: Principal, ws: Workspace, a: str, b: str, restore: bool = False) -> int:
    """Remember that ``a`` and ``b`` are not one thing (``restore``: forget it); the number of dismissed
    pairs. Takes the writer lock."""
    from core.editing.suggest import dismiss

    return len(dismiss(ws, a, b, restore))


@requires(Role.editor)
def evaluate_edits(principal: Principal, ws: Workspace, questions: list[Question], modes: Sequence[str], since: int,
                   ks: Sequence[int] = (2, 5, 10), settings: Optional[Settings] = None,
                   keywords: Any = None) -> EditImpact:
    """What the edits numbered ``since`` and later changed: the questions evaluated on a copy of the
    workspace with those edits undone (before) and on the workspace (after), per mode, with the questions
    whose evidence or answer changed. Two evaluations, in one heavy work slot."""
    from core.api.evaluation import check_question_count
    from core.editing.impact import compare

    check_question_count(ws, len(questions))
    with slots().slot(heavy=True):
        return compare(ws, questions, modes, since, ks, settings=settings, keywords=keywords)


@requires(Role.editor)
def edit_question_diff(principal: Principal, ws: Workspace, question: str, modes: Sequence[str],
                       since: Optional[int] = None, top: int = 10, settings: Optional[Settings] = None,
                       keywords: Any = None) -> QuestionDiff:
    """One question before edit ``since`` (default: the last active edit) → after, per mode: the evidence
    chunks, entities, relations and paths that entered or left the top ``top``, and the extractive answers
    (``core.editing.question_diff``; the "before" side is a copy, kept for the next question)."""
    from core.editing.question_diff import question_before_after
    from core.errors import MAX_QUESTION_CHARS, check_length

    check_length(question, MAX_QUESTION_CHARS, "question")
    with slots().slot(heavy=True):
        return question_before_after(ws, question, modes, since, max(1, min(int(top), 100)), settings=settings,
                                     keywords=keywords)


@requires(Role.editor)
def junk_suggestions(principal: Principal, ws: Workspace, top: int = 50, include_weak: bool = False) -> list[JunkNode]:
    """The ``top`` entities that look like extraction junk (``core.editing.junk``), each with its reasons;
    ``include_weak`` also lists those whose only reason is "isolated" (no relation, one mention)."""
    from core.editing.junk import suggestions

    return suggestions(ws, max(1, min(int(top), 1000)), include_weak)


@requires(Role.editor)
def dismiss_junk(principal: Principal, ws: Workspace, name: str, restore: bool = False) -> int:
    """Remember that ``name`` is not junk (``restore``: forget it); the number of dismissed entities. Takes
    the writer lock."""
    from core.editing.junk import dismiss

    return len(dismiss(ws, name, restore))


@requires(Role.editor)
def delete_entities(principal: Principal, ws: Workspace, names: Sequence[str]) -> tuple[list[int], list[tuple[str, str]]]:
    """Delete several entities in one step, one logged ``delete_entity`` edit each (so each stays deleted
    through re-indexing and can be undone alone); the edit ids and the (name, reason) of those refused."""
    from core.editing.junk import delete_all

    if len(names) > 1000:
        raise ValueError("at most 1,000 entities in one step")
    return delete_all(ws, list(names), who=principal.label)
