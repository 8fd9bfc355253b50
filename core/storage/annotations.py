"""Analyst annotations kept in the workspace database: questions, an optional expected answer, and
retrieved chunks marked relevant or not relevant.

A question is identified by ``question_id`` (``ann:`` + a hash of its whitespace-normalised text), so
marking the same question from Inspect and from Compare adds to one record. Every read and write uses
a short-lived private connection to the workspace file: the app may be indexing on a background
thread with the workspace's own connection inside a transaction, and an annotation must neither join
nor wait for that transaction's fate. Deleting a document drops its marks in the deletion's own
transaction (``drop_document_annotations``).
"""

import hashlib
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Mapping, Optional, Sequence, cast

from core.storage.schema import ANNOTATION_SCHEMA

if TYPE_CHECKING:
    from core.storage.store import Store
    from core.workspace import Workspace

MAX_QUESTION_CHARS = 4000
MAX_ANSWER_CHARS = 2000


@dataclass
class Mark:
    """One chunk judged for one question."""

    chunk_id: str
    doc_id: str
    relevant: bool
    mode: str = ""
    created_at: float = 0.0


@dataclass
class AnnotatedQuestion:
    """A question with its expected answer ('' when none) and its marks (relevant first, then by time)."""

    qid: str
    question: str
    answer: str = ""
    marks: list[Mark] = field(default_factory=list)
    updated_at: float = 0.0

    @property
    def relevant(self) -> list[Mark]:
        return [m for m in self.marks if m.relevant]

    @property
    def not_relevant(self) -> list[Mark]:
        return [m for m in self.marks if not m.relevant]

    @property
    def gold_doc_ids(self) -> list[str]:
        """Documents holding at least one chunk marked relevant, in marking order."""
        return list(dict.fromkeys(m.doc_id for m in self.relevant))


def normalize_question(question: str) -> str:
    return " ".join(str(question or "").split())


def question_id(question: str) -> str:
    """The stable id of a question: ``ann:`` + 12 hex digits of the sha1 of its normalised text."""
    text = normalize_question(question)
    return "ann:" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def _db_path(ws: "Workspace") -> Path:
    return Path(cast("Store", ws.store).path)


@contextmanager
def connection(ws: "Workspace", write: bool = False) -> Iterator[sqlite3.Connection]:
    """A private connection; with ``write`` one IMMEDIATE transaction committed at the end."""
    opener = getattr(getattr(ws, "backend", None), "annotation_connection", None)
    if opener is not None:  # a backend with its own connections (PostgreSQL)
        with opener(write) as conn:
            yield conn
        return
    conn = sqlite3.connect(str(_db_path(ws)), timeout=30)
    try:
        conn.execute("PRAGMA busy_timeout=30000")
        if write:
            conn.executescript(ANNOTATION_SCHEMA)
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.rollback()
                raise
            conn.commit()
        else:
            yield conn
    finally:
        conn.close()


def clean_question(question: str) -> str:
    text = normalize_question(question)
    if not text:
        raise ValueError("an annotation needs a question")
    if len(text) > MAX_QUESTION_CHARS:
        raise ValueError(f"the question is longer than {MAX_QUESTION_CHARS} characters")
    return text


def upsert_question(conn: sqlite3.Connection, qid: str, question: str, answer: Optional[str], now: float) -> None:
    conn.execute("INSERT INTO annotation_questions(qid, question, answer, created_at, updated_at) "
                 "VALUES (?, ?, '', ?, ?) ON CONFLICT(qid) DO UPDATE SET updated_at = excluded.updated_at",
                 (qid, question, now, now))
    if answer is not None:
        conn.execute("UPDATE annotation_questions SET answer=? WHERE qid=?", (answer.strip()[:MAX_ANSWER_CHARS], qid))


def prune(conn: sqlite3.Connection) -> int:
    """Drop questions left with no mark and no expected answer."""
    return conn.execute("DELETE FROM annotation_questions WHERE answer = '' AND qid NOT IN "
                        "(SELECT DISTINCT qid FROM annotations)").rowcount


