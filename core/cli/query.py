"""CLI commands that read: ``query`` (one mode) and ``compare`` (several modes on one question).

Both take one question as an argument, or many with ``--questions FILE`` (one question per line, or a
JSONL question file with a ``question`` field per line; ``-`` reads standard input): the models and the
workspace's views then load once for all of them. With ``--json`` each question gives one JSON line."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterator

from core.cli.base import (PARAM_HELP, add_embedding_flags, add_provider_flags, emit_json, open_workspace, providers,
                           with_params)
from core.retrieval.registry import modes
from core.types import RetrievalResult


def run_modes(ws: Any, args: argparse.Namespace, modes_: list[str], question: str | None = None,
              prepared: tuple[Any, Any] | None = None) -> dict[str, RetrievalResult]:
    """The modes on the question with the run's providers (retrieval is imported only by the commands that use it)."""
    from core.api import run_modes as run
    from core.auth import LOCAL_ADMIN

    llm, keywords = prepared if prepared is not None else providers(ws, args)
    return run(LOCAL_ADMIN, ws, question if question is not None else args.question, modes_,
               settings=with_params(ws.settings, args), llm=llm, keywords=keywords)


def questions_of(args: argparse.Namespace) -> Iterator[str]:
    """The questions to run: the argument, or each non-empty line of ``--questions`` (a JSONL line's
    ``question`` field; ``-``: standard input)."""
    if not args.questions:
        if not args.question:
            raise SystemExit("give a question, or --questions FILE (one per line; - for standard input)")
        yield args.question
        return
    handle = sys.stdin if args.questions == "-" else Path(args.questions).open(encoding="utf-8")
    with handle if handle is not sys.stdin else _kept_open(handle):
        for line in handle:
            text = line.strip()
            if not text:
                continue
            if text.startswith("{"):
                try:
                    text = str(json.loads(text).get("question", "")).strip()
                except (ValueError, AttributeError):
                    pass
            if text:
                yield text


class _kept_open:  # noqa: N801 - a context manager that leaves standard input open
    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def __enter__(self) -> Any:
        return self.handle

    def __exit__(self, *exc: Any) -> None:
        return None


def result_json(result: RetrievalResult) -> dict[str, Any]:
    data = result.to_dict()
    data["answer"] = data.get("answer") or {"text": "", "kind": "extractive", "model": ""}
    return data


def summary_line(result: RetrievalResult) -> str:
    total = sum(v for k, v in result.timings_ms.items() if k != "answer")
    return (f"[{result.mode}] {len(result.entities)} entities, {len(result.relations)} relations, "
            f"{len(result.paths)} paths, {len(result.chunks)} chunks, {len(result.summaries)} summaries; "
            f"context {result.context_tokens} tokens; retrieval {total:.1f} ms; LLM calls {result.llm_calls}")


def _print_result(result: RetrievalResult) -> None:
    answer = result.answer
    label = "LLM answer" if answer and answer.kind == "llm" else "Extractive answer (quoted from the context)"
    print(f"== {result.mode} ==")
    print(f"{label}:\n{answer.text if answer else ''}\n")
    if answer is not None and answer.note:
        print(f"({answer.note})\n")
    if answer is not None and answer.ranking == "lexical":
        print("(sentences ranked by shared words: no sentence vectors in this workspace; `repair --sentences`)\n")
    print(summary_line(result))
    for line in result.trace_lines()[:12]:
        print(f"  · {line}")
    print()


def cmd_query(args: argparse.Namespace) -> int:
    ws = open_workspace(args)
    prepared = providers(ws, args)
    many = bool(args.questions)
    for question in questions_of(args):
        result = run_modes(ws, args, [args.mode], question, prepared)[args.mode]
        if args.json:
            print(json.dumps(result_json(result), ensure_ascii=False)) if many else emit_json(result_json(result))
        else:
            if many:
                print(f"### {question}")
            _print_result(result)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    ws = open_workspace(args)
    prepared = providers(ws, args)
    many = bool(args.questions)
    for question in questions_of(args):
        results = run_modes(ws, args, args.modes, question, prepared)
        data = {"question": question, "results": {m: result_json(r) for m, r in results.items()}}
        if args.json:
            print(json.dumps(data, ensure_ascii=False)) if many else emit_json(data)
        else:
            if many:
                print(f"### {question}")
            for result in results.values():
                _print_result(result)
    return 0


def add_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register ``query`` and ``compare``."""
    names = ", ".join(modes())
    for command, text, run, flag, default, flag_help in (
            ("query", "run one retrieval mode on a question", cmd_query, "--mode", "hybrid", f"one of: {names}"),
            ("compare", "run several modes on one question", cmd_compare, "--modes", "all",
             f"'all' or a comma-separated list of: {names}")):
        p = sub.add_parser(command, parents=[common], help=text)
        p.add_argument(flag, default=default, help=f"{flag_help} (default: {default})")
        p.add_argument("--param", action="append", default=[], help=PARAM_HELP)
        add_provider_flags(p)
        add_embedding_flags(p)
        p.add_argument("question", nargs="?", default="", help="the question (or use --questions)")
        p.add_argument("--questions", default="", metavar="FILE",
                       help="run many questions in one process: one per line, or a JSONL question file "
                            "(its 'question' field); - reads standard input. With --json: one JSON line each")
        p.set_defaults(run=run)
