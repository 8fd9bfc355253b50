"""``python -m core judge``: LLM-judged pairwise win rates between modes on a question file.

Prints the cost estimate (calls, tokens; cached calls are free) on stderr before the run and the
measured usage after it. Ctrl-C is a resumable stop: the calls in flight finish and are cached, the
partial report is printed with ``"cancelled": true`` and the exit status is 130; running the same
command again pays only for the calls that were missing.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any

from core.cli.base import (EXIT_CANCELLED, add_provider_flags, emit_json, graceful_interrupts, open_workspace, providers,
                           with_params)
from core.retrieval.registry import modes, parse_modes


def _estimate_line(estimate: dict[str, Any]) -> str:
    return (f"estimate: {estimate['calls']} LLM call(s) to make, {estimate['cached']} cached; "
            f"~{estimate['prompt_tokens']:,} prompt + ~{estimate['completion_tokens']:,} completion tokens "
            f"(completion at most {estimate['completion_tokens_max']:,})")


def _usage_line(usage: dict[str, Any], seconds: float) -> str:
    return (f"measured: {usage.get('calls', 0)} LLM call(s), {usage.get('cached', 0)} cached; "
            f"{usage.get('prompt_tokens', 0):,} prompt + {usage.get('completion_tokens', 0):,} completion tokens "
            f"in {seconds:.1f}s")


def _table(data: dict[str, Any]) -> str:
    lines = []
    for key, by_criterion in data["pairs"].items():
        a, b = key.split("|", 1)
        for criterion, n in by_criterion.items():
            lines.append(f"{a:>7} vs {b:<7} {criterion:<18} {a} {n[a]:>3}  {b} {n[b]:>3}  tie {n['tie']:>3}  "
                         f"invalid {n['invalid']:>3}")
    c = data["consistency"]
    if c["first_position_share"] is not None:
        lines.append(f"decisive verdicts for the answer shown first: {100 * c['first_position_share']:.0f}% "
                     f"(50% = no position bias)")
    if c["order_agreement"] is not None:
        lines.append(f"both orders agree: {100 * c['order_agreement']:.0f}% of {c['judged_in_both_orders']}")
    return "\n".join(lines)


class _Bar:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Any = None

    def __call__(self, event: Any) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        if self.bar is None:
            self.bar = tqdm(total=max(event.total, 1), desc="judge", unit="call", file=sys.stderr, dynamic_ncols=True)
        self.bar.n = event.done
        self.bar.set_postfix_str(event.message[:40])
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def cmd_judge(args: argparse.Namespace) -> int:
    from core.evaluation.questions import load_questions
    from core.judge.runner import estimate_cost, run_judge

    ws = open_workspace(args)
    if args.offline:
        raise ValueError("the judge compares LLM answers: it cannot run with --offline")
    settings = with_params(ws.settings, args)  # before the chat is built: overrides such as llm_max_tokens reach it
    questions = load_questions(Path(args.questions))
    if args.limit:
        questions = questions[: args.limit]
    modes = parse_modes(args.modes)
    cancel = threading.Event()
    chat, _ = providers(ws, args, settings, cancel)
    if chat is None:
        raise ValueError("the judge needs an LLM: pass --llm-base-url and --llm-model, set RAGSCOPE_LLM_BASE_URL "
                         "and RAGSCOPE_LLM_MODEL, or choose the OpenAI-compatible provider in the settings")
    options = dict(criteria=args.criteria, settings=settings, llm_keywords=not args.offline_keywords,
                   answer_max_tokens=args.answer_max_tokens or None)
    estimate = estimate_cost(ws, questions, modes, chat, **options)
    print(_estimate_line(estimate), file=sys.stderr)
    if args.estimate_only:
        if args.json:
            emit_json({"estimate": estimate})
        return 0
    bar = _Bar(not args.quiet)
    try:
        with graceful_interrupts(cancel):
            report = run_judge(ws, questions, modes, chat, progress=bar, **options)
    finally:
        bar.close()
    report.estimate = estimate
    data = report.to_dict()
    print(_usage_line(report.usage, report.seconds), file=sys.stderr)
    if report.invalid_count():
        print(f"{report.invalid_count()} verdict(s) could not be read: counted as invalid (see questions[].judgments)",
              file=sys.stderr)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    if args.json:
        emit_json(data)
    else:
        print(_table(data))
    if report.cancelled:
        print(f"cancelled after {len(report.questions)} of {len(questions)} question(s); run judge again to resume "
              "(finished LLM calls are cached)", file=sys.stderr)
        return EXIT_CANCELLED
    return 0


def add_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register ``judge``."""
    p = sub.add_parser("judge", parents=[common], help="LLM-judged pairwise win rates between modes")
    p.add_argument("--questions", required=True, help="JSONL question file ({\"question\": ...} lines are enough)")
    p.add_argument("--modes", required=True, help=f"'all' or at least two of: {', '.join(modes())}")
    p.add_argument("--criteria", default="lightrag",
                   help="lightrag (comprehensiveness, diversity, empowerment, overall), pathrag (comprehensiveness, "
                        "diversity, logicality, relevance, coherence) or comma-separated names")
    p.add_argument("--limit", type=int, default=0, help="only the first N questions")
    p.add_argument("--estimate-only", action="store_true", help="print the cost estimate and make no call")
    p.add_argument("--out", default="", help="also write the JSON report to this file")
    p.add_argument("--answer-max-tokens", type=int, default=0, help="answer length cap (default: the LLM setting)")
    p.add_argument("--offline-keywords", action="store_true", help="spaCy query keywords instead of LLM keywords")
    p.add_argument("--param", action="append", default=[], help="setting override key=value (repeatable)")
    add_provider_flags(p)
    p.set_defaults(run=cmd_judge)
