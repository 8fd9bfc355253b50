"""What the modes of one comparison share for one question (``QueryContext.state``).

One typed object instead of string-keyed dicts built in several modules: the linked seed entities
(plain and topped up, see ``core.retrieval.lightrag_retrieval.seeds_for``), the anchored relations
per joined keyword string, the tree's question-term counts, and the answer stage's question frame
and memoised cosines (``core.answers.inputs``). Everything in it is a pure function of the
question, the settings and the workspace generation it was computed on.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from core.storage.records import Pair

if TYPE_CHECKING:
    from core.answers.question import QuestionFrame
    from core.retrieval.anchoring import AnchoredRelation
    from core.retrieval.entity_linking import Seed


@dataclass
class AnswerState:
    """The extractive answers' per-question work."""

    frames: dict[int, "QuestionFrame"] = field(default_factory=dict)  # by workspace generation
    question_vector: Optional[np.ndarray] = None
    chunk_similarity: dict[str, float] = field(default_factory=dict)
    pair_cosines: dict[Pair, float] = field(default_factory=dict)
    entity_cosines: dict[str, float] = field(default_factory=dict)
    relations: dict[str, Any] = field(default_factory=dict)  # question text -> its parsed relation (answers.support)
    sentence_parts: dict[Any, Any] = field(default_factory=dict)  # a sentence's mode-independent scores (scoring)


@dataclass
class QuestionState:
    """Per-question results shared by the modes of one comparison (and by their answers)."""

    question: str
    seed_names: Optional[list[str]] = None  # None until a mode linked the question's names
    seeds: Optional[list["Seed"]] = None
    seeds_filled: Optional[list["Seed"]] = None  # local mode's seeds, topped up by the joined search
    anchored: dict[str, list["AnchoredRelation"]] = field(default_factory=dict)  # by joined keywords
    tree_term_counts: Optional[dict[str, float]] = None
    answers: AnswerState = field(default_factory=AnswerState)


def state_for(question: str, state: Any = None, ctx: Any = None) -> QuestionState:
    """The shared state of ``question``: ``state`` when it is that question's, else the comparison's
    (``ctx.state``), else a new one."""
    if isinstance(state, QuestionState) and state.question == question:
        return state
    ctx_state = getattr(ctx, "state", None)
    if isinstance(ctx_state, QuestionState) and ctx_state.question == question:
        return ctx_state
    return QuestionState(question)
