"""``core.api`` functions for analysts' annotations: chunks marked relevant or not for a question (and an
expected answer), stored in the workspace (``core.annotations``), exported and imported as question files.

* viewer — ``annotation_for``, ``annotation_list``, ``export_annotations``, ``question_id``;
* editor — ``save_annotation_marks``, ``delete_annotations``, ``import_annotations``.

Re-exported by ``core.api``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Optional

from core.auth import Principal, Role, requires
from core.storage.records import AnnotatedQuestion
from core.workspace import Workspace

if TYPE_CHECKING:
    from core.annotations.exchange import ImportReport as AnnotationImportReport


@requires(Role.viewer)
def annotation_for(principal: Principal, ws: Workspace, question: str) -> Optional[AnnotatedQuestion]:
    """The stored annotation of one question (its marks and expected answer), or None."""
    from core.annotations import annotation_for as find

    return find(ws, question)


@requires(Role.viewer)
def annotation_list(principal: Principal, ws: Workspace) -> list[AnnotatedQuestion]:
    """Every annotated question of the workspace, oldest first."""
    from core.annotations import annotations as all_annotations

    return all_annotations(ws)


@requires(Role.viewer)
def question_id(principal: Principal, question: str) -> str:
    """The stable id a question's annotation is stored under (``ann:`` + a hash of its normalised text)."""
    from core.annotations import question_id as stable_id

    return stable_id(question)


@requires(Role.viewer)
def export_annotations(principal: Principal, ws: Workspace) -> str:
    """The annotations as a JSONL question file."""
    from core.annotations import export_jsonl

    return export_jsonl(ws)


@requires(Role.editor)
def save_annotation_marks(principal: Principal, ws: Workspace, question: str, marks: Mapping[str, Optional[bool]],
                          mode: str | Mapping[str, str] = "", answer: str = "") -> AnnotatedQuestion:
    """Set one question's marks ({chunk id: True relevant | False not relevant | None unmark}) and its
    expected answer; ``mode``: the mode(s) whose result was read, for all chunks or per chunk."""
    from core.annotations import save_marks

    return save_marks(ws, question, dict(marks), mode=mode, answer=answer)


@requires(Role.editor)
def delete_annotations(principal: Principal, ws: Workspace, qids: list[str]) -> int:
    """Delete questions and all their marks; how many were deleted."""
    from core.annotations import delete_questions

    return delete_questions(ws, qids)


@requires(Role.editor)
def import_annotations(principal: Principal, ws: Workspace, lines: Iterable[str],
                       source: str = "annotations") -> AnnotationImportReport:
    """Load marks and expected answers from question-file lines (``core.annotations.exchange``)."""
    from core.annotations import import_records

    return import_records(ws, lines, source)
