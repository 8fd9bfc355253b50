"""``python -m core eval``: evidence recall and answer-in-answer per mode for a question file."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.csv_safe import csv_text
from core.cli.base import add_embedding_flags, add_provider_flags, emit_json, open_workspace, providers, with_params
from core.retrieval.registry import modes, parse_modes


def _table(report) -> str:
    ks = report.ks
    header = f"{'mode':<8}" + "".join(f" R@{k:<5}" for k in ks) + "".join(f" all@{k:<3}" for k in ks) + \
        "  ans-in-ctx  ans-in-ans  1st-line  bold-ok  bold-wrong  ctx-tokens  p50 ms  p95 ms"
    lines = [header]
    for mode, s in report.modes.items():
        def pct(v):
            return f"{100 * v:5.1f} " if v is not None else "   -  "
        lines.append(f"{mode:<8}" + "".join(f" {pct(s['recall@k'][str(k)])}" for k in ks)
                     + "".join(f" {pct(s['all@k'][str(k)])}" for k in ks)
                     + f"  {pct(s['answer_in_context'])}      {pct(s.get('answer_in_answer'))}     "
                     + f"{pct(s.get('answer_in_first_line'))}   {pct(s.get('right_bold'))}  {pct(s.get('wrong_bold'))}     "
                     + f"{s['context_tokens'] or 0:9.0f}"
                     + f"  {s['latency_ms']['p50'] or 0:6.1f}  {s['latency_ms']['p95'] or 0:6.1f}")
    auto = report.modes.get("auto", {})
    if "regret" in auto:
        chosen = ", ".join(f"{m} {n}" for m, n in sorted(auto["chosen"].items(), key=lambda kv: (-kv[1], kv[0])))
        lines.append(f"auto chose: {chosen} (of {auto['questions']} questions)")
        for k in ks:
            best = auto["best_fixed"][str(k)] or {}
            lines.append(f"auto R@{k}: {100 * (auto['auto'][str(k)] or 0):.1f}  best fixed {best.get('mode', '-')} "
                         f"{100 * (best.get('recall') or 0):.1f}  oracle {100 * (auto['oracle'][str(k)] or 0):.1f}  "
                         f"regret {100 * (auto['regret'][str(k)] or 0):.1f}")
    return "\n".join(lines)


def write_rows(rows: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".csv":
        keys = list(dict.fromkeys(k for r in rows for k in r))
        cells = ({k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in r.items()} for r in rows)
        with path.open("w", newline="", encoding="utf-8") as handle:
            handle.write(csv_text(cells, keys))  # formula-looking cells neutralised (core.csv_safe)
    else:
        path.write_text(json.dumps(rows, indent=1), encoding="utf-8")


def cmd_eval(args: argparse.Namespace) -> int:
    from core.evaluation.questions import load_questions
    from core.evaluation.runner import evaluate

    ws = open_workspace(args)
    settings = with_params(ws.settings, args)
    questions = load_questions(Path(args.questions))
    if args.limit:
        questions = questions[: args.limit]
    ks = [int(k) for k in args.k.split(",") if k.strip()]
    llm, keywords = providers(ws, args)  # LLM keywords when an LLM is configured; no answers are generated
    if args.since_edit is not None:
        from core.cli.edit import print_edit_impact

        try:
            return print_edit_impact(ws, questions, parse_modes(args.modes), args.since_edit, ks, settings, keywords,
                                     args.json)
        finally:
            if llm is not None:
                llm.flush()
    try:
        report = evaluate(ws, questions, parse_modes(args.modes), ks, settings=settings, keywords=keywords)
    finally:
        if llm is not None:
            llm.flush()
    sources = ", ".join(f"{n} {s}" for s, n in report.keywords.get("questions_by_source", {}).items())
    print(f"query keywords: {report.keywords.get('extractor', '?')}" + (f" ({sources} question(s))" if sources else ""),
          file=sys.stderr)
    if args.per_question:
        write_rows(report.rows, Path(args.per_question))
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        emit_json(report.summary())
    else:
        print(f"{report.questions} questions")
        print(_table(report))
    return 0


def add_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register ``eval``."""
    p = sub.add_parser("eval", parents=[common], help="evidence recall of each mode on a question file")
    p.add_argument("--questions", required=True, help="JSONL question file (shared FORMAT.md layout)")
    p.add_argument("--modes", default="all", help=f"'all' or a comma-separated list of: {', '.join(modes())}")
    p.add_argument("--k", default="2,5,10", help="comma-separated cut-offs")
    p.add_argument("--limit", type=int, default=0, help="only the first N questions")
    p.add_argument("--per-question", default="", help="write per-question rows to this .csv or .json file")
    p.add_argument("--param", action="append", default=[], help="setting override key=value (repeatable)")
    p.add_argument("--since-edit", type=int, default=None, metavar="N",
                   help="what the graph edits N and later changed: every mode on a copy with them undone (before) "
                        "and on the workspace (after), and the questions that changed")
    add_provider_flags(p)
    add_embedding_flags(p)
    p.set_defaults(run=cmd_eval)
