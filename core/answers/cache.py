"""The extractive answers' per-question cache, owned by the answers.

``AnswerCache`` holds the work the answer stage repeats for every mode of one comparison: the
question frame per workspace generation, the question's vector (when no ``QueryContext`` gives it)
and the cosines, parsed relations and sentence scores memoised per question. It lives in the
question's ``core.retrieval.query.QuestionState``, attached by its type (``answer_cache``), so the
retrieval layer below never names it; everything in it is a pure function of the question, the
settings and the workspace generation it was computed on.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, TypeVar

import numpy as np

from core.answers.question import QuestionFrame
from core.retrieval.query import QuestionState
from core.storage.records import Pair


@dataclass
class AnswerCache:
    """The extractive answers' per-question work."""

    frames: dict[int, QuestionFrame] = field(default_factory=dict)  # by workspace generation
    question_vector: Optional[np.ndarray] = None
    chunk_similarity: dict[str, float] = field(default_factory=dict)
    pair_cosines: dict[Pair, float] = field(default_factory=dict)
    entity_cosines: dict[str, float] = field(default_factory=dict)
    relations: dict[Any, Any] = field(default_factory=dict)  # question text -> its parsed relation (support)
    sentence_cosines: dict[Any, Any] = field(default_factory=dict)  # (chunk, span) -> cosine to its vector
    sentence_parts: dict[Any, Any] = field(default_factory=dict)  # a sentence's mode-independent scores (scoring)


def answer_cache(state: QuestionState) -> AnswerCache:
    """The answers' cache of the question ``state`` is about (made the first time it is asked for)."""
    return state.attached(AnswerCache)


T = TypeVar("T")


def parsed_once(cache: Any, kind: str, question: str, parse: Callable[[str], T]) -> T:
    """``parse(question)`` computed once per question and ``kind``: kept in the answers' cache of a
    ``QuestionState``, or in ``cache`` itself when it is a plain dict (tests), else not kept."""
    store: dict = answer_cache(cache).relations if isinstance(cache, QuestionState) else (
        cache if isinstance(cache, dict) else {})
    key = (kind, question)
    if key not in store:
        store[key] = parse(question)
    return store[key]


def question_state(question: str, state: Any = None, ctx: Any = None) -> QuestionState:
    """The shared state of ``question``: ``state`` when it is that question's, else the comparison's
    (``ctx.state``), else a new one."""
    if isinstance(state, QuestionState) and state.question == question:
        return state
    ctx_state = getattr(ctx, "state", None)
    if isinstance(ctx_state, QuestionState) and ctx_state.question == question:
        return ctx_state
    return QuestionState(question)
