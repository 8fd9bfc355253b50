"""``python -m core router train``: fit the ``auto`` mode's router on per-question gold recall and print its
cross-validated figures (held-out questions only: grouped k-fold by question id).

Rows come from ``--questions`` on the workspace (every candidate mode is run, or its recalls are read
from an ``eval --per-question`` JSON file given with ``--eval-rows``) and from earlier ``--save-rows``
files given with ``--rows`` (another question set, another workspace). The model is written to ``--out``
(default: the workspace's ``router.json``, which its ``auto`` mode then uses)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from core.auth import LOCAL_ADMIN
from core.cli.base import add_embedding_flags, add_provider_flags, emit_json, open_workspace, providers, with_params


def _pct(value: Any) -> str:
    return f"{100 * value:5.1f}" if isinstance(value, (int, float)) else "   - "


def cv_table(cv: dict[str, Any]) -> str:
    """The held-out figures, one line per question set and one over all rows."""
    lines = [f"cross-validated ({cv.get('folds')}-fold by question, {cv.get('target')}); held-out questions only",
             f"{'set':<22} {'n':>4}  {'auto':>5}  {'best fixed':>18}  {'oracle':>6}  {'regret':>6}  chosen"]
    for label, t in cv.items():
        if not isinstance(t, dict) or "auto" not in t:
            continue
        best = t["best_fixed"]
        chosen = ", ".join(f"{m} {n}" for m, n in t["chosen"].items())
        lines.append(f"{label:<22} {t['questions']:>4}  {_pct(t['auto'])}  {best['mode']:>10} {_pct(best['recall'])}  "
                     f"{_pct(t['oracle'])}   {_pct(t['regret'])}  {chosen}")
    return "\n".join(lines)


def cmd_train(args: argparse.Namespace) -> int:
    from core import api
    from core.evaluation.questions import load_questions

    rows: list[dict[str, Any]] = []
    for path in args.rows:
        rows.extend(json.loads(Path(path).read_text(encoding="utf-8")))
    ws = open_workspace(args) if (args.questions or not args.out) else None
    if args.questions and ws is not None:
        questions = load_questions(Path(args.questions))
        eval_rows = json.loads(Path(args.eval_rows).read_text(encoding="utf-8")) if args.eval_rows else None
        _, keywords = providers(ws, args)
        label = args.label or Path(args.questions).resolve().parent.name
        fresh = api.router_rows(LOCAL_ADMIN, ws, questions, label, args.k, eval_rows=eval_rows,
                                settings=with_params(ws.settings, args), keywords=keywords)
        if args.save_rows:
            Path(args.save_rows).write_text(json.dumps(fresh, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        rows.extend(fresh)
    path, cv = api.train_router(LOCAL_ADMIN, ws, rows, args.out or None, target=f"recall@{args.k}",
                                cross_validate=not args.no_cv)
    if args.json:
        emit_json({"model": path, "rows": len(rows), "cv": cv})
    else:
        print(f"router model written to {path} ({len(rows)} rows)")
        if cv:
            print(cv_table(cv))
    return 0


def add_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register ``router train``."""
    router = sub.add_parser("router", help="the auto mode's router: train it on per-question gold recall")
    rsub = router.add_subparsers(dest="router_command", required=True)
    p = rsub.add_parser("train", parents=[common], help="fit the router and print its cross-validated figures")
    p.add_argument("--questions", default="", help="JSONL question file of this workspace (FORMAT.md layout)")
    p.add_argument("--eval-rows", default="", help="an 'eval --per-question' .json of the same questions "
                   "(its recalls are used instead of running the modes again)")
    p.add_argument("--label", default="", help="name of this question set in the figures (default: its folder)")
    p.add_argument("--rows", action="append", default=[], help="training rows saved earlier with --save-rows "
                   "(repeatable)")
    p.add_argument("--save-rows", default="", help="write this set's training rows to a .json file")
    p.add_argument("--out", default="", help="where to write the model (default: the workspace's router.json)")
    p.add_argument("--k", type=int, default=5, help="the recall cut-off the router is trained on")
    p.add_argument("--no-cv", action="store_true", help="skip the cross-validated figures")
    p.add_argument("--param", action="append", default=[], help="setting override key=value (repeatable)")
    add_provider_flags(p)
    add_embedding_flags(p)
    p.set_defaults(run=cmd_train)