def save_marks(ws: "Workspace", question: str, marks: Mapping[str, Optional[bool]], mode: str | Mapping[str, str] = "",
               answer: Optional[str] = None) -> AnnotatedQuestion:
    """Set the marks of one question in one transaction: ``{chunk_id: True (relevant) | False (not
    relevant) | None (unmark)}``; ``mode`` names the mode(s) whose result was read, for all chunks or per
    chunk id; ``answer`` (when not None) replaces the expected answer. Unknown chunk ids raise ValueError
    and nothing is written. Returns the question as stored."""
    text = clean_question(question)
    qid = question_id(text)
    now = time.time()
    with connection(ws, write=True) as conn:
        wanted = [c for c, v in marks.items() if v is not None]
        docs = chunk_docs(conn, wanted)
        unknown = [c for c in wanted if c not in docs]
        if unknown:
            raise ValueError(f"{len(unknown)} chunk(s) are not in this workspace (deleted or re-indexed?): "
                             f"{', '.join(unknown[:3])}")
        upsert_question(conn, qid, text, answer, now)
        for chunk_id, value in marks.items():
            if value is None:
                conn.execute("DELETE FROM annotations WHERE qid=? AND chunk_id=?", (qid, chunk_id))
            else:
                write_mark(conn, qid, chunk_id, docs[chunk_id], bool(value),
                           mode if isinstance(mode, str) else mode.get(chunk_id, ""), now)
        prune(conn)
    return annotation_for(ws, text) or AnnotatedQuestion(qid, text)


def write_mark(conn: sqlite3.Connection, qid: str, chunk_id: str, doc_id: str, relevant: bool, mode: str,
               now: float, keep_mode: bool = False) -> None:
    """Insert or update one mark (``keep_mode``: an existing mark keeps the mode it was made in)."""
    update_mode = "" if keep_mode else "mode = excluded.mode, "
    conn.execute("INSERT INTO annotations(qid, chunk_id, doc_id, relevant, mode, created_at) VALUES (?, ?, ?, ?, ?, ?) "
                 f"ON CONFLICT(qid, chunk_id) DO UPDATE SET relevant = excluded.relevant, {update_mode}"
                 "created_at = excluded.created_at", (qid, chunk_id, doc_id, int(relevant), mode, now))


def chunk_docs(conn: sqlite3.Connection, chunk_ids: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    ids = list(dict.fromkeys(chunk_ids))
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        rows = conn.execute(f"SELECT chunk_id, doc_id FROM chunks WHERE chunk_id IN ({','.join('?' * len(part))})",
                            part)
        out.update({str(c): str(d) for c, d in rows})
    return out


def _read(conn: sqlite3.Connection, where: str = "", args: tuple = ()) -> list[AnnotatedQuestion]:
    try:
        questions = conn.execute(f"SELECT qid, question, answer, updated_at FROM annotation_questions {where} "
                                 "ORDER BY created_at, qid", args).fetchall()
        rows = conn.execute("SELECT qid, chunk_id, doc_id, relevant, mode, created_at FROM annotations "
                            "ORDER BY relevant DESC, created_at, chunk_id").fetchall()
    except sqlite3.OperationalError:  # an older workspace opened read-only: no annotation tables yet
        return []
    marks: dict[str, list[Mark]] = {}
    for qid, chunk_id, doc_id, relevant, mode, created in rows:
        marks.setdefault(qid, []).append(Mark(chunk_id, doc_id, bool(relevant), mode, float(created)))
    return [AnnotatedQuestion(qid, question, answer, marks.get(qid, []), float(updated))
            for qid, question, answer, updated in questions]


def annotations(ws: "Workspace") -> list[AnnotatedQuestion]:
    """Every annotated question of the workspace, oldest first."""
    with connection(ws) as conn:
        return _read(conn)


def annotation_for(ws: "Workspace", question: str) -> Optional[AnnotatedQuestion]:
    """The stored annotation of one question, or None."""
    with connection(ws) as conn:
        found = _read(conn, "WHERE qid=?", (question_id(question),))
    return found[0] if found else None


def delete_questions(ws: "Workspace", qids: Sequence[str]) -> int:
    """Delete questions and all their marks; returns how many questions were deleted."""
    with connection(ws, write=True) as conn:
        deleted = 0
        for qid in dict.fromkeys(qids):
            conn.execute("DELETE FROM annotations WHERE qid=?", (qid,))
            deleted += conn.execute("DELETE FROM annotation_questions WHERE qid=?", (qid,)).rowcount
    return deleted


def drop_document_annotations(conn: sqlite3.Connection, doc_id: str) -> int:
    """Inside the caller's transaction (document deletion): drop the marks on the document's chunks and the
    questions left with neither a mark nor an expected answer. Returns the marks dropped."""
    try:
        dropped = conn.execute("DELETE FROM annotations WHERE doc_id=?", (doc_id,)).rowcount
    except sqlite3.OperationalError:  # no annotation tables in this database yet
        return 0
    if dropped:
        prune(conn)
    return int(dropped)
