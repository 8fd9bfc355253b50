"""``python -m core annotations export OUT.jsonl | import FILE.jsonl | list``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from core.cli.base import emit_json, open_workspace


def cmd_annotations(args: argparse.Namespace) -> int:
    from core.annotations import annotations as all_annotations
    from core.annotations import import_file, write_export

    ws = open_workspace(args, read_only=args.action in ("list", "export"))
    if args.action == "export":
        count = write_export(ws, Path(args.file))
        print(f"wrote {count} annotated question(s) to {args.file}", file=sys.stderr)
        if args.json:
            emit_json({"questions": count, "path": str(args.file)})
        return 0
    if args.action == "import":
        report = import_file(ws, Path(args.file))
        for reason in report.skipped:
            print(f"skipped: {reason}", file=sys.stderr)
        print(f"imported {report.questions} question(s) and {report.marks} mark(s) from {args.file}", file=sys.stderr)
        if args.json:
            emit_json(report.as_dict())
        return 0
    items = all_annotations(ws)
    if args.json:
        emit_json([{"qid": q.qid, "question": q.question, "answer": q.answer, "gold_doc_ids": q.gold_doc_ids,
                    "relevant": [m.chunk_id for m in q.relevant],
                    "not_relevant": [m.chunk_id for m in q.not_relevant]} for q in items])
    else:
        for q in items:
            print(f"{q.qid}  {len(q.relevant)} relevant, {len(q.not_relevant)} not relevant  {q.question}")
    return 0


def add_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register ``annotations export|import|list``."""
    # the common flags go on each action only: argparse would reset flags given before the action
    p = sub.add_parser("annotations", help="export, import or list the analyst's relevance marks")
    actions = p.add_subparsers(dest="action", required=True)
    e = actions.add_parser("export", parents=[common], help="write the annotations as a question file (JSONL)")
    e.add_argument("file", metavar="OUT.jsonl")
    i = actions.add_parser("import", parents=[common], help="load marks and expected answers from a question file")
    i.add_argument("file", metavar="FILE.jsonl")
    actions.add_parser("list", parents=[common], help="list the annotated questions")
    p.set_defaults(run=cmd_annotations)
