"""Helpers shared by the benchmark scripts: offline env, timing, JSON output."""
from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import core  # noqa: E402,F401 - sets the offline process environment (core.config)

SHARED_DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"


def require(path: Path) -> Path:
    if not path.exists():
        sys.exit(f"missing input {path} (the shared data folder is not available here)")
    return path


def median(values: list[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def p95(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))])


def write_result(name: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    data = dict(data, written_at=time.strftime("%Y-%m-%dT%H:%M:%S"), cpu_count=os.cpu_count())
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    print(f"\nwrote {path}")
    return path


def peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def question_parser(doc: str, questions: Path):
    """An argument parser with the ``--workspace`` and ``--questions`` flags every question benchmark takes."""
    import argparse

    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--questions", default=str(questions))
    return parser


def workspace_and_questions(args):
    """The workspace and the loaded question list named by ``question_parser``'s flags."""
    from core.evaluation.questions import load_questions
    from core.workspace import Workspace

    return Workspace(Path(args.workspace)), load_questions(Path(args.questions))
