"""CLI commands that read: ``query`` (one mode) and ``compare`` (several modes on one question)."""
from __future__ import annotations

import argparse
from typing import Any

from core.cli.base import (PARAM_HELP, add_embedding_flags, add_provider_flags, emit_json, open_workspace, providers,
                           with_params)
from core.retrieval.registry import modes
from core.types import RetrievalResult


def run_modes(ws: Any, args: argparse.Namespace, modes_: list[str]) -> dict[str, RetrievalResult]:
    """The modes on the question with the run's providers (retrieval is imported only by the commands that use it)."""
    from core.api import run_modes as run
    from core.auth import LOCAL_ADMIN

    llm, keywords = providers(ws, args)
    return run(LOCAL_ADMIN, ws, args.question, modes_, settings=with_params(ws.settings, args), llm=llm, keywords=keywords)


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
    print(summary_line(result))
    for line in result.trace_lines()[:12]:
        print(f"  · {line}")
    print()


def cmd_query(args: argparse.Namespace) -> int:
    ws = open_workspace(args)
    results = run_modes(ws, args, [args.mode])
    result = results[args.mode]
    if args.json:
        emit_json(result_json(result))
    else:
        _print_result(result)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    ws = open_workspace(args)
    results = run_modes(ws, args, args.modes)
    if args.json:
        emit_json({"question": args.question, "results": {m: result_json(r) for m, r in results.items()}})
    else:
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
        p.add_argument(flag, default=default, help=flag_help)
        p.add_argument("--param", action="append", default=[], help=PARAM_HELP)
        add_provider_flags(p)
        add_embedding_flags(p)
        p.add_argument("question")
        p.set_defaults(run=run)
