"""Can spaCy's ``ner`` run beside the rest of a question's pipeline on a second thread? (issue 36)

en_core_web_sm's ``ner`` has its own tok2vec, so it could run while tok2vec/tagger/parser/attribute_ruler/
lemmatizer parse the same question, if thinc and blis released the GIL long enough. Per question (each
from a fresh tokenisation), the wall time of the two parts one after the other is compared with the wall
time of the two started together on two threads (a barrier starts both); medians over the questions and
rounds, with the 1-minute load average. An overlap shows as a two-thread median well below the sequential
one. ``--switch-interval`` sets ``sys.setswitchinterval`` (seconds; the default is Python's 0.005).

    python benchmarks/ner_overlap.py [--questions FILE] [--rounds 10] [--switch-interval S]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_QUESTIONS = ROOT.parent / "shared" / "data" / "dev_musique_full" / "questions.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--switch-interval", type=float, default=None)
    args = parser.parse_args()
    from core.extraction.nlp import load_nlp

    if args.switch_interval:
        sys.setswitchinterval(args.switch_interval)
    nlp = load_nlp()
    questions = [json.loads(line)["question"] for line in args.questions.read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    rest = [component for name, component in nlp.pipeline if name not in ("ner", "ragscope_entity_spans")]
    ner = nlp.get_pipe("ner")
    start, finish = threading.Barrier(2), threading.Barrier(2)
    job: list = [None]

    def worker() -> None:
        while True:
            start.wait()
            if job[0] is None:
                return
            ner(job[0])
            finish.wait()

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    sequential, together = [], []
    for _ in range(args.rounds):
        for question in questions:
            mine, theirs = nlp.make_doc(question), nlp.make_doc(question)
            began = time.perf_counter()
            for component in rest:
                component(mine)
            ner(theirs)
            sequential.append(time.perf_counter() - began)
            mine, job[0] = nlp.make_doc(question), nlp.make_doc(question)
            began = time.perf_counter()
            start.wait()
            for component in rest:
                component(mine)
            finish.wait()
            together.append(time.perf_counter() - began)
    job[0] = None
    start.wait()
    thread.join()
    print(f"load {os.getloadavg()[0]:.2f}  {len(sequential)} parses  wall p50: one thread "
          f"{median(sequential) * 1e3:.2f} ms, ner on a second thread {median(together) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
