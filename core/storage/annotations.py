"""Analyst annotations kept in the workspace's system of record: questions, an optional expected answer,
and retrieved chunks marked relevant or not relevant.

A question is identified by ``question_id`` (``ann:`` + a hash of its whitespace-normalised text), so
marking the same question from Inspect and from Compare adds to one record.

``SqlAnnotationStore`` is the ``AnnotationStore`` port (``core.storage.ports``) of both backends: the
statements are shared (SQLAlchemy Core, each dialect's own upsert), the backend gives it a way to open
a short-lived private connection. The app may be indexing on a background thread with the workspace's
own connection inside a unit of work, and an annotation must neither join nor wait for that unit's
fate. Deleting a document drops its marks in the deletion's own unit of work
(``drop_document_annotations``).

What callers use (``save_marks``, ``annotations``, ``annotation_for``, ``delete_questions``) is in
``core.annotations``, which reaches the store through ``Workspace.annotations``: this module knows
nothing of the workspace.
"""

import hashlib
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, Sequence

from sqlalchemy import bindparam, delete, select, update

from core.storage import schema as s
from core.storage.records import AnnotatedQuestion, Mark
from core.storage.sql_connection import SqlConnection
from core.storage.upserts import upsert

__all__ = ["SqlAnnotationStore", "SqlAnnotationWriter", "clean_question", "drop_document_annotations",
           "normalize_question", "private_connection", "question_id"]

MAX_QUESTION_CHARS = 4000
MAX_ANSWER_CHARS = 2000


def normalize_question(question: str) -> str:
    return " ".join(str(question or "").split())


def question_id(question: str) -> str:
    """The stable id of a question: ``ann:`` + 12 hex digits of the sha1 of its normalised text."""
    text = normalize_question(question)
    return "ann:" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def clean_question(question: str) -> str:
    text = normalize_question(question)
    if not text:
        raise ValueError("an annotation needs a question")
    if len(text) > MAX_QUESTION_CHARS:
        raise ValueError(f"the question is longer than {MAX_QUESTION_CHARS} characters")
    return text


_q, _a = s.annotation_questions, s.annotation_marks
_UNUSED_QUESTIONS = delete(_q).where(_q.c.answer == "", _q.c.qid.not_in(select(_a.c.qid).distinct()))


@contextmanager
def private_connection(open_connection: Callable[[], SqlConnection], write: bool = False,
                       prepare: Optional[Callable[[SqlConnection], None]] = None) -> Iterator[SqlConnection]:
    """A connection of its own, closed at the end; with ``write`` one transaction (SQLite takes its write
    lock at once), committed when the block ends and rolled back when it raises. ``prepare`` runs first
    on a writing connection (schema)."""
    conn = open_connection()
    try:
        if not write:
            yield conn
            return
        if prepare is not None:
            prepare(conn)
        conn.begin(immediate=True)
        try:
            yield conn
        except BaseException:
            conn.rollback()
            raise
        conn.commit()
    finally:
        conn.close()


def _prune(conn: SqlConnection) -> int:
    return int(conn.execute(_UNUSED_QUESTIONS).rowcount)


class SqlAnnotationWriter:
    """The writes of one annotation transaction (``core.storage.ports.AnnotationWriter``)."""

    def __init__(self, conn: SqlConnection) -> None:
        self.conn = conn

    def chunk_docs(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        ids = list(dict.fromkeys(chunk_ids))
        chunks = s.chunks.c
        query = select(chunks.chunk_id, chunks.doc_id).where(chunks.chunk_id.in_(bindparam("ids", expanding=True)))
        for start in range(0, len(ids), 500):
            rows = self.conn.execute(query, {"ids": ids[start:start + 500]})
            out.update({str(c): str(d) for c, d in rows})
        return out

    def upsert_question(self, qid: str, question: str, answer: Optional[str], now: float) -> None:
        self.conn.execute(upsert(self.conn.dialect, _q, replaced=("updated_at",)),
                          {"qid": qid, "question": question, "answer": "", "created_at": now, "updated_at": now})
        if answer is not None:
            self.conn.execute(update(_q).where(_q.c.qid == qid).values(answer=answer.strip()[:MAX_ANSWER_CHARS]))

    def write_mark(self, qid: str, chunk_id: str, doc_id: str, relevant: bool, mode: str, now: float,
                   keep_mode: bool = False) -> None:
        replaced = ("relevant", "created_at") if keep_mode else ("relevant", "mode", "created_at")
        self.conn.execute(upsert(self.conn.dialect, _a, replaced=replaced),
                          {"qid": qid, "chunk_id": chunk_id, "doc_id": doc_id, "relevant": int(relevant),
                           "mode": mode, "created_at": now})

    def delete_mark(self, qid: str, chunk_id: str) -> None:
        self.conn.execute(delete(_a).where(_a.c.qid == qid, _a.c.chunk_id == chunk_id))

    def delete_question(self, qid: str) -> int:
        self.conn.execute(delete(_a).where(_a.c.qid == qid))
        return int(self.conn.execute(delete(_q).where(_q.c.qid == qid)).rowcount)

    def prune(self) -> int:
        return _prune(self.conn)


class SqlAnnotationStore:
    """``AnnotationStore`` over the shared annotation statements; ``open_connection`` gives a new private
    ``SqlConnection`` per call; ``prepare`` runs on a writing connection before its transaction;
    ``missing_tables`` are the errors a database without the annotation tables raises on a read (it
    reads as empty)."""

    def __init__(self, open_connection: Callable[[], SqlConnection],
                 prepare: Optional[Callable[[SqlConnection], None]] = None,
                 missing_tables: tuple[type[BaseException], ...] = ()) -> None:
        self.open_connection = open_connection
        self.prepare = prepare
        self.missing_tables = missing_tables

    def questions(self, qid: Optional[str] = None) -> list[AnnotatedQuestion]:
        question_rows = select(_q.c.qid, _q.c.question, _q.c.answer, _q.c.updated_at).order_by(_q.c.created_at,
                                                                                                _q.c.qid)
        mark_rows = select(_a.c.qid, _a.c.chunk_id, _a.c.doc_id, _a.c.relevant, _a.c.mode, _a.c.created_at
                           ).order_by(_a.c.relevant.desc(), _a.c.created_at, _a.c.chunk_id)
        if qid is not None:
            question_rows, mark_rows = question_rows.where(_q.c.qid == qid), mark_rows.where(_a.c.qid == qid)
        with private_connection(self.open_connection) as conn:
            try:
                questions = conn.execute(question_rows).all()
                rows = conn.execute(mark_rows).all()
            except self.missing_tables:
                return []
        marks: dict[str, list[Mark]] = {}
        for q, chunk_id, doc_id, relevant, mode, created in rows:
            marks.setdefault(q, []).append(Mark(chunk_id, doc_id, bool(relevant), mode, float(created)))
        return [AnnotatedQuestion(q, question, answer, marks.get(q, []), float(updated))
                for q, question, answer, updated in questions]

    @contextmanager
    def edit(self) -> Iterator[SqlAnnotationWriter]:
        with private_connection(self.open_connection, write=True, prepare=self.prepare) as conn:
            yield SqlAnnotationWriter(conn)


def drop_document_annotations(conn: SqlConnection, doc_id: str) -> int:
    """Inside the caller's transaction (document deletion): drop the marks on the document's chunks and the
    questions left with neither a mark nor an expected answer. Returns the marks dropped."""
    dropped = int(conn.execute(delete(_a).where(_a.c.doc_id == doc_id)).rowcount)
    if dropped:
        _prune(conn)
    return dropped
