"""Dump what a Compare click gives for every question of a file, so two versions of the code can be
checked for identical results: per question and mode the chunk ids, the context text, its token count and the answer
(text, kind, note, ranking), as JSON lines. With ``--against FILE`` the new dump is compared with an
earlier one and every difference is printed (exit status 1 when any).

    python benchmarks/compare_identity.py --workspace W --questions FILE --out NEW.jsonl [--against OLD.jsonl] [--warm]

Each question runs as a fresh Compare (the per-process memos of parses and rendered rows cleared), the
modes in Compare's order. The workspace is only read; pass a copy.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from common import SHARED_DATA

SEVEN_MODES = "naive,local,global,hybrid,mix,tree,path"


def dump_line(question: str, results: dict) -> dict:
    """The parts of each mode's result the identity check compares."""
    out: dict = {"question": question, "modes": {}}
    for mode, result in results.items():
        answer = result.answer
        out["modes"][mode] = {
            "chunks": [hit.chunk_id for hit in result.chunks],
            "context": result.context_text,
            "tokens": result.context_tokens,
            "answer": None if answer is None else [answer.text, answer.kind, answer.note, answer.ranking],
        }
    return out


def differences(old: list[dict], new: list[dict]) -> list[str]:
    """Human-readable differences between two dumps (empty when identical)."""
    found = []
    if len(old) != len(new):
        found.append(f"{len(old)} questions before, {len(new)} after")
    for before, after in zip(old, new):
        if before["question"] != after["question"]:
            found.append(f"question order differs: {before['question']!r} vs {after['question']!r}")
            continue
        for mode in sorted(set(before["modes"]) | set(after["modes"])):
            a, b = before["modes"].get(mode), after["modes"].get(mode)
            if a is None or b is None:
                found.append(f"{mode}: missing in one dump for {before['question']!r}")
                continue
            for part in ("chunks", "context", "tokens", "answer"):
                if part in a and part in b and a[part] != b[part]:
                    found.append(f"{mode} {part} differs for {before['question']!r}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--questions", default=str(SHARED_DATA / "dev_musique_full" / "questions.jsonl"))
    parser.add_argument("--modes", default=SEVEN_MODES)
    parser.add_argument("--out", required=True)
    parser.add_argument("--against", default="")
    parser.add_argument("--warm", action="store_true", help="load what the app's warm-up loads first (core.warmup)")
    args = parser.parse_args()

    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.evaluation.questions import load_questions
    from core.retrieval.registry import parse_modes
    from core.workspace import Workspace
    from retrieval_latency import clear_memos

    ws = Workspace(Path(args.workspace))
    modes = parse_modes(args.modes)
    if args.warm:
        from core.warmup import warm_workspace

        warm_workspace(ws)
    lines = []
    for question in [q.question for q in load_questions(Path(args.questions))]:
        clear_memos()
        lines.append(dump_line(question, run_modes(LOCAL_ADMIN, ws, question, modes)))
    Path(args.out).write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines), encoding="utf-8")
    print(f"{len(lines)} questions x {len(modes)} modes written to {args.out}")
    if args.against:
        old = [json.loads(line) for line in Path(args.against).read_text(encoding="utf-8").splitlines() if line]
        found = differences(old, lines)
        for line in found:
            print(line)
        print("identical" if not found else f"{len(found)} differences")
        sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
