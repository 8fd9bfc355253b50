"""``python -m core edit merge|rename|retype|delete|relate|describe …`` and
``python -m core edits list|undo [ID]|export [OUT]|import FILE|suggest|dismiss A B``: hand edits of the knowledge graph
(``core.editing``) through ``core.api`` as the local admin. Names are entity names or ids (the
normalised name), compared case-insensitively."""
from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from core.cli.base import emit_json, open_workspace


def _edit_request(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    if args.op == "merge":
        if len(args.names) < 2:
            raise ValueError("merge needs two or more names; the last one survives")
        return "merge", {"names": args.names[:-1], "into": args.names[-1]}
    if args.op == "rename":
        return "rename", {"name": args.name, "to": args.new_name}
    if args.op == "retype":
        return "retype", {"name": args.name, "type": args.type}
    if args.op == "describe":
        return "describe", {"name": args.name, "description": args.description}
    if args.op == "delete":
        if args.other:
            return "delete_relation", {"source": args.name, "target": args.other}
        return "delete_entity", {"name": args.name}
    request = {"source": args.source, "target": args.target, "description": args.description,
               "keywords": [k.strip() for k in (args.keywords or "").split(",") if k.strip()]}
    if args.chunk:
        request["chunk_id"] = args.chunk
    return "relate", request


def cmd_edit(args: argparse.Namespace) -> int:
    from core.api import edit_graph
    from core.auth import LOCAL_ADMIN

    op, request = _edit_request(args)
    ws = open_workspace(args)
    result = edit_graph(LOCAL_ADMIN, ws, op, request)
    if args.json:
        emit_json(asdict(result))
    else:
        changed = ", ".join(f"{k} {v}" for k, v in sorted(result.summary.items()))
        print(f"edit {result.edit_id}: {op} ({changed}); {result.embedded} vector(s) re-embedded")
    return 0


def cmd_edits(args: argparse.Namespace) -> int:
    from core.api import export_graph_edits, graph_edits, import_graph_edits, undo_graph_edit
    from core.auth import LOCAL_ADMIN

    if args.action in ("suggest", "dismiss"):
        return _suggestions(args)
    ws = open_workspace(args, read_only=args.action in ("list", "export"))
    if args.action == "undo":
        edit = undo_graph_edit(LOCAL_ADMIN, ws, args.id)
        print(f"undid edit {edit.id} ({edit.op})", file=sys.stderr)
        if args.json:
            emit_json({"undone": edit.id, "op": edit.op})
        return 0
    if args.action == "export":
        text = export_graph_edits(LOCAL_ADMIN, ws)
        if args.file:
            Path(args.file).write_text(text + "\n", encoding="utf-8")
            print(f"wrote the edit log to {args.file}", file=sys.stderr)
        else:
            sys.stdout.write(text + "\n")
        return 0
    if args.action == "import":
        report = import_graph_edits(LOCAL_ADMIN, ws, Path(args.file).read_text(encoding="utf-8"))
        for position, reason in report.skipped:
            print(f"skipped edit {position}: {reason}", file=sys.stderr)
        print(f"applied {len(report.applied)} edit(s), skipped {len(report.skipped)}", file=sys.stderr)
        if args.json:
            emit_json({"applied": report.applied, "skipped": [list(s) for s in report.skipped]})
        return 0
    edits = graph_edits(LOCAL_ADMIN, ws)
    if args.json:
        emit_json([asdict(e) for e in edits])
    else:
        for e in edits:
            state = "undone" if e.undone else "active"
            print(f"{e.id:>5}  {state:<6}  {e.op:<15}  {e.principal or '-'}  {e.args}")
    return 0


def _suggestions(args: argparse.Namespace) -> int:
    from core.api import dismiss_merge_suggestion, merge_suggestions
    from core.auth import LOCAL_ADMIN

    if args.action == "dismiss":
        count = dismiss_merge_suggestion(LOCAL_ADMIN, open_workspace(args), args.a, args.b, args.restore)
        print(f"{'restored' if args.restore else 'dismissed'} {args.a} / {args.b} ({count} dismissed pair(s))",
              file=sys.stderr)
        return 0
    found = merge_suggestions(LOCAL_ADMIN, open_workspace(args, read_only=True), args.top)
    if args.json:
        emit_json([asdict(s) for s in found])
        return 0
    for rank, s in enumerate(found, 1):
        print(f"{rank:>3}  {s.score:.3f}  {s.merge_name} [{s.merge_type or '-'}] -> {s.into_name} "
              f"[{s.into_type or '-'}]  ({'; '.join(s.evidence)})")
    return 0


def _pct(value: Any) -> str:
    return "  -  " if value is None else f"{100 * value:5.1f}"


def print_edit_impact(ws: Any, questions: list, modes: list[str], since: int, ks: list[int], settings: Any,
                      keywords: Any, as_json: bool) -> int:
    """``eval --since-edit N``: the per-mode before → after table and the questions that changed."""
    from core.api import evaluate_edits
    from core.auth import LOCAL_ADMIN

    impact = evaluate_edits(LOCAL_ADMIN, ws, questions, modes, since, ks, settings=settings, keywords=keywords)
    if as_json:
        emit_json(impact.summary())
        return 0
    print(f"{impact.after.questions} questions; before = edits {', '.join(map(str, impact.undone))} undone in a copy")
    columns = [f"R@{k}" for k in ks] + [f"all@{k}" for k in ks] + ["ans-in-ans"]
    print(f"{'mode':<8}" + "".join(f" {c:>13}" for c in columns) + "   ctx-tokens     changed")
    for row in impact.table():
        cells = "".join(f" {_pct(row[c][0])}→{_pct(row[c][1])} " for c in columns)
        before, after = row["ctx-tokens"]
        print(f"{row['mode']:<8}{cells}  {before or 0:5.0f}→{after or 0:<5.0f}  {row['changed']:>5}")
    if impact.changed:
        print("\nquestions whose evidence or answer changed (the gold documents whose rank moved, before → after):")
    for c in impact.changed:
        ranks = "; ".join(f"{g}: {c['gold_ranks_before'].get(g) or '-'} → {r or '-'}"
                          for g, r in c["gold_ranks_after"].items() if c["gold_ranks_before"].get(g) != r)
        recall = ", ".join(f"R@{k} {_pct(c[f'R@{k}'][0]).strip()}→{_pct(c[f'R@{k}'][1]).strip()}" for k in ks)
        print(f"  {c['qid']:<14} {c['mode']:<7} {recall}; answer {c['answer_in_answer'][0]}→"
              f"{c['answer_in_answer'][1]}; {ranks}")
    return 0


def add_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register ``edit …`` and ``edits …``."""
    p = sub.add_parser("edit", help="edit the knowledge graph by hand (merge, rename, retype, delete, relate, describe)")
    ops = p.add_subparsers(dest="op", required=True)
    m = ops.add_parser("merge", parents=[common], help="merge entities: NAME… TARGET (the last one survives)")
    m.add_argument("names", nargs="+", metavar="NAME")
    r = ops.add_parser("rename", parents=[common], help="rename an entity")
    r.add_argument("name")
    r.add_argument("new_name", metavar="NEW_NAME")
    t = ops.add_parser("retype", parents=[common], help="change an entity's type")
    t.add_argument("name")
    t.add_argument("type")
    d = ops.add_parser("delete", parents=[common], help="delete an entity and its relations, or (two names) one relation")
    d.add_argument("name")
    d.add_argument("other", nargs="?", default=None, help="the relation's other entity")
    a = ops.add_parser("relate", parents=[common], help="add a relation between two entities")
    a.add_argument("source")
    a.add_argument("target")
    a.add_argument("--description", default="", help="what the relation says")
    a.add_argument("--keywords", default="", help="comma-separated keywords")
    a.add_argument("--chunk", default="", help="a source chunk id for the relation")
    s = ops.add_parser("describe", parents=[common], help="replace an entity's description")
    s.add_argument("name")
    s.add_argument("description")
    p.set_defaults(run=cmd_edit)

    q = sub.add_parser("edits", help="list, undo, export or import the graph edit log")
    actions = q.add_subparsers(dest="action", required=True)
    actions.add_parser("list", parents=[common], help="list the edits, oldest first")
    u = actions.add_parser("undo", parents=[common], help="undo the last edit, or the edit ID")
    u.add_argument("id", nargs="?", type=int, default=None)
    e = actions.add_parser("export", parents=[common], help="write the active edits as JSON (stdout without OUT)")
    e.add_argument("file", nargs="?", default=None, metavar="OUT.json")
    i = actions.add_parser("import", parents=[common], help="apply an exported edit log")
    i.add_argument("file", metavar="FILE.json")
    g = actions.add_parser("suggest", parents=[common], help="ranked candidate duplicates to merge, with their evidence")
    g.add_argument("--top", type=int, default=50, help="how many (default 50)")
    x = actions.add_parser("dismiss", parents=[common], help="never suggest merging A and B again")
    x.add_argument("a", metavar="A")
    x.add_argument("b", metavar="B")
    x.add_argument("--restore", action="store_true", help="forget the dismissal instead")
    q.set_defaults(run=cmd_edits)
