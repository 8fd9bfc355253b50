"""CLI commands that read: ``query`` (one mode) and ``compare`` (several modes on one question)."""
from __future__ import annotations

import argparse
import threading
from typing import Any, Optional

from core.types import RetrievalResult

PARAM_HELP = "override a setting for this query, e.g. --param tree_top_k=10 (repeatable)"


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """'key=value' strings → typed overrides (validated later by the settings model)."""
    import json

    out: dict[str, Any] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ValueError(f"--param expects key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out


def _settings(ws, args: argparse.Namespace):
    return ws.settings.with_overrides(parse_params(args.param)) if args.param else ws.settings


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
    print(summary_line(result))
    for line in result.trace[:12]:
        print(f"  · {line}")
    print()


def cmd_query(args: argparse.Namespace) -> int:
    from core.api import run_modes
    from core.cli import emit_json, open_workspace

    ws = open_workspace(args)
    llm, keywords = _providers(ws, args)
    results = run_modes(ws, args.question, [args.mode], settings=_settings(ws, args), llm=llm, keywords=keywords)
    result = results[args.mode]
    if args.json:
        emit_json(result_json(result))
    else:
        _print_result(result)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from core.api import run_modes
    from core.cli import emit_json, open_workspace

    ws = open_workspace(args)
    llm, keywords = _providers(ws, args)
    results = run_modes(ws, args.question, args.modes, settings=_settings(ws, args), llm=llm, keywords=keywords)
    if args.json:
        emit_json({"question": args.question, "results": {m: result_json(r) for m, r in results.items()}})
    else:
        for result in results.values():
            _print_result(result)
    return 0


def _providers(ws, args: argparse.Namespace, cancel_event: Optional[threading.Event] = None):
    """(chat model or None, keyword extractor or None) from flags, environment and settings;
    ``cancel_event`` becomes the client's cancellation."""
    try:
        from core.llm.provider import providers_from_args
    except ImportError:
        return None, None
    return providers_from_args(ws, args, cancel_event)


def add_provider_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--llm-base-url", default=None, help="OpenAI-compatible base URL (env RAGSCOPE_LLM_BASE_URL)")
    parser.add_argument("--llm-model", default=None, help="chat model name (env RAGSCOPE_LLM_MODEL)")
    parser.add_argument("--offline", action="store_true", help="force the offline path even if an LLM is configured")


def add_embedding_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--embedding-base-url", default=None,
                        help="OpenAI-compatible embeddings server, e.g. http://127.0.0.1:7997 "
                             "(env RAGSCOPE_EMBEDDING_BASE_URL; selects embedder=openai)")
    parser.add_argument("--embedding-model", default=None,
                        help="embedding model name on that server (env RAGSCOPE_EMBEDDING_MODEL)")


def add_commands(sub, common: argparse.ArgumentParser, command) -> None:
    p = sub.add_parser("query", parents=[common], help="run one retrieval mode on a question")
    p.add_argument("--mode", default="hybrid")
    p.add_argument("--param", action="append", default=[], help=PARAM_HELP)
    add_provider_flags(p)
    add_embedding_flags(p)
    p.add_argument("question")
    command("query")(cmd_query)
    p = sub.add_parser("compare", parents=[common], help="run several modes on one question")
    p.add_argument("--modes", default="all", help="'all' or a comma-separated list")
    p.add_argument("--param", action="append", default=[], help=PARAM_HELP)
    add_provider_flags(p)
    add_embedding_flags(p)
    p.add_argument("question")
    command("compare")(cmd_compare)
    try:
        from core.evaluation.cli import add_eval_command
    except ImportError:  # the evaluation package is optional while it is being built
        return
    add_eval_command(sub, common, command)
    from core.annotations.cli import add_annotations_command
    from core.judge.cli import add_judge_command

    add_annotations_command(sub, common, command)
    add_judge_command(sub, common, command)
