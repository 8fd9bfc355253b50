"""Question files in the shared FORMAT.md layout (JSONL: qid, question, answer, answer_aliases,
question_type, hops, gold_doc_ids, evidence, meta). ``gold_doc_names`` may replace ``gold_doc_ids``
(file names, resolved against the workspace's documents). Evidence entries that name a ``chunk_id``
(RAGScope's annotation exports) become chunk-level gold (``gold_chunk_ids``)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Optional


@dataclass
class Question:
    qid: str
    question: str
    answer: Optional[str]
    aliases: list[str] = field(default_factory=list)
    question_type: str = ""
    gold_doc_ids: list[str] = field(default_factory=list)
    gold_doc_names: list[str] = field(default_factory=list)
    evidence_spans: list[str] = field(default_factory=list)  # quoted gold text (evidence[].text), if any
    gold_chunk_ids: list[str] = field(default_factory=list)


def question_records(lines: Iterable[str], source: str = "questions") -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank JSONL line; a line that is not a JSON object with a
    non-empty "question" raises ValueError naming the line."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source} line {number}: not valid JSON ({exc.msg})") from None
        if not isinstance(raw, dict) or not str(raw.get("question") or "").strip():
            raise ValueError(f"{source} line {number}: needs a non-empty \"question\" field")
        yield number, raw


def parse_questions(lines: list[str], source: str = "questions") -> list[Question]:
    """Parse JSONL lines; a malformed line raises ValueError naming the line."""
    out: list[Question] = []
    for number, raw in question_records(lines, source):
        out.append(Question(
            qid=str(raw.get("qid") or f"q{number}"), question=str(raw["question"]),
            answer=raw.get("answer"), aliases=[str(a) for a in raw.get("answer_aliases") or []],
            question_type=str(raw.get("question_type") or ""),
            gold_doc_ids=[str(d) for d in raw.get("gold_doc_ids") or []],
            gold_doc_names=[str(d) for d in raw.get("gold_doc_names") or []],
            evidence_spans=_spans(raw.get("evidence")),
            gold_chunk_ids=_evidence_chunks(raw.get("evidence"))))
    if not out:
        raise ValueError(f"{source} contains no questions")
    return out


def _spans(evidence: object) -> list[str]:
    """The quoted gold texts of an ``evidence`` list (items with a non-empty ``text``)."""
    if not isinstance(evidence, list):
        return []
    return [" ".join(str(item["text"]).split()) for item in evidence
            if isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"].strip()]
def _evidence_chunks(evidence: object) -> list[str]:
    """Chunk ids named by the evidence entries (``{doc_id, chunk_id}``), in order, without duplicates."""
    if not isinstance(evidence, list):
        return []
    ids = (str(e.get("chunk_id") or "") for e in evidence if isinstance(e, dict))
    return list(dict.fromkeys(i for i in ids if i))


def load_questions(path: Path) -> list[Question]:
    return parse_questions(Path(path).read_text(encoding="utf-8").splitlines(), Path(path).name)


def resolve_gold(questions: list[Question], doc_names: dict[str, str]) -> list[Question]:
    """Map gold_doc_names to doc ids of the workspace (doc_names: doc_id -> name)."""
    by_name: dict[str, str] = {}
    for doc_id, name in doc_names.items():
        by_name.setdefault(name, doc_id)
    for q in questions:
        if not q.gold_doc_ids and q.gold_doc_names:
            q.gold_doc_ids = [by_name[n] for n in q.gold_doc_names if n in by_name]
    return questions
