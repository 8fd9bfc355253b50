"""The positions half of the SQL ``RecordStore``: where a document's pages, section headings and lines
start in its text (``doc_positions``) and the uploaded original kept for the source viewer
(``doc_files``), mixed into ``core.storage.store.SqlRecordStore``; statements in SQLAlchemy Core, the
same on both backends.

Lines are not stored one row each: a document cited by line keeps one ``line`` row (line 1 at 0), and
its line starts are computed from its stored text when positions are read (``core.citations.line_starts``),
remembered per content hash in a bounded cache so a workspace's answers do not re-read the same text.
Rows of the older layout (one per line) are ignored by the read and deleted by the schema 10 upgrade.
"""
from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from sqlalchemy import BindParameter, bindparam, delete, func, insert, or_, select

from core.citations import DocPositions, heading_title, line_starts
from core.storage import schema as s

if TYPE_CHECKING:
    from core.storage.sql_connection import SqlConnection

BATCH = 900  # keys per IN (...) list
HEADING_READ = 200  # characters of the stored text read at a section's start for its heading
PLACED_SUFFIXES = (".pdf", ".txt", ".md", ".markdown", ".htm", ".docx")  # ".htm" matches ".html" too
LINE_CACHE_LINES = 2_000_000  # line starts remembered across documents (8 bytes each: 16 MB at most)

_d, _p, _f = s.documents, s.doc_positions, s.doc_files
_DOC: BindParameter[str] = bindparam("doc")
_IDS: BindParameter[list[str]] = bindparam("ids", expanding=True)
_PAGE_STARTS = select(_p.c.doc_id, _p.c.start_char).where(_p.c.kind == "page", _p.c.doc_id.in_(_IDS)).order_by(
    _p.c.doc_id, _p.c.ord)
_POSITIONS = select(_p.c.doc_id, _p.c.kind, _p.c.start_char).where(
    _p.c.doc_id.in_(_IDS), or_(_p.c.kind != "line", _p.c.ord == 1)).order_by(_p.c.doc_id, _p.c.kind, _p.c.ord)
_HEADINGS = select(_p.c.doc_id, _p.c.start_char, func.substr(_d.c.text, _p.c.start_char + 1, HEADING_READ)).join(
    _d, _d.c.doc_id == _p.c.doc_id).where(_p.c.kind == "section", _p.c.doc_id.in_(_IDS)).order_by(_p.c.doc_id, _p.c.ord)
_HASHES = select(_d.c.doc_id, _d.c.content_hash).where(_d.c.doc_id.in_(_IDS))
_TEXTS = select(_d.c.doc_id, _d.c.content_hash, _d.c.text).where(_d.c.doc_id.in_(_IDS))


class LineStartsCache:
    """Line starts of document texts by content hash, least recently used dropped first once more than
    ``limit`` line starts are held. Thread-safe (every thread's store shares the process's cache)."""

    def __init__(self, limit: int = LINE_CACHE_LINES) -> None:
        self.limit = limit
        self._held: OrderedDict[str, array] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> Optional[Sequence[int]]:
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
            return found

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._size = 0

    def put(self, key: str, text: str) -> Sequence[int]:
        starts = array("q", line_starts(text))
        with self._lock:
            if key and key not in self._held and len(starts) <= self.limit:
                self._held[key] = starts
                self._size += len(starts)
                while self._size > self.limit:
                    self._size -= len(self._held.popitem(last=False)[1])
        return starts


LINE_STARTS = LineStartsCache()


