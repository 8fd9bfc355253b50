"""Indexing and retrieval at a team's size: a ~1 M-token corpus, measured at 100 k and 1 M tokens.

    python benchmarks/million_tokens.py [--sizes 100000 1000000] [--root /tmp/ragscope-million] [--questions 30]
    python benchmarks/million_tokens.py corpus --tokens 1000000 --out FILE.jsonl   # the corpus only
    python benchmarks/million_tokens.py measure --tokens N --root DIR              # one size (own process)
        [--embedder local-minilm] [--index-only]   # torch instead of the default int8; no retrieval timing
    python benchmarks/million_tokens.py remeasure --tokens N --root DIR            # re-time a built ws-N

The corpus. Every ``corpus.jsonl`` under ``../shared/data`` (about half a million cl100k tokens), its
documents in one order fixed by ``random.Random(20261201)``; then renamed copies of the same documents
in the same order until the size is reached. A renamed copy ``k`` replaces every capitalised word of
three or more letters (``[A-Z][a-z]{2,}``, except a list of sentence-initial function words such as
"The", "In", "After") by a made-up name of about the same length, spelled from syllables chosen by
SHA-256 of ``"k:word"``: the same word gets the same new name in every document of copy ``k`` (so
cross-document facts stay connected) and another name in copy ``k + 1``; numbers, lowercase words,
sentence structure and lengths stay. Its documents get the ids ``ORIGINAL_ID~rk``. The 100 k corpus
is the first documents of the same list, so it is a subset of the 1 M one.

Each size runs in its own process (``measure``), so the peak memory (``ru_maxrss``) is that size's:

* index time: register + ``process_pending`` (MiniLM and spaCy loaded before the clock starts; their load
  time is reported apart); batch-by-batch progress goes to ``ROOT/progress-N.jsonl`` as it happens, so
  a run stopped early still says how far it got and how fast each part went;
* workspace size on disk (``du`` of the folder: SQLite + ChromaDB);
* retrieval latency per mode: median and p95 over ``--questions`` questions (the shared question files
  in turn), a fresh ``QueryContext`` per call (query embedding included, no cache carried over);
* the Knowledge graph page's open time: the page's own data path, ``ui.graph_page.open_default``, on a
  freshly opened workspace — counts and type choices, the default view (the 60 best-connected nodes, read
  from storage) laid out as HTML, the selected node's details and first chunks. Wall and CPU time; the first
  open and the median of 3 more; the mention graph's open likewise.

``remeasure`` re-runs only those two timings (the same functions and questions) on an already built
``ROOT/ws-N``, without re-indexing, and writes ``ROOT/result-N-remeasure.json`` (with the code's commit and
the load average before and after), so both sizes can be re-timed with the final code on a quiet machine.
It opens the workspace for writing (a workspace of an older schema gets its new indexes on that open).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from common import ROOT, SHARED_DATA, median, p95, write_result

ORDER_SEED = 20261201
NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")
KEEP = frozenset("""The This That These Those There Then Their They Thus Though Through Throughout In Into It Its
For From Following During Despite After Before Between Since Until While When Where Which What Who Whom Whose Why
How However Although Also And But Not Nor Yet Some Many Most Much Other Another Each Every All Any Both Such Only
One Two Three Four Five Six Seven Eight Nine Ten First Second Third Last Next New Old His Her Our Your Our She
Was Were Are Has Had Have Its Upon Under Over About Above Below Against Among Along Around With Without Within
January February March April May June July August September October November December Monday Tuesday Wednesday
Thursday Friday Saturday Sunday""".split())
ONSETS = ["b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "r", "s", "st", "t", "tr", "v",
          "w", "z", "th", "sh", "ch"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ou", "y"]
CODAS = ["", "", "n", "r", "l", "s", "m", "nd", "rt", "x"]


# --------------------------------------------------------------------------- the corpus
def invented(word: str, copy: int) -> str:
    """A made-up capitalised name standing for ``word`` in renamed copy ``copy`` (deterministic)."""
    digest = hashlib.sha256(f"{copy}:{word}".encode("utf-8")).digest()
    syllables = max(1, min(3, round(len(word) / 4)))
    parts = []
    for i in range(syllables):
        a, b, c = digest[3 * i], digest[3 * i + 1], digest[3 * i + 2]
        parts.append(ONSETS[a % len(ONSETS)] + VOWELS[b % len(VOWELS)] + CODAS[c % len(CODAS)])
    return "".join(parts).capitalize()


def renamed(text: str, copy: int, memo: dict[str, str]) -> str:
    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        if word in KEEP:
            return word
        if word not in memo:
            memo[word] = invented(word, copy)
        return memo[word]

    return NAME.sub(swap, text)


def original_documents() -> list[dict]:
    docs = []
    for path in sorted(SHARED_DATA.glob("*/corpus.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                docs.append({"doc_id": str(record["doc_id"]), "title": str(record.get("title") or ""),
                             "text": str(record.get("text") or "")})
    random.Random(ORDER_SEED).shuffle(docs)
    return docs


def build_corpus(tokens: int) -> tuple[list[dict], int]:
    """Documents (originals first, then renamed copies) until ``tokens`` cl100k tokens; (docs, tokens)."""
    from core.tokens import count_tokens

    originals = original_documents()
    out: list[dict] = []
    total, copy = 0, 0
    while total < tokens:
        memo: dict[str, str] = {}
        for doc in originals:
            if copy == 0:
                item = dict(doc)
            else:
                item = {"doc_id": f"{doc['doc_id']}~r{copy}", "title": renamed(doc["title"], copy, memo),
                        "text": renamed(doc["text"], copy, memo)}
            out.append(item)
            total += count_tokens(f"{item['title']}\n{item['text']}" if item["title"] else item["text"])
            if total >= tokens:
                break
        copy += 1
    return out, total


def write_corpus(tokens: int, out: Path) -> int:
    docs, total = build_corpus(tokens)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for doc in docs:
            handle.write(json.dumps(doc, ensure_ascii=False) + "\n")
    return total


def questions(limit: int) -> list[str]:
    """``limit`` questions, taken in turn from each shared question file (sorted by folder)."""
    files = sorted(SHARED_DATA.glob("*/questions.jsonl"))
    pools = [[json.loads(line)["question"] for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
             for f in files]
    out: list[str] = []
    i = 0
    while len(out) < limit and any(i < len(p) for p in pools):
        out += [p[i] for p in pools if i < len(p) and p[i] not in out]  # dev_musique repeats dev_musique_full's
        i += 1
    return out[:limit]


# --------------------------------------------------------------------------- one size
def disk_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


class RssSampler:
    """Peak resident memory of this process, sampled every second (and ``ru_maxrss`` at the end)."""

    def __init__(self) -> None:
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            try:
                for line in Path("/proc/self/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        self.peak_mb = max(self.peak_mb, int(line.split()[1]) / 1024)
            except OSError:
                return

    def stop(self) -> float:
        self._stop.set()
        return max(self.peak_mb, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def graph_page_open(path: Path, mention: bool = False) -> tuple[float, float]:
    """(wall s, CPU s) of what the Knowledge graph page does on open, on a freshly opened workspace: the
    page's own data path, ``ui.graph_page.open_default`` (counts and type choices, the default view read
    from storage and laid out as HTML, the selected node's details and its first source chunks)."""
    from ui.graph_page import open_default

    from core.auth import LOCAL_ADMIN
    from core.workspace import Workspace

    started, cpu = time.perf_counter(), time.process_time()
    ws = Workspace(path)
    try:
        opened = open_default(LOCAL_ADMIN, ws, mention)
        assert opened["view"] is None or opened["view"].shown > 0
        return time.perf_counter() - started, time.process_time() - cpu
    finally:
        ws.close()


