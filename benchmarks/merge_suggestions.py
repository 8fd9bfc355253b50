"""Time of the merge suggestions (``core.editing.suggest.rank``) at 10 000 entities and on a real workspace.

    python benchmarks/merge_suggestions.py [--entities 10000] [--runs 3] [--workspace W]

The synthetic graph: names of one to four words drawn Zipf-like from a 4 000-word vocabulary, one of
eight types, 1-3 documents out of 2 000, a few neighbours, 384-dimensional unit profile vectors (a
tenth of them near copies of another entity's, so the vector blocking has work to do). ``rank`` is the
whole ranking (blocking, kNN over the profile vectors, scoring); with ``--workspace`` the real
workspace is also timed: reading its profiles and vectors (``load``) and ranking (``rank``).
Prints the median of each stage over the runs.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from common import median, write_result

from core.editing.suggest import Profile, profiles_of, rank

TYPES = ["PERSON", "ORG", "GPE", "LOC", "FAC", "EVENT", "WORK_OF_ART", "NORP"]


def synthetic(n: int, seed: int = 7) -> tuple[list[Profile], np.ndarray]:
    rng = np.random.default_rng(seed)
    letters = list("abcdefghijklmnoprstuvwy")
    vocabulary = sorted({"".join(rng.choice(letters, rng.integers(3, 10))) for _ in range(4500)})[:4000]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    profiles: list[Profile] = []
    for i in range(n):
        name = " ".join(w.title() for w in rng.choice(vocabulary, rng.integers(1, 5), p=weights))
        docs = frozenset(f"d{d}" for d in rng.integers(0, 2000, rng.integers(1, 4)))
        neighbours = frozenset(f"e{j}" for j in rng.integers(0, n, rng.integers(0, 6)))
        profiles.append(Profile(f"e{i}", name, str(rng.choice(TYPES)), docs, len(docs), neighbours))
    vectors = rng.normal(size=(n, 384)).astype(np.float32)
    for i in rng.choice(n, n // 10, replace=False):
        vectors[i] = vectors[(i + 1) % n] + rng.normal(scale=0.2, size=384)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return profiles, vectors


def timed(runs: int, work) -> tuple[list[float], object]:
    times, out = [], None
    for _ in range(runs):
        start = time.perf_counter()
        out = work()
        times.append(time.perf_counter() - start)
    return times, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workspace", type=Path, default=None)
    args = parser.parse_args()
    profiles, vectors = synthetic(args.entities)
    times, found = timed(args.runs, lambda: rank(profiles, vectors, (), 50))
    result = {"entities": args.entities, "rank_s": median(times), "runs": args.runs,
              "suggestions": len(found or [])}
    print(f"synthetic {args.entities} entities: rank median {median(times):.2f} s over {args.runs} run(s)")
    if args.workspace:
        from core.workspace import Workspace

        ws = Workspace(args.workspace)
        loads, (real, real_vectors) = timed(args.runs, lambda: profiles_of(ws))
        ranks, _ = timed(args.runs, lambda: rank(real, real_vectors, (), 50))
        ws.close()
        result.update(workspace=args.workspace.name, workspace_entities=len(real), load_s=median(loads),
                      workspace_rank_s=median(ranks))
        print(f"{args.workspace.name} ({len(real)} entities): load median {median(loads):.2f} s, "
              f"rank median {median(ranks):.2f} s")
    write_result("merge_suggestions", result)


if __name__ == "__main__":
    main()
