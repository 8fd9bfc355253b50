"""``core.api`` functions that measure the modes on a question set: evidence recall and answer-in-answer
(``core.evaluation.runner``), and the pairwise LLM judge (``core.judge.runner``) with its cost estimate.

All are viewer functions (evaluating reads the index, it changes nothing). The runners are imported
inside the functions: they load retrieval. Re-exported by ``core.api``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

from core.auth import Principal, Role, requires
from core.fairness import slots
from core.settings import Settings
from core.types import ProgressCallback, no_progress
from core.workspace import Workspace

if TYPE_CHECKING:
    from core.evaluation.questions import Question
    from core.evaluation.runner import EvalReport
    from core.judge.report import JudgeReport


def check_question_count(ws: Workspace, count: int) -> None:
    """Refuse a question set over the workspace's saved ``max_eval_questions`` (the operator's limit: the
    session's own settings cannot lift it), before a heavy work slot is taken."""
    from core.errors import TooManyQuestionsError

    limit = ws.settings.max_eval_questions
    if count > limit:
        raise TooManyQuestionsError(
            f"{count:,} questions, over this workspace's limit of {limit:,} per run (each run holds one of the "
            f"few heavy work slots while it lasts): run the first {limit:,} ('Questions to run'), split the file, "
            "or ask an admin to raise 'Most questions per evaluation' (`max_eval_questions`) in Settings")


@requires(Role.viewer)
def question_limit(principal: Principal, ws: Workspace) -> int:
    """The most questions one evaluation, edit comparison, router set or judge run of ``ws`` may take."""
    return ws.settings.max_eval_questions


@requires(Role.viewer)
def evaluate(principal: Principal, ws: Workspace, questions: list[Question], modes: Sequence[str],
             ks: Sequence[int] = (2, 5, 10), settings: Optional[Settings] = None,
             progress: ProgressCallback = no_progress, **options: Any) -> EvalReport:
    """Evidence recall and answer-in-answer per mode (``core.evaluation.runner.evaluate``), in one heavy
    work slot of ``core.fairness`` (a long evaluation never takes the slot questions are answered in)."""
    from core.evaluation.runner import evaluate as run

    check_question_count(ws, len(questions))
    with slots().slot(heavy=True):
        return run(ws, questions, modes, ks, settings=settings, progress=progress, **options)


@requires(Role.viewer)
def run_judge(principal: Principal, ws: Workspace, questions: Sequence[Any], modes: Sequence[str], chat: Any,
              **options: Any) -> JudgeReport:
    """The pairwise LLM judge over ``modes`` (``core.judge.runner.run_judge``; ``options`` as there).
    ``questions``: ``core.evaluation.questions.Question`` or any object with its fields."""
    from core.judge.runner import run_judge as run

    check_question_count(ws, len(questions))
    return run(ws, questions, modes, chat, **options)


@requires(Role.viewer)
def estimate_judge_cost(principal: Principal, ws: Workspace, questions: Sequence[Any], modes: Sequence[str],
                        chat: Any, **options: Any) -> dict[str, Any]:
    """What ``run_judge`` with the same arguments would cost (calls, cache hits, prompt tokens, expected and
    maximum completion tokens, in total and per stage: a plain mapping); no call is made."""
    from core.judge.runner import estimate_cost

    return estimate_cost(ws, questions, modes, chat, **options)


@requires(Role.viewer)
def router_rows(principal: Principal, ws: Workspace, questions: list[Question], label: str, k: int = 5,
                eval_rows: Optional[Sequence[dict[str, Any]]] = None, settings: Optional[Settings] = None,
                keywords: Any = None) -> list[dict[str, Any]]:
    """The ``auto`` router's training rows for a question set: per question its features and each
    candidate mode's gold recall@k (``core.evaluation.routing_eval.router_rows``; the recalls from
    ``eval_rows``, an ``eval --per-question`` file's rows, when given). Reads only; a heavy work slot."""
    from core.evaluation.routing_eval import router_rows as rows_of

    check_question_count(ws, len(questions))
    with slots().slot(heavy=True):
        return rows_of(ws, questions, label, k, eval_rows=eval_rows, settings=settings, keywords=keywords)


@requires(Role.editor)
def train_router(principal: Principal, ws: Optional[Workspace], rows: Sequence[dict[str, Any]], out: Optional[str] = None,
                 target: str = "recall@5", cross_validate: bool = True) -> tuple[str, dict[str, Any]]:
    """Fit the ``auto`` router on ``rows`` (``core.evaluation.routing_eval.train``: ridge and margin chosen
    by grouped k-fold, cross-validated figures) and save it as JSON at ``out`` (default: the workspace's
    ``router.json``, which its ``auto`` mode then uses; ``ws`` may be None when ``out`` is given). Returns the
    path written and the held-out figures."""
    from pathlib import Path

    from core.evaluation.routing_eval import train
    from core.routing.auto_mode import WORKSPACE_MODEL

    model, cv = train(rows, target=target, with_cv=cross_validate)
    if not out and ws is None:
        raise ValueError("train_router needs a workspace or an output path")
    path = Path(out) if out else Path(ws.path) / WORKSPACE_MODEL  # type: ignore[union-attr]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(model.to_json(), encoding="utf-8")
    return str(path), cv