def open_and_retrieval(folder: Path, n_questions: int) -> dict:
    """The graph page's open (3 fresh opens after a first; the mention graph's too) and the retrieval
    latency per mode (``n_questions`` questions, a fresh ``QueryContext`` per call), wall and CPU."""
    from core.retrieval.registry import query_context
    from core.retrieval.registry import modes, retrieve
    from core.workspace import Workspace

    out: dict = {}
    for label, mention in (("graph_page_open", False), ("mention_graph_open", True)):
        opens = [graph_page_open(folder, mention) for _ in range(4)]
        out[f"{label}_s"] = {"first": round(opens[0][0], 3), "median": round(median([w for w, _ in opens[1:]]), 3)}
        out[f"{label}_cpu_s"] = {"first": round(opens[0][1], 3), "median": round(median([c for _, c in opens[1:]]), 3)}
        print(f"  {label}: first {out[label + '_s']['first']} s (CPU {out[label + '_cpu_s']['first']} s), "
              f"median {out[label + '_s']['median']} s (CPU {out[label + '_cpu_s']['median']} s)", flush=True)
    ws = Workspace(folder)
    asked = questions(n_questions)
    warm = query_context(ws, "warm-up question about a place")
    table = {}
    for mode in modes():
        retrieve(warm, mode)  # graph views, matrices and indexes built once per generation
        samples, cpu_samples = [], []
        for question in asked:
            ctx = query_context(ws, question)
            t, c = time.perf_counter(), time.process_time()
            retrieve(ctx, mode)
            samples.append((time.perf_counter() - t) * 1000)
            cpu_samples.append((time.process_time() - c) * 1000)
        table[mode] = {"p50_ms": round(median(samples), 1), "p95_ms": round(p95(samples), 1),
                       "cpu_p50_ms": round(median(cpu_samples), 1), "n": len(samples)}
        print(f"  {mode:<7} median {table[mode]['p50_ms']:8.1f} ms  p95 {table[mode]['p95_ms']:8.1f} ms  "
              f"CPU median {table[mode]['cpu_p50_ms']:8.1f} ms", flush=True)
    ws.close()
    out["retrieval_ms"] = table
    return out


