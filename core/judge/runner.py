"""The pairwise judge protocol (LightRAG's and PathRAG's way of comparing modes, without gold answers).

For each question: every chosen mode retrieves (sharing one query context and its keywords: LLM keywords
when ``llm_keywords``), the LLM answers from each mode's context (``core.llm.generated_answers``), then for every
pair of modes the judge is asked twice, once in each order, to cancel position bias. Two modes whose
answers are the same text are not sent to the judge: they tie on every criterion (noted).

Everything goes through the chat model's cache, so a re-run costs nothing and a cancelled run resumes
where it stopped (the calls already answered are cache hits). Cancelling (the chat's ``cancel_event``)
stops at the next call; the report then holds the questions finished so far and ``cancelled``. A
server that keeps failing ends the run with ``LLMUnavailableError`` (finished calls stay cached).

``estimate_cost`` runs the same protocol without calling the model: cached replies are read from the
cache, every other call is counted with its exact prompt and an expected completion length, and the
answers it would generate are stood in for by text of that length (so judge prompts are sized too).
"""
from __future__ import annotations

import threading
import time
from collections import defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import combinations
from typing import TYPE_CHECKING, Any, Optional, Sequence

from core.judge.prompt import INVALID, Criterion, criteria_from_spec, judge_messages, parse_verdict
from core.judge.report import USAGE_FIELDS, JudgeReport, Judgment, QuestionResult, pair_key, usage_totals
from core.llm.client import Completion, Message, messages_tokens
from core.types import Cancelled, ProgressCallback, ProgressEvent, no_progress

if TYPE_CHECKING:
    from core.workspace import Workspace

JUDGE_STAGE = "judge"
TOKENS_PER_CRITERION = 64  # the judge's reply budget: a winner and one sentence per criterion
# Expected completion lengths for the estimate while nothing of the kind is cached (then: the cached mean);
# the judge's is half its reply budget.
EXPECTED_ANSWER_TOKENS = 200
EXPECTED_KEYWORD_TOKENS = 40


