"""``core.api`` functions for asking questions: the mode list, running modes side by side, streaming an
LLM answer.

The retrieval modes are those of ``core.retrieval.registry`` (one ``ModeSpec`` each, in display order):
the pages read their names, one-line descriptions and parameters here, never from the registry. All
are viewer functions. Retrieval is imported inside the functions, so importing ``core.api`` (indexing,
the read-only views) loads none of it. Re-exported by ``core.api``.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Iterator, Optional

from core.auth import Principal, Role, requires
from core.errors import MAX_QUESTION_CHARS, check_length
from core.fairness import slots
from core.settings import Settings
from core.types import RetrievalResult
from core.workspace import Workspace

if TYPE_CHECKING:
    from core.llm.protocol import ChatModel


@requires(Role.viewer)
def mode_names(principal: Principal) -> list[str]:
    """Every retrieval mode, in display order."""
    from core.retrieval.registry import modes

    return modes()


@requires(Role.viewer)
def mode_help(principal: Principal, mode: str) -> str:
    """One line on what ``mode`` does (``system: blurb`` of its ``ModeSpec``); empty for an unknown mode."""
    from core.retrieval.registry import mode_help as help_line

    return help_line(mode)


@requires(Role.viewer)
def mode_params(principal: Principal, mode: str) -> list[str]:
    """The settings ``mode`` reads (each a ``Settings`` field); ValueError for an unknown mode."""
    from core.retrieval.registry import mode_params as params

    return params(mode)


@requires(Role.viewer)
def run_modes(principal: Principal, ws: Workspace, question: str, modes: list[str] | str = "all", settings: Optional[Settings] = None,
              with_answers: bool = True, llm: Any = None, keywords: Any = None, concurrent: bool = True
              ) -> dict[str, RetrievalResult]:
    """Run several modes on one question (sharing the query embedding and keywords) and answer each, in
    one light work slot of ``core.fairness``. A question longer than ``MAX_QUESTION_CHARS`` is refused
    with a message."""
    check_length(question, MAX_QUESTION_CHARS, "question")
    with slots().slot(heavy=False):  # core.fairness: a question never waits behind heavy work
        return _run_modes(ws, question, modes, settings, with_answers, llm, keywords, concurrent)


def _run_modes(ws: Workspace, question: str, modes: list[str] | str, settings: Optional[Settings], with_answers: bool,
               llm: Any, keywords: Any, concurrent: bool) -> dict[str, RetrievalResult]:
    from core.retrieval.registry import parse_modes, query_context, retrieve  # here: indexing and the read-only calls load no retrieval

    from core.answers import answer, question_names

    mode_list = parse_modes(modes) if isinstance(modes, str) else list(modes)
    ctx = query_context(ws, question, settings=settings, keywords=keywords)
    ws.vectors  # open the vector client once, before any worker thread needs it
    ctx.embed_ahead(question)  # the question's vector on the embedder's helper thread while it is parsed
    ctx.keywords()
    # the question and its names in one embedding batch: the modes that link names (local, hybrid,
    # mix, path) and the extractive answers (question entities) need them
    ctx.prefetch([question] + question_names(ws, question, ctx.strategies.seeds, ctx))

    def one(mode: str) -> RetrievalResult:
        result = retrieve(ctx, mode)
        if with_answers:
            started = time.perf_counter()
            result.answer = answer(result, ws, llm, ctx.state, ctx)  # ctx.state: shared by all modes
            result.timings_ms["answer"] = round((time.perf_counter() - started) * 1000, 3)
        return result

    if concurrent and len(mode_list) > 1 and llm is not None:
        workers = max(1, min((settings or ws.settings).llm_concurrency, len(mode_list)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(one, mode_list))
    else:
        results = [one(m) for m in mode_list]
    return dict(zip(mode_list, results))


@requires(Role.viewer)
def stream_answer(principal: Principal, chat: ChatModel, result: RetrievalResult,
                  max_tokens: Optional[int] = None) -> Iterator[str]:
    """The LLM answer to ``result`` as it is generated (``core.llm.generated_answers.stream_answer``);
    ``result.answer`` is set at the end."""
    from core.llm.generated_answers import stream_answer as stream

    return stream(chat, result, max_tokens)