def code_commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def remeasure(tokens: int, root: Path, n_questions: int) -> dict:
    """Re-run only the graph page's open and the retrieval latency on an already built ``ROOT/ws-N`` (no
    re-indexing; the same code and questions as ``measure``); writes ``ROOT/result-N-remeasure.json``."""
    folder = root / f"ws-{tokens}"
    if not (folder / "ragscope.sqlite3").exists():
        raise SystemExit(f"{folder} holds no workspace: run `measure --tokens {tokens} --root {root}` first")
    sampler = RssSampler()
    load_before = os.getloadavg()
    result: dict = {"target_tokens": tokens, "code": code_commit(), "load_avg_before": [round(x, 1) for x in load_before]}
    from core.workspace import Workspace

    ws = Workspace(folder)
    status = ws.status()
    ws.close()
    result.update({k: status[k] for k in ("documents", "chunks", "entities", "relations", "mention_edges")})
    result.update(open_and_retrieval(folder, n_questions))
    result["peak_rss_mb"] = round(sampler.stop())
    result["load_avg_after"] = [round(x, 1) for x in os.getloadavg()]
    (root / f"result-{tokens}-remeasure.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return result


def measure(tokens: int, root: Path, n_questions: int, embedder: str = "", index_only: bool = False) -> dict:
    """Index ``tokens`` of the corpus into ``ROOT/ws-N`` (``embedder``: a local model other than the default),
    then time retrieval and the graph page unless ``index_only``."""
    from core.settings import Settings
    from core.extraction.nlp import load_nlp
    from core.indexing.pipeline import IndexReport, process_pending, register_documents
    from core.loaders import load_path
    from core.workspace import Workspace

    sampler = RssSampler()
    corpus = root / f"corpus-{tokens}.jsonl"
    corpus_tokens = write_corpus(tokens, corpus)
    folder = root / f"ws-{tokens}"
    shutil.rmtree(folder, ignore_errors=True)
    progress_file = root / f"progress-{tokens}.jsonl"
    progress_file.unlink(missing_ok=True)
    started = time.perf_counter()
    settings = Settings().with_overrides({"embedder": embedder}) if embedder else Settings()
    ws = Workspace(folder, settings=settings)
    ws.embedder.embed(["warm-up text", "a second warm-up text"])  # the model indexing uses, loaded before the clock
    load_nlp()
    models_s = time.perf_counter() - started

    sources, failures = load_path(corpus)
    report = IndexReport()
    t0, cpu0 = time.perf_counter(), time.process_time()
    last = {"done": -1}

    def progress(event) -> None:  # one line per finished batch: how far, how fast, what each stage cost so far
        if event.step != "index" or event.done == last["done"]:
            return
        last["done"] = event.done
        line = {"t_s": round(time.perf_counter() - t0, 1), "done": event.done, "total": event.total,
                "tokens": report.tokens, "rss_mb": round(sampler.peak_mb), "stages_s": report.as_dict()["timings_s"]}
        with progress_file.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")

    with ws.writer():
        register_documents(ws, sources, failures, report=report)
        process_pending(ws, progress=progress, report=report)
    index_s, index_cpu_s = time.perf_counter() - t0, time.process_time() - cpu0
    status = ws.status()
    ws.close()
    result: dict = {"target_tokens": tokens, "corpus_tokens": corpus_tokens, "documents": status["documents"],
                    "chunks": status["chunks"], "entities": status["entities"], "relations": status["relations"],
                    "tree_nodes": status["tree_nodes"], "mention_edges": status["mention_edges"],
                    "models_load_s": round(models_s, 1), "index_s": round(index_s, 1),
                    "tokens_per_s": round(corpus_tokens / index_s, 1), "stages_s": report.as_dict()["timings_s"],
                    "index_cpu_s": round(index_cpu_s, 1), "embedder": ws.settings.embedder,
                    "cores_busy": round(index_cpu_s / index_s / max(os.cpu_count() or 1, 1), 3),
                    "disk_mb": round(disk_mb(folder), 1)}
    print(json.dumps({k: result[k] for k in ("corpus_tokens", "index_s", "tokens_per_s", "index_cpu_s", "cores_busy",
                                             "embedder", "stages_s", "disk_mb")}), flush=True)
    if not index_only:
        result.update(open_and_retrieval(folder, n_questions))
    result["code"] = code_commit()
    result["peak_rss_mb"] = round(sampler.stop())
    (root / f"result-{tokens}.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return result


# --------------------------------------------------------------------------- all sizes
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command")
    c = sub.add_parser("corpus")
    c.add_argument("--tokens", type=int, required=True)
    c.add_argument("--out", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--tokens", type=int, required=True)
    m.add_argument("--root", required=True)
    m.add_argument("--questions", type=int, default=30)
    m.add_argument("--embedder", default="", help="a local model other than the default (local-minilm: torch)")
    m.add_argument("--index-only", action="store_true", help="time the indexing only")
    r = sub.add_parser("remeasure", help="graph page open + retrieval latency on an already built ROOT/ws-N")
    r.add_argument("--tokens", type=int, required=True)
    r.add_argument("--root", required=True)
    r.add_argument("--questions", type=int, default=30)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--root", default="/tmp/ragscope-million")
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()
    if args.command == "corpus":
        print(f"{write_corpus(args.tokens, Path(args.out))} tokens written to {args.out}")
        return
    if args.command == "measure":
        measure(args.tokens, Path(args.root), args.questions, args.embedder, args.index_only)
        return
    if args.command == "remeasure":
        remeasure(args.tokens, Path(args.root), args.questions)
        return
    root = Path(args.root)
    root.mkdir(parents=True, exist_ok=True)
    results = {}
    for size in args.sizes:
        print(f"== {size:,} tokens", flush=True)
        done = subprocess.run([sys.executable, __file__, "measure", "--tokens", str(size), "--root", str(root),
                               "--questions", str(args.questions)], cwd=ROOT, env=os.environ.copy())
        out = root / f"result-{size}.json"
        if done.returncode != 0 or not out.exists():
            print(f"size {size} did not finish (exit {done.returncode}); partial timings: {root}/progress-{size}.jsonl")
            continue
        results[str(size)] = json.loads(out.read_text(encoding="utf-8"))
    if len(results) >= 2:
        small, large = results[str(min(args.sizes))], results[str(max(args.sizes))]
        results["growth"] = {m: round(large["retrieval_ms"][m]["p50_ms"] / max(small["retrieval_ms"][m]["p50_ms"], 1e-9), 2)
                             for m in large["retrieval_ms"]}
    write_result("million_tokens", results)


if __name__ == "__main__":
    main()
