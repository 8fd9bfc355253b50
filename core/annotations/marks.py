"""Marking retrieved chunks relevant or not relevant for a question, in one workspace: the calls the
pages, the API and the CLI use. They go through ``Workspace.annotations`` (the ``AnnotationStore`` port);
the storage side (``core.storage.annotations``) knows nothing of the workspace. (No ``from __future__
import annotations`` here: ``annotations`` is one of the functions.)"""
import time
from typing import TYPE_CHECKING, Mapping, Optional, Sequence

from core.storage.annotations import clean_question, question_id
from core.storage.ports import AnnotationStore
from core.storage.records import AnnotatedQuestion

if TYPE_CHECKING:
    from core.workspace import Workspace


def _store(ws: "Workspace") -> AnnotationStore:
    return ws.annotations


def save_marks(ws: "Workspace", question: str, marks: Mapping[str, Optional[bool]], mode: str | Mapping[str, str] = "",
               answer: Optional[str] = None) -> AnnotatedQuestion:
    """Set the marks of one question in one transaction: ``{chunk_id: True (relevant) | False (not
    relevant) | None (unmark)}``; ``mode`` names the mode(s) whose result was read, for all chunks or per
    chunk id; ``answer`` (when not None) replaces the expected answer. Unknown chunk ids raise ValueError
    and nothing is written. Returns the question as stored."""
    text = clean_question(question)
    qid = question_id(text)
    now = time.time()
    marks_store = _store(ws)
    with marks_store.edit() as edit:
        wanted = [c for c, v in marks.items() if v is not None]
        docs = edit.chunk_docs(wanted)
        unknown = [c for c in wanted if c not in docs]
        if unknown:
            raise ValueError(f"{len(unknown)} chunk(s) are not in this workspace (deleted or re-indexed?): "
                             f"{', '.join(unknown[:3])}")
        edit.upsert_question(qid, text, answer, now)
        for chunk_id, value in marks.items():
            if value is None:
                edit.delete_mark(qid, chunk_id)
            else:
                edit.write_mark(qid, chunk_id, docs[chunk_id], bool(value),
                                mode if isinstance(mode, str) else mode.get(chunk_id, ""), now)
        edit.prune()
    found = marks_store.questions(qid)
    return found[0] if found else AnnotatedQuestion(qid, text)


def annotations(ws: "Workspace") -> list[AnnotatedQuestion]:
    """Every annotated question of the workspace, oldest first."""
    return _store(ws).questions()


def annotation_for(ws: "Workspace", question: str) -> Optional[AnnotatedQuestion]:
    """The stored annotation of one question, or None."""
    found = _store(ws).questions(question_id(question))
    return found[0] if found else None


def delete_questions(ws: "Workspace", qids: Sequence[str]) -> int:
    """Delete questions and all their marks; returns how many questions were deleted."""
    with _store(ws).edit() as edit:
        return sum(edit.delete_question(qid) for qid in dict.fromkeys(qids))
