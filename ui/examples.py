"""Example questions for Compare and Inspect.

Where they come from, first match wins: the question file loaded on the Evaluate page in this
session (kept under ``EVAL_QUESTIONS_KEY`` as ``(label, [(qid, question), …], workspace, [gold
documents per question])``) while the open workspace holds its corpus (at least half of the questions
that name gold documents find one of them, by doc_id or name; a file naming none: while the workspace
is the one it was loaded in), then
the sample questions (``data/sample_questions.jsonl``) when the workspace holds the sample corpus
(at least half of its articles, by file name). Picking one copies it into the question box.
A file's questions are about its corpus: offered in a workspace without it, they read as questions
the workspace should answer and cannot.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import streamlit as st

if TYPE_CHECKING:
    from core.api import Workspace

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_QUESTIONS = ROOT / "data" / "sample_questions.jsonl"
EVAL_QUESTIONS_KEY = "eval_loaded_questions"


def holds_sample_corpus(doc_names: list[str]) -> bool:
    """True when at least half of the sample articles are among the workspace's documents."""
    from core.api import sample_paths
    from ui.state import principal

    samples = {p.name for p in sample_paths(principal())}
    return bool(samples) and len(samples & set(doc_names)) * 2 >= len(samples)


def sample_questions() -> list[tuple[str, str]]:
    from core.evaluation.questions import load_questions

    if not SAMPLE_QUESTIONS.exists():
        return []
    return [(q.qid, q.question) for q in load_questions(SAMPLE_QUESTIONS)]


def remember_questions(label: str, questions: Optional[list[Any]]) -> None:
    """Called by the Evaluate page when a question file is loaded (its questions become the examples of
    the workspaces that hold their gold documents, or of this one when they name none)."""
    from ui.state import current_workspace_name

    if questions:
        gold = [sorted({*q.gold_doc_ids, *q.gold_doc_names}) for q in questions]
        st.session_state[EVAL_QUESTIONS_KEY] = (label, [(q.qid, q.question) for q in questions],
                                                current_workspace_name(), gold)


def holds_gold_documents(gold: list[list[str]], doc_names: dict[str, str]) -> bool:
    """True when at least half of the questions that name gold documents (ids or names) find one of them
    among the workspace's documents ``{doc_id: name}``; False when no question names any."""
    known = set(doc_names) | set(doc_names.values())
    named = [g for g in gold if g]
    return bool(named) and sum(1 for g in named if known.intersection(g)) * 2 >= len(named)


def _loaded_fits(loaded: tuple[Any, ...], ws: "Workspace") -> bool:
    """Whether the loaded question file's examples belong in workspace ``ws`` (see the module's docstring)."""
    from core import api
    from ui.state import current_workspace_name, principal

    where, gold = (loaded[2], loaded[3]) if len(loaded) >= 4 else (None, [])
    if any(gold):  # by corpus: Evaluate picks a built-in file by itself in any workspace it is opened on
        return holds_gold_documents(gold, api.doc_names(principal(), ws))
    return where == current_workspace_name()


def example_questions(ws: "Workspace") -> tuple[str, list[tuple[str, str]]]:
    """(where the examples come from, [(qid, question)]) for this workspace; empty when none fit."""
    loaded = st.session_state.get(EVAL_QUESTIONS_KEY)
    if loaded and loaded[1] and _loaded_fits(loaded, ws):
        return loaded[0], list(loaded[1])
    from core import api
    from ui.state import principal

    if holds_sample_corpus(list(api.doc_names(principal(), ws).values())):
        return "the sample corpus questions", sample_questions()
    return "", []


def example_picker(ws: "Workspace", target_key: str) -> None:
    """A selectbox of example questions; choosing one fills the text box ``target_key``."""
    source, questions = example_questions(ws)
    if not questions:
        return
    by_label = {f"{qid} · {text}": text for qid, text in questions}
    picker_key = f"{target_key}_example"

    def copy() -> None:
        chosen = st.session_state.get(picker_key)
        if chosen in by_label:
            st.session_state[target_key] = by_label[chosen]

    from ui.errors import escape_markdown

    st.selectbox(f"Example question ({len(questions)} from {escape_markdown(source)})", list(by_label), index=None,
                 key=picker_key, on_change=copy, placeholder="Pick an example, or type your own question below")


SHARED_QUESTION_KEY = "shared_question"  # not a widget key: it outlives the page that set it


def share_question(question: str) -> None:
    """Remember the question typed on Compare or Inspect so that the other page starts from it (a widget's
    own state is dropped by Streamlit when its page is left)."""
    if (question or "").strip():
        st.session_state[SHARED_QUESTION_KEY] = question


def take_shared_question(target_key: str) -> None:
    """Fill the text box ``target_key`` with the question last typed on the other page, once per new question
    (a question typed here afterwards is kept until the other page changes it)."""
    shared = st.session_state.get(SHARED_QUESTION_KEY, "")
    taken_key = f"{target_key}_taken"
    if shared and st.session_state.get(taken_key) != shared:
        st.session_state[target_key] = shared
        st.session_state[taken_key] = shared
