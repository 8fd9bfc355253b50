"""The first Compare after the app starts: a fresh process opens the workspace, starts the app's
warm-up (``core.warmup.start_warmup``: models and the workspace's views in a daemon thread), and
times one ``run_modes`` call with every mode and offline answers. Three numbers:

* ``warmup_s`` — how long the warm-up thread ran (the time from server start it needs);
* ``first_compare_after_warmup_s`` — the first Compare clicked once the warm-up has finished;
* ``first_compare_cold_s`` (``--cold``, a second fresh process) — the same click with no warm-up.

    python benchmarks/first_compare.py --workspace W [--question TEXT] [--cold]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from common import write_result

QUESTION = "What is the native language of the person who broke the salt law in Belgium in 1930?"


def one(workspace: str, question: str, warm: bool) -> dict:
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.warmup import start_warmup
    from core.workspace import Workspace

    ws = Workspace(Path(workspace))
    out: dict = {}
    if warm:
        started = time.perf_counter()
        start_warmup()
        thread = start_warmup(ws)
        if thread is not None:
            thread.join()
        for other in list(__import__("core.warmup", fromlist=["_THREADS"])._THREADS):
            other.join()
        out["warmup_s"] = round(time.perf_counter() - started, 3)
    started = time.perf_counter()
    run_modes(LOCAL_ADMIN, ws, question, "all")
    out["first_compare_after_warmup_s" if warm else "first_compare_cold_s"] = round(time.perf_counter() - started, 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--cold", action="store_true", help="also time the first Compare without a warm-up")
    parser.add_argument("--child", choices=["warm", "cold"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one(args.workspace, args.question, args.child == "warm")))
        return
    result: dict = {"workspace": args.workspace, "question": args.question}
    for kind in (["warm", "cold"] if args.cold else ["warm"]):
        proc = subprocess.run([sys.executable, __file__, "--workspace", args.workspace, "--question", args.question,
                               "--child", kind], capture_output=True, text=True, check=True)
        result.update(json.loads(proc.stdout.strip().splitlines()[-1]))
    print(json.dumps(result, indent=2))
    write_result(f"first_compare_{Path(args.workspace).name}", result)


if __name__ == "__main__":
    main()
