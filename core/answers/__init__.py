"""Offline (extractive) answers built from each mode's own evidence, and the answer entry point.

Every mode quotes sentences of its own evidence, chosen in its own terms; its ``ModeSpec``
(``core.retrieval.registry``) names the builder: naive and tree in ``chunk_modes``,
local/global/hybrid/mix in ``lightrag`` (bridge relations from the question's entities first), path
in ``path`` (one chain of supporting sentences per kept path).
All use the sentence records stored at indexing time (``sentences``: no parsing per query), score
them with lexical, graph and answer-type signals (``question``, ``scoring``; no embedding of
sentences) and lay them out the same way (``layout``): the single best sentence first with the
short answer bolded when the sentence clearly states it (``support``, ``claim``; otherwise the answer's
``note`` says why nothing is bolded), then the mode's evidence lines (a sentence about the entity the first
hop leads to put first among them, ``chain``), each cited ``[document, chunk n]``. The answer
is ``Answer(kind="extractive")``.

With an LLM, ``answer`` generates the answer instead (``core.llm.generated_answers``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from core.answers.chain import chained
from core.answers.claim import claimed
from core.answers.inputs import AnswerInputs, answer_inputs, question_names
from core.answers.layout import EMPTY, Entry, bold_surfaces, compose
from core.answers.scoring import Pick, first_choice
from core.retrieval.query import QuestionState
from core.types import Answer, RetrievalResult

if TYPE_CHECKING:
    from core.workspace import Workspace
    from core.retrieval.query import QueryContext

Builder = Callable[[AnswerInputs, RetrievalResult], "tuple[list[Pick], list[Entry]]"]


def _builder(mode: str) -> Builder:
    """The mode's offline answer builder, named by its ``ModeSpec`` (``core.retrieval.registry``); a
    result of a mode that is not registered (e.g. read back from an older export) is answered from
    its chunks, as naive's is."""
    from core.retrieval.registry import find_spec

    spec = find_spec(mode)
    if spec is None:
        from core.answers.chunk_modes import naive_answer

        return naive_answer
    return spec.offline_builder()


def extractive_answer(result: RetrievalResult, ws: Workspace, ctx: Optional[QueryContext] = None, cache: Optional[QuestionState] = None,
                      lines: Optional[int] = None) -> Answer:
    """The mode's extractive answer: its best sentence first, then its evidence lines (``lines`` in
    all; default ``settings.answer_sentences``). ``ctx`` (the comparison's ``QueryContext``) and
    ``cache`` (the question's ``QuestionState``; default ``ctx.state``) avoid repeating per-question work."""
    if not (result.chunks or result.relations or result.paths or result.summaries):
        return Answer(EMPTY, "extractive", "")
    settings = getattr(ctx, "settings", None) or ws.settings
    inputs = answer_inputs(ws, result.query, max(1, lines or settings.answer_sentences), ctx, cache)
    candidates, entries = _builder(result.mode)(inputs, result)
    # the first line: bolded only where its sentence supports the short answer as a clear claim
    first, note = claimed(first_choice(candidates, inputs.frame), candidates, inputs.frame, inputs.graph, inputs.cache)
    ranking = "meaning" if inputs.ranked_by_meaning(candidates) else "lexical"
    entries = chained(first, candidates, entries, inputs)  # the next hop's line
    bold = bold_surfaces(first) if first is not None else []
    return Answer(compose(first, entries, inputs.lines), "extractive", "", note, ranking, bold)


def answer(result: RetrievalResult, ws: Workspace, llm: Optional[Any] = None, cache: Optional[QuestionState] = None,
           ctx: Optional[QueryContext] = None) -> Answer:
    """The answer for a result: generated when an LLM is given, otherwise extractive."""
    if llm is not None:
        from core.llm.generated_answers import generate_answer

        return generate_answer(llm, result)
    return extractive_answer(result, ws, ctx, cache)
