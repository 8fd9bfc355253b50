"""Annotations to and from question files in the shared FORMAT.md layout.

Export: one JSONL line per annotated question — ``qid``, ``question``, ``answer`` (the expected answer,
or null), ``answer_aliases`` [], ``question_type`` "annotation", ``hops`` null, ``gold_doc_ids`` (the
documents holding a chunk marked relevant), ``evidence`` [{doc_id, chunk_id, text}] (the relevant
chunks) and ``meta`` {source, workspace, not_relevant [{doc_id, chunk_id}], modes, doc_names}.
``python -m core eval`` and the Evaluate page read such a file as it is.

Import: the same shape (marks come from ``evidence[].chunk_id`` and ``meta.not_relevant[].chunk_id``;
chunks this workspace does not hold are skipped and reported). Every line is checked before anything
is written, and the whole file is written in one transaction: a bad file changes nothing.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Optional

from core.evaluation.questions import question_records
from core.annotations.marks import annotations as all_annotations
from core.storage.annotations import MAX_ANSWER_CHARS, clean_question, question_id

if TYPE_CHECKING:
    from core.workspace import Workspace

QUESTION_TYPE = "annotation"
SOURCE = "RAGScope annotations"


def export_records(ws: Workspace) -> list[dict[str, Any]]:
    """The workspace's annotations as question records (see the module docstring)."""
    items = all_annotations(ws)
    chunk_ids = [m.chunk_id for q in items for m in q.relevant]
    chunks = ws.records.chunks_by_id(chunk_ids) if chunk_ids else {}
    names = ws.doc_names()
    records = []
    for q in items:
        evidence = [{"doc_id": m.doc_id, "chunk_id": m.chunk_id,
                     "text": chunks[m.chunk_id].text if m.chunk_id in chunks else ""} for m in q.relevant]
        docs = list(dict.fromkeys([*q.gold_doc_ids, *(m.doc_id for m in q.not_relevant)]))
        records.append({
            "qid": q.qid, "question": q.question, "answer": q.answer or None, "answer_aliases": [],
            "question_type": QUESTION_TYPE, "hops": None, "gold_doc_ids": q.gold_doc_ids, "evidence": evidence,
            "meta": {"source": SOURCE, "workspace": getattr(ws, "name", ""),
                     "not_relevant": [{"doc_id": m.doc_id, "chunk_id": m.chunk_id} for m in q.not_relevant],
                     "modes": sorted({m.mode for m in q.marks if m.mode}),
                     "doc_names": {d: names.get(d, "") for d in docs}},
        })
    return records


def export_jsonl(ws: Workspace) -> str:
    """The export as JSONL text (one record per line, UTF-8 kept)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in export_records(ws))


def write_export(ws: Workspace, path: Path) -> int:
    """Write the export to ``path`` (atomically); returns the number of questions."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = export_jsonl(ws)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return text.count("\n")


@dataclass
class ImportReport:
    """What an import did: questions written, marks written, and why anything was skipped."""

    questions: int = 0
    marks: int = 0
    skipped: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"questions": self.questions, "marks": self.marks, "skipped": list(self.skipped)}


@dataclass
class _Parsed:
    line: int
    question: str
    answer: Optional[str]
    marks: dict[str, bool]


def _chunk_ids(entries: Any, where: str) -> list[str]:
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ValueError(f"{where} must be a list")
    return [str(e["chunk_id"]) for e in entries if isinstance(e, dict) and e.get("chunk_id")]


def parse_records(lines: Iterable[str], source: str = "annotations") -> list[_Parsed]:
    """Check every line; a malformed one raises ValueError naming the line (nothing is written)."""
    parsed: list[_Parsed] = []
    for number, raw in question_records(lines, source):
        try:
            question = clean_question(str(raw["question"]))
        except ValueError as exc:
            raise ValueError(f"{source} line {number}: {exc}") from None
        answer = raw.get("answer")
        if answer is not None and not isinstance(answer, (str, int, float)):
            raise ValueError(f"{source} line {number}: \"answer\" must be text or null")
        raw_meta = raw.get("meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        try:
            relevant = _chunk_ids(raw.get("evidence"), "\"evidence\"")
            not_relevant = _chunk_ids(meta.get("not_relevant"), "\"meta.not_relevant\"")
        except ValueError as exc:
            raise ValueError(f"{source} line {number}: {exc}") from None
        marks = {c: False for c in not_relevant} | {c: True for c in relevant}  # relevant wins a conflict
        parsed.append(_Parsed(number, question, None if answer is None else str(answer)[:MAX_ANSWER_CHARS], marks))
    if not parsed:
        raise ValueError(f"{source} contains no questions")
    return parsed


def import_records(ws: Workspace, lines: Iterable[str], source: str = "annotations") -> ImportReport:
    """Load marks and expected answers from question lines (see the module docstring)."""
    parsed = parse_records(list(lines), source)
    report = ImportReport()
    now = time.time()
    with ws.annotations.edit() as edit:
        docs = edit.chunk_docs([c for p in parsed for c in p.marks])
        for p in parsed:
            missing = [c for c in p.marks if c not in docs]
            if missing:
                report.skipped.append(f"line {p.line}: {len(missing)} chunk(s) not in this workspace "
                                      f"({', '.join(missing[:3])}{'…' if len(missing) > 3 else ''})")
            kept = {c: v for c, v in p.marks.items() if c in docs}
            if not kept and not (p.answer or "").strip():
                report.skipped.append(f"line {p.line}: no chunk of this workspace and no expected answer: "
                                      "question not imported")
                continue
            qid = question_id(p.question)
            edit.upsert_question(qid, p.question, p.answer, now)
            for chunk_id, relevant in kept.items():
                edit.write_mark(qid, chunk_id, docs[chunk_id], bool(relevant), "import", now, keep_mode=True)
            report.questions += 1
            report.marks += len(kept)
        edit.prune()
    return report


def import_file(ws: Workspace, path: Path) -> ImportReport:
    """``import_records`` on a JSONL file."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no such file: {path}")
    text = path.read_text(encoding="utf-8", errors="replace")
    return import_records(ws, text.splitlines(), path.name)
