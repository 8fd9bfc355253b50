"""The int8 MiniLM (onnxruntime, ``local-minilm-int8``) against the torch MiniLM (``local-minilm``).

Prints medians and ratios measured in one run, interleaved (torch, int8, torch, ...) so that a busy
machine slows both alike; the load average is printed with them:

- query embedding: one question alone (``embed_queries([q])``) and a graph mode's packed call (the question
  and three short strings), median ms per call over the dev questions x ``--rounds``, and int8/torch; for
  the question alone also the process CPU ms per call (all threads) and its int8/torch ratio;
- batch embedding (indexing): passages per second over ``--passages`` dev passages in the settings' batch
  size, and int8/torch;
- agreement: cosine of the two vectors of each of ``--texts`` texts (dev questions, then sentences of the
  shared corpora): min, 1st percentile, mean.

Recall per mode with each embedder is the eval CLI on a workspace and its re-embedded copy:
    cp -a WS /tmp/ws_int8 && python -m core repair --reembed --embedder local-minilm-int8 --workspace /tmp/ws_int8
    python -m core eval --workspace WS|/tmp/ws_int8 --questions QUESTIONS --modes all --k 2,5,10

    python benchmarks/int8_embedding.py [--texts 10000] [--rounds 3] [--passages 256]

Quantisation recipes side by side (``--compare-dirs``): int8 model folders (each made like the install's,
with its manifest; ``RAGSCOPE_MINILM_INT8_DIR`` layout), each against the torch vectors of the agreement
texts (cosine min / mean), then interleaved per round: process CPU ms per short query string alone (the
first four words of each dev question, ~6 wordpieces, one session call) and process CPU s for a batch of
``--passages`` dev passages:

    python benchmarks/int8_embedding.py --compare-dirs DIR_A,DIR_B --texts 2000 --rounds 3 --passages 64
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import SHARED_DATA, median, write_result  # noqa: E402

import numpy as np  # noqa: E402

CORPORA = ("dev_musique_full", "dev_musique", "global_podcast_subset", "demo_hipporag_case_studies")


def load_texts(limit: int) -> tuple[list[str], list[str], list[str]]:
    """(questions, passages, agreement texts): the dev questions, dev passages and up to ``limit`` texts."""
    questions = [json.loads(line)["question"] for line in
                 open(SHARED_DATA / "dev_musique" / "questions.jsonl", encoding="utf-8") if line.strip()]
    passages: list[str] = []
    sentences: list[str] = []
    for name in CORPORA:
        path = SHARED_DATA / name / "corpus.jsonl"
        if not path.exists():
            continue
        for line in open(path, encoding="utf-8"):
            if line.strip():
                text = json.loads(line).get("text", "")
                passages.append(text)
                sentences += [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 2]
    texts = list(dict.fromkeys(questions + sentences))[:limit]
    return questions, passages, texts


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def show(key: str, value: object) -> None:
    """One result line, printed as soon as it is known (a long run cut short keeps what it measured)."""
    print(f"{key:34s} {value}", flush=True)


CPU_MS: dict[str, list[float]] = {}  # process CPU ms per call (every thread), by embedder, of time_calls


def time_calls(fn, inputs: list, rounds: int, cpu_key: str = "") -> list[float]:
    """Wall ms per call; with ``cpu_key`` the process CPU ms of each call is kept in ``CPU_MS[cpu_key]``
    (on a busy machine the CPU time is the figure that does not wait for a core)."""
    out = []
    for _ in range(rounds):
        for item in inputs:
            start, cpu = time.perf_counter(), time.process_time()
            fn(item)
            out.append((time.perf_counter() - start) * 1000)
            if cpu_key:
                CPU_MS.setdefault(cpu_key, []).append((time.process_time() - cpu) * 1000)
    return out


def compare_dirs(dirs: list[str], texts: list[str], questions: list[str], passages: list[str],
                 rounds: int, batch_size: int) -> dict:
    """Int8 model folders against the torch vectors and against each other's CPU, interleaved per round."""
    from core.embeddings import local_embedder
    from core.onnx_embeddings import Int8MiniLMEmbedder

    reference = local_embedder(batch_size).embed(texts)
    models = {d: Int8MiniLMEmbedder(batch_size, Path(d)) for d in dirs}
    result: dict[str, dict] = {}
    for d, e in models.items():
        cos = (e.embed(texts) * reference).sum(axis=1)
        result[d] = {"cosine_min": round(float(cos.min()), 4), "cosine_mean": round(float(cos.mean()), 4)}
        show(f"cosine {Path(d).name}", result[d])
    short = [" ".join(q.split()[:4]) for q in questions]
    batch = passages
    query_cpu: dict[str, list[float]] = {d: [] for d in dirs}
    batch_cpu: dict[str, list[float]] = {d: [] for d in dirs}
    for e in models.values():  # first-call set-up not timed
        e.embed_queries(short[:3])
        e.embed(batch[:20])
    show("load average", load_average())
    for _ in range(rounds):
        for d, e in models.items():
            for text in short:
                cpu = time.process_time()
                e.embed_queries([text])
                query_cpu[d].append((time.process_time() - cpu) * 1000)
            cpu = time.process_time()
            e.embed(batch)
            batch_cpu[d].append(time.process_time() - cpu)
    show("load average", load_average())
    for d in dirs:
        result[d] |= {"query_cpu_ms_median": round(median(query_cpu[d]), 3),
                      "batch_cpu_s_median": round(median(batch_cpu[d]), 3)}
        show(Path(d).name, result[d])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=10000, help="texts for the cosine agreement")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the dev questions for query timing")
    parser.add_argument("--passages", type=int, default=256, help="dev passages for the batch throughput")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--compare-dirs", default="", help="comma-separated int8 model folders to compare")
    args = parser.parse_args()
    if args.compare_dirs:
        questions, passages, texts = load_texts(args.texts)
        dirs = [d for d in args.compare_dirs.split(",") if d]
        result = compare_dirs(dirs, texts, questions, passages[: args.passages], args.rounds, args.batch_size)
        write_result("int8_recipes", {"load_average_after": load_average(), "models": result})
        return
    from core.embeddings import local_embedder
    from core.onnx_embeddings import int8_embedder

    questions, passages, texts = load_texts(args.texts)
    embedders = {"torch": local_embedder(args.batch_size), "int8": int8_embedder(args.batch_size)}
    print(f"load average before: {load_average()}  (2 cores shared; ratios are what counts)", flush=True)
    for e in embedders.values():  # first-call set-up not timed
        e.embed_queries(["warm-up text", "a second warm-up"])
        e.embed(["warm-up text"] * 8)
    packed = [[q, q.split()[0], " ".join(q.split()[1:3]), "keyword, another"] for q in questions]
    query_ms: dict[str, list[float]] = {k: [] for k in embedders}
    packed_ms: dict[str, list[float]] = {k: [] for k in embedders}
    for _ in range(args.rounds):  # interleaved: the load hits both
        for name, e in embedders.items():
            query_ms[name] += time_calls(lambda q: e.embed_queries([q]), questions, 1, cpu_key=name)
            packed_ms[name] += time_calls(e.embed_queries, packed, 1)
    show("query_ms_median", {k: round(median(v), 2) for k, v in query_ms.items()})
    show("query_ratio_int8_over_torch", round(median(query_ms["int8"]) / median(query_ms["torch"]), 3))
    show("query_cpu_ms_median", {k: round(median(v), 2) for k, v in CPU_MS.items()})
    show("query_cpu_ratio_int8_over_torch", round(median(CPU_MS["int8"]) / median(CPU_MS["torch"]), 3))
    show("packed_ratio_int8_over_torch", round(median(packed_ms["int8"]) / median(packed_ms["torch"]), 3))
    batch = passages[: args.passages]
    per_s: dict[str, list[float]] = {k: [] for k in embedders}
    for _ in range(2):
        for name, e in embedders.items():
            start = time.perf_counter()
            e.embed(batch)
            per_s[name].append(len(batch) / (time.perf_counter() - start))
    show("batch_speedup_int8_over_torch", round(median(per_s["int8"]) / median(per_s["torch"]), 3))
    start = time.perf_counter()
    vectors = {name: e.embed(texts) for name, e in embedders.items()}
    agreement_s = time.perf_counter() - start
    cos = (vectors["torch"] * vectors["int8"]).sum(axis=1)
    result = {
        "load_average_after": load_average(),
        "query_ms_median": {k: round(median(v), 2) for k, v in query_ms.items()},
        "query_ratio_int8_over_torch": round(median(query_ms["int8"]) / median(query_ms["torch"]), 3),
        "query_cpu_ms_median": {k: round(median(v), 2) for k, v in CPU_MS.items()},
        "query_cpu_ratio_int8_over_torch": round(median(CPU_MS["int8"]) / median(CPU_MS["torch"]), 3),
        "packed_query_ms_median": {k: round(median(v), 2) for k, v in packed_ms.items()},
        "packed_ratio_int8_over_torch": round(median(packed_ms["int8"]) / median(packed_ms["torch"]), 3),
        "batch_passages_per_s_median": {k: round(median(v), 2) for k, v in per_s.items()},
        "batch_speedup_int8_over_torch": round(median(per_s["int8"]) / median(per_s["torch"]), 3),
        "agreement_texts": len(texts),
        "cosine_min": round(float(cos.min()), 4), "cosine_p01": round(float(np.percentile(cos, 1)), 4),
        "cosine_mean": round(float(cos.mean()), 4), "texts_below_0.99": int((cos < 0.99).sum()),
        "agreement_seconds_both": round(agreement_s, 1),
        "worst_texts": [texts[i][:80] for i in np.argsort(cos)[:3]],
    }
    print("\nall results:")
    for key, value in result.items():
        show(key, value)
    write_result("int8_embedding", result)


if __name__ == "__main__":
    main()
