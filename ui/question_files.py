"""The question files a page offers to pick (Evaluate, "What the edits changed"): the sample questions and the
shared data sets' files, each offered only in a workspace that holds the corpus it was written for.

The rule is the example questions' (``ui.examples.holds_gold_documents``): a file is offered when at least half
of its questions that name gold documents find one of them among the workspace's documents (by doc_id or
name). A file whose questions name none (a data set of global questions) is matched by the documents of its
data set's ``corpus.jsonl`` beside it (the shared package layout), as if every question named them. A file
left out is named with the reason on the page, and an uploaded file is always accepted (the explicit way to
run questions the check cannot place).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from core import api
from ui.examples import holds_gold_documents
from ui.numbers import count

if TYPE_CHECKING:
    from core.api import Workspace

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_QUESTIONS = ROOT / "data" / "sample_questions.jsonl"
SHARED_DATA = ROOT.parent / "shared" / "data"
SAMPLE_LABEL = "Sample corpus questions (data/sample_questions.jsonl)"


def built_in_question_files() -> dict[str, Path]:
    """The sample questions and the shared data sets' non-empty question files that exist here."""
    files = {SAMPLE_LABEL: SAMPLE_QUESTIONS}
    for path in sorted(SHARED_DATA.glob("*/questions.jsonl")):
        files[f"{path.parent.name} (shared data)"] = path
    return {k: v for k, v in files.items() if v.is_file() and v.stat().st_size > 0}


def _corpus_ids(corpus: Path) -> list[str]:
    """The doc_ids of a shared data set's corpus (empty when it has none)."""
    if not corpus.is_file():
        return []
    ids = []
    with corpus.open("rb") as handle:
        for line in handle:
            try:
                doc_id = json.loads(line).get("doc_id")
            except (ValueError, AttributeError):
                continue
            if isinstance(doc_id, (str, int)):
                ids.append(str(doc_id))
    return ids


@st.cache_data(show_spinner=False, max_entries=32)
def file_gold(path: str, modified: float) -> list[list[str]]:
    """Per question of the file at ``path``: the gold documents it names (ids and names); for a file naming
    none, its data set's corpus documents stand in (one list). Cached per file version (``modified``)."""
    from core.evaluation.questions import load_questions

    gold = [sorted({*q.gold_doc_ids, *q.gold_doc_names}) for q in load_questions(Path(path))]
    if any(gold):
        return gold
    corpus = _corpus_ids(Path(path).parent / "corpus.jsonl")
    return [corpus] if corpus else []


def fits(path: Path, doc_names: dict[str, str]) -> bool:
    """Whether the question file at ``path`` belongs to a workspace with documents ``{doc_id: name}``."""
    return holds_gold_documents(file_gold(str(path), path.stat().st_mtime), doc_names)


def offered_question_files(ws: "Workspace") -> tuple[dict[str, Path], list[str]]:
    """(the built-in files that fit ``ws`` by label, the labels of those left out)."""
    from ui.state import principal

    names = api.doc_names(principal(), ws)
    offered: dict[str, Path] = {}
    left_out: list[str] = []
    for label, path in built_in_question_files().items():
        if fits(path, names):
            offered[label] = path
        else:
            left_out.append(label)
    return offered, left_out


def left_out_note(left_out: list[str], documents: int) -> str:
    """The caption naming the files not offered and why (Markdown-safe: the labels are the app's own)."""
    if not left_out:
        return ""
    listed = ", ".join(left_out[:6]) + (f" and {count(len(left_out) - 6)} more" if len(left_out) > 6 else "")
    return (f"Not offered here: {listed} — their questions are about documents this workspace "
            f"({count(documents)} document(s)) does not hold. Upload a question file to run one anyway.")


def uploaded_questions(upload: Any) -> list[Any]:
    """The questions of an uploaded question file (a Streamlit ``UploadedFile``); a malformed line raises
    ``ValueError`` naming it."""
    from core.evaluation.questions import parse_questions

    if upload is None:
        raise ValueError("upload a question file (.jsonl) first")
    return parse_questions(upload.getvalue().decode("utf-8", errors="replace").splitlines(), upload.name)