class _Tally:
    """Counts this run's calls, cache hits, tokens and seconds per stage around any chat model."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model = inner.model
        self.lock = threading.Lock()
        self.by_stage: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(USAGE_FIELDS, 0))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def complete(self, messages: Sequence[Message], *, stage: str, json_mode: bool = False,
                 max_tokens: Optional[int] = None) -> Completion:
        started = time.perf_counter()
        reply = self.inner.complete(messages, stage=stage, json_mode=json_mode, max_tokens=max_tokens)
        with self.lock:
            row = self.by_stage[stage]
            row["calls" if not reply.cached else "cached"] += 1
            if not reply.cached:
                row["prompt_tokens"] += reply.prompt_tokens
                row["completion_tokens"] += reply.completion_tokens
            row["seconds"] += time.perf_counter() - started
        return reply


def _cache_of(chat: Any) -> Any:
    """The ``CachedChat`` in a wrapper chain (UsageCounter → CachedChat → OpenAIChat), or None."""
    seen = 0
    while chat is not None and seen < 8:
        if hasattr(chat, "lookup") and hasattr(chat, "inner"):
            return chat
        chat = getattr(chat, "inner", None)
        seen += 1
    return None


class DryRunChat:
    """Answers from the cache only; every other call is counted (exact prompt tokens, expected and
    maximum completion tokens) and answered with stand-in text of the expected length."""

    def __init__(self, chat: Any, default_max_tokens: int) -> None:
        self.model = chat.model
        self.cache = _cache_of(chat)
        self.default_max_tokens = default_max_tokens
        self.lock = threading.Lock()
        self.counts = {"calls": 0, "cached": 0, "prompt_tokens": 0, "completion_tokens": 0,
                       "completion_tokens_max": 0}
        self.by_stage: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(self.counts, 0))
        self.seen: dict[str, list[int]] = defaultdict(list)  # cached completion lengths per stage

    def _lookup(self, messages: Sequence[Message], json_mode: bool, max_tokens: Optional[int]) -> Optional[Completion]:
        if self.cache is None:
            return None
        return self.cache.lookup(self.cache.key_for(messages, json_mode, max_tokens))

    def prompt_room(self, max_tokens: Optional[int] = None) -> Optional[int]:
        """As the real client's (so the estimate sizes the same trimmed judge prompts)."""
        room_of = getattr(getattr(self.cache, "inner", None), "prompt_room", None)
        return room_of(max_tokens) if callable(room_of) else None

    def _expected(self, stage: str, limit: int) -> int:
        seen = self.seen.get(stage)
        if seen:
            return min(limit, round(sum(seen) / len(seen)))
        guess = {"answer": EXPECTED_ANSWER_TOKENS, "keywords": EXPECTED_KEYWORD_TOKENS}.get(stage, limit // 2)
        return min(limit, guess)

    def complete(self, messages: Sequence[Message], *, stage: str, json_mode: bool = False,
                 max_tokens: Optional[int] = None) -> Completion:
        limit = int(max_tokens or self.default_max_tokens)
        hit = self._lookup(messages, json_mode, max_tokens)
        with self.lock:
            row = self.by_stage[stage]
            if hit is not None:
                self.counts["cached"] += 1
                row["cached"] += 1
                self.seen[stage].append(hit.completion_tokens)
                return Completion(hit.text, hit.prompt_tokens, hit.completion_tokens, True, "cached")
            expected = self._expected(stage, limit)
            prompt = messages_tokens(messages)
            for target in (self.counts, row):
                target["calls"] += 1
                target["prompt_tokens"] += prompt
                target["completion_tokens"] += expected
                target["completion_tokens_max"] += limit
        stand_in = f"(estimate {abs(hash(str(messages))) % 10**8}) " + "word " * max(expected - 4, 0)
        return Completion("{}" if json_mode else stand_in, prompt, expected, False, "estimate")

    def summary(self) -> dict[str, Any]:
        return dict(self.counts) | {"by_stage": {s: dict(v) for s, v in self.by_stage.items()}}


def _keywords(chat: Any, llm_keywords: bool) -> Any:
    if llm_keywords:
        from core.llm.keywords import LLMKeywords

        return LLMKeywords(chat)
    from core.retrieval.keywords import OfflineKeywords

    return OfflineKeywords()


def _judge_call(chat: Any, question: str, pair: tuple[str, str], order: tuple[str, str], answers: dict[str, str],
                criteria: Sequence[Criterion], max_tokens: int) -> Judgment:
    first, second = order
    key = pair_key(*pair)
    if answers[first].strip() == answers[second].strip():
        return Judgment(key, first, second, {c.name: "tie" for c in criteria}, {},
                        note="identical answers: not sent to the judge, a tie on every criterion")
    room_of = getattr(chat, "prompt_room", None)  # the model's context, when known: answers trimmed to fit
    room = room_of(max_tokens) if callable(room_of) else None
    reply = chat.complete(judge_messages(question, answers[first], answers[second], criteria, room),
                          stage=JUDGE_STAGE, json_mode=True, max_tokens=max_tokens)
    parsed, problem = parse_verdict(reply.text, criteria)
    by_position = {"1": first, "2": second, "tie": "tie", INVALID: INVALID}
    verdicts = {name: by_position[v.winner] for name, v in parsed.items()}
    reasons = {name: v.reason for name, v in parsed.items() if v.reason}
    return Judgment(key, first, second, verdicts, reasons, raw=reply.text if problem else "", note=problem,
                    cached=reply.cached)


def run_judge(ws: Workspace, questions: Sequence[Any], modes: Sequence[str], chat: Any, *, criteria: str = "lightrag",
              settings: Any = None, llm_keywords: bool = True, answer_max_tokens: Optional[int] = None,
              judge_max_tokens: Optional[int] = None, progress: ProgressCallback = no_progress,
              workers: Optional[int] = None) -> JudgeReport:
    """Judge every pair of ``modes`` on ``questions`` (``core.evaluation.questions.Question``-like:
    ``qid``, ``question``). ``chat`` is the configured chat model (cached; see ``core.llm.provider``)."""
    from core.llm.generated_answers import generate_answer
    from core.retrieval.registry import query_context, retrieve

    modes = list(dict.fromkeys(modes))
    if len(modes) < 2:
        raise ValueError("the judge compares modes in pairs: choose at least two modes")
    if chat is None:
        raise ValueError("the judge needs an LLM: choose the OpenAI-compatible provider in Settings, or pass "
                         "--llm-base-url and --llm-model (the papers judge generated answers)")
    label, chosen = criteria_from_spec(criteria)
    settings = settings or ws.settings
    max_tokens = int(judge_max_tokens or TOKENS_PER_CRITERION * len(chosen) + 32)
    tally = _Tally(chat)
    keywords = _keywords(tally, llm_keywords)
    report = JudgeReport(modes, [c.name for c in chosen], label, chat.model)
    pairs = list(combinations(modes, 2))
    total = len(questions) * (len(modes) + 2 * len(pairs))
    done = 0
    started = time.perf_counter()
    cancel = getattr(chat, "cancel_event", None)
    pool = ThreadPoolExecutor(max_workers=max(1, int(workers or getattr(settings, "llm_concurrency", None) or 1)))
    try:
        for q in questions:
            if cancel is not None and cancel.is_set():
                raise Cancelled("judge cancelled")
            ctx = query_context(ws, q.question, settings=settings, keywords=keywords)
            results = {mode: retrieve(ctx, mode) for mode in modes}
            answer_jobs = {m: pool.submit(generate_answer, tally, r, answer_max_tokens) for m, r in results.items()}
            answers: dict[str, str] = {}
            for mode, job in answer_jobs.items():
                answers[mode] = _wait(job, answer_jobs.values()).text
                done += 1
                progress(ProgressEvent("judge", done, total, f"{q.qid} · answer of {mode}"))
            jobs: list[Future[Judgment]] = [
                pool.submit(_judge_call, tally, q.question, pair, order, answers, chosen, max_tokens)
                for pair in pairs for order in (pair, pair[::-1])]
            record = QuestionResult(q.qid, q.question, answers, {m: r.context_tokens for m, r in results.items()})
            for pending in jobs:
                judgment = _wait(pending, jobs)
                record.judgments.append(judgment)
                done += 1
                progress(ProgressEvent("judge", done, total,
                                       f"{q.qid} · {judgment.first} vs {judgment.second}"))
            report.questions.append(record)
    except Cancelled:
        report.cancelled = True
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        report.seconds = time.perf_counter() - started
        report.usage = usage_totals(tally.by_stage)
        flush = getattr(chat, "flush", None)
        if flush is not None:
            flush()
    return report


def _wait(job: Future, siblings: Any) -> Any:
    """The job's result; on failure the siblings not started yet are cancelled first."""
    try:
        return job.result()
    except BaseException:
        for other in siblings:
            other.cancel()
        raise


def estimate_cost(ws: Workspace, questions: Sequence[Any], modes: Sequence[str], chat: Any, *, criteria: str = "lightrag",
                  settings: Any = None, llm_keywords: bool = True, answer_max_tokens: Optional[int] = None,
                  judge_max_tokens: Optional[int] = None, progress: ProgressCallback = no_progress) -> dict[str, Any]:
    """What ``run_judge`` with the same arguments would cost: calls, cache hits, prompt tokens, expected
    and maximum completion tokens, in total and per stage (no call is made)."""
    settings = settings or ws.settings
    default = int(getattr(getattr(_cache_of(chat), "inner", None), "max_tokens", 0) or settings.llm_max_tokens)
    dry = DryRunChat(chat, default)
    run_judge(ws, questions, modes, dry, criteria=criteria, settings=settings, llm_keywords=llm_keywords,
              answer_max_tokens=answer_max_tokens, judge_max_tokens=judge_max_tokens, progress=progress, workers=1)
    return dry.summary() | {"questions": len(questions), "pairs": len(list(combinations(dict.fromkeys(modes), 2)))}