class PositionRows:
    """Mixed into ``core.storage.store.SqlRecordStore`` (which provides ``db``)."""

    db: "SqlConnection"

    def set_original(self, doc_id: str, name: str, data: bytes) -> bool:
        """Keep the uploaded file of ``doc_id`` for the source viewer (replacing any kept one); a file
        over ``ORIGINAL_MAX_BYTES`` is not kept. Returns whether it was kept."""
        self.db.execute(delete(_f).where(_f.c.doc_id == _DOC), {"doc": doc_id})
        if not data or len(data) > s.ORIGINAL_MAX_BYTES:
            return False
        self.db.execute(insert(_f), {"doc_id": doc_id, "name": name, "data": bytes(data)})
        return True

    def original(self, doc_id: str) -> Optional[bytes]:
        """The kept uploaded file of ``doc_id`` (None: none kept)."""
        rows = self.db.rows(select(_f.c.data).where(_f.c.doc_id == _DOC), {"doc": doc_id})
        return bytes(rows[0][0]) if rows else None

    def set_page_starts(self, doc_id: str, starts: Iterable[int]) -> None:
        """Record where each page (1-based, in order) of ``doc_id`` starts in its text."""
        self.set_positions(doc_id, "page", starts)

    def set_positions(self, doc_id: str, kind: str, starts: Iterable[int]) -> None:
        """Record where each ``kind`` (``page``, ``section`` heading or ``line``; 1-based, in order) of
        ``doc_id`` starts in its text, replacing that kind's earlier rows. For ``line`` only the first
        start is stored: the others are computed from the stored text when read."""
        self.db.execute(delete(_p).where(_p.c.doc_id == _DOC, _p.c.kind == bindparam("kind")),
                        {"doc": doc_id, "kind": kind})
        rows = [{"doc_id": doc_id, "kind": kind, "ord": n, "start_char": int(at)} for n, at in enumerate(starts, 1)]
        if rows:
            self.db.execute_many(insert(_p), rows[:1] if kind == "line" else rows)

    def page_starts(self, doc_ids: Iterable[str]) -> dict[str, list[int]]:
        """The page offsets of each of ``doc_ids`` that has pages (documents without pages are absent).
        One query per ``BATCH`` documents: every retrieval result reads it for the citations of its hits."""
        ids = list(dict.fromkeys(doc_ids))
        out: dict[str, list[int]] = {}
        for start in range(0, len(ids), BATCH):
            for doc_id, at in self.db.rows(_PAGE_STARTS, {"ids": ids[start:start + BATCH]}):
                out.setdefault(doc_id, []).append(int(at))
        return out

    def positions(self, doc_ids: Iterable[str]) -> dict[str, DocPositions]:
        """The pages, sections (with their headings, read from the stored text) and lines (computed
        from the stored text) of each of ``doc_ids`` that has any (documents without positions are
        absent). Per ``BATCH`` documents: one query for the rows, one for the headings of those with
        sections, one for the content hashes of those cited by line and one for the texts whose line
        starts are not cached. Every answer reads it."""
        ids = list(dict.fromkeys(doc_ids))
        found: dict[str, dict[str, list[int]]] = {}
        for start in range(0, len(ids), BATCH):
            for doc_id, kind, at in self.db.rows(_POSITIONS, {"ids": ids[start:start + BATCH]}):
                found.setdefault(str(doc_id), {}).setdefault(str(kind), []).append(int(at))
        heads: dict[str, list[tuple[int, str]]] = {}
        for part in _parts([d for d, kinds in found.items() if kinds.get("section")]):
            for doc_id, at, text in self.db.rows(_HEADINGS, {"ids": part}):
                heads.setdefault(str(doc_id), []).append((int(at), heading_title(str(text or ""))))
        lines = self._line_starts([d for d, kinds in found.items() if kinds.get("line")])
        return {d: DocPositions(kinds.get("page", []), heads.get(d, []), lines.get(d, ()), "kept" in kinds)
                for d, kinds in found.items()}

    def _line_starts(self, doc_ids: list[str]) -> dict[str, Sequence[int]]:
        """Line starts of ``doc_ids`` from the cache by content hash, the texts read only for the rest."""
        out: dict[str, Sequence[int]] = {}
        for part in _parts(doc_ids):
            missing = []
            for doc_id, digest in self.db.rows(_HASHES, {"ids": part}):
                cached = LINE_STARTS.get(str(digest or ""))
                if cached is None:
                    missing.append(doc_id)
                else:
                    out[str(doc_id)] = cached
            for start in range(0, len(missing), 20):  # texts read 20 at a time: a text may be megabytes
                for doc_id, digest, text in self.db.rows(_TEXTS, {"ids": missing[start:start + 20]}):
                    out[str(doc_id)] = LINE_STARTS.put(str(digest or ""), str(text or ""))
        return out

    def position_gaps(self) -> tuple[list[str], list[str]]:
        """Names of the indexed PDF, text, Markdown, HTML and DOCX documents without any position row
        (indexed before positions were kept: a file parsed since has its pages, lines, sections or, for
        an HTML or DOCX file without headings, its ``kept`` row), and of the documents with a chunk
        whose span is unknown (not found in the document's text)."""
        with_places = select(_p.c.doc_id)
        names = func.lower(_d.c.name + " " + _d.c.source)
        placed = or_(*(names.like(f"%{suffix}%") for suffix in PLACED_SUFFIXES))
        pdfs = self.db.rows(select(_d.c.name).where(placed, ~names.like("%.jsonl%"), _d.c.status == "processed",
                                                    _d.c.doc_id.not_in(with_places)).order_by(_d.c.name))
        unknown = select(s.chunks.c.doc_id).where(s.chunks.c.start_char < 0).distinct()
        spans = self.db.rows(select(_d.c.name).where(_d.c.doc_id.in_(unknown)).order_by(_d.c.name))
        return [str(r[0]) for r in pdfs], [str(r[0]) for r in spans]


def _parts(ids: list[str]) -> Iterable[list[str]]:
    return (ids[start:start + BATCH] for start in range(0, len(ids), BATCH))
