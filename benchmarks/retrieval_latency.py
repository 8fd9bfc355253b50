"""Retrieval-only latency per mode (median and p95 over the questions, answers excluded, query
embedding included) on an indexed workspace, in the same shape as the LightRAG peer harness
(``../shared/bench/peer_lightrag``): the first ``--limit`` questions (50), the first of them a
warm-up that is not timed (49 timed per mode).

    python benchmarks/retrieval_latency.py --workspace W [--questions FILE] [--repeat 1] [--limit 50]

Nothing carries over from one timed call to the next: every call gets a fresh ``QueryContext``
(its query embeddings, keywords and shared per-question state) and the per-process memos of
question parses and rendered context rows are cleared before it. The question's vector is started (on
the int8 embedder's helper thread, when the machine has a core to spare: ``RAGSCOPE_QUERY_HELPER``) inside
the clock, by ``retrieve``; one a mode never waited for is finished after the clock, so it never runs
into the next call. Timings per call:

* ``p50_ms`` — everything inside the clock: the question's spaCy parse (keywords, names), the
  query embeddings, retrieval, the context;
* ``cpu_p50_ms`` — the process CPU time of the same call (less sensitive to a loaded machine);
* ``thread_cpu_p50_ms`` — the calling thread's own CPU time: the process CPU without what the int8
  embedder's helper thread did beside it (``core.onnx_embeddings.query_helper``); on an idle second core
  the wall time is about this plus any wait for the helper;
* ``peer_p50_ms`` (``--keywords-outside``) — as the peer harness times LightRAG: the question's
  keywords (spaCy) are computed before the clock starts, everything else inside it (a second call).

``helper_share`` — the share of calls for which the int8 embedder's helper thread was on (``--helper
auto|0|1`` sets ``RAGSCOPE_QUERY_HELPER``; ``auto`` switches it off while the 1-minute load average is at
least the core count), with the load average after the mode: compare wall times only at equal shares.

MiniLM calls and texts per call are counted per mode (``minilm_calls``), and the tree mode's
times are also split by branch (local = entity pairs, no vector search; global = collapsed tree).
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

from common import SHARED_DATA, median, p95, question_parser, workspace_and_questions, write_result


class CountingEmbedder:
    """Wraps the workspace's embedder: counts calls and texts (reset per timed call)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.name = inner.name
        self.dim = getattr(inner, "dim", None)
        self.calls = 0
        self.texts = 0
        self.ms = 0.0
        self.query_vectors_alone = getattr(inner, "query_vectors_alone", False)
        if not hasattr(inner, "embed_queries"):
            self.embed_queries = None  # type: ignore[assignment]  # as the inner embedder: batches of ``embed``
        if not hasattr(inner, "embed_queries_soon"):
            self.embed_queries_soon = None  # type: ignore[assignment]  # as the inner embedder: no background call

    def embed(self, texts: Any) -> Any:
        started = time.perf_counter()
        out = self._inner.embed(texts)
        self.ms += (time.perf_counter() - started) * 1000
        self.calls += 1
        self.texts += len(texts)
        return out

    def embed_queries(self, texts: Any) -> Any:
        """The inner embedder's packed query call (counted as one call), or ``embed``."""
        packed = getattr(self._inner, "embed_queries", None)
        if packed is None:
            return self.embed(texts)
        started = time.perf_counter()
        out = packed(texts)
        self.ms += (time.perf_counter() - started) * 1000
        self.calls += 1
        self.texts += len(texts)
        return out

    def embed_queries_soon(self, texts: Any) -> Any:
        """The inner embedder's background call (counted as one call; its time is not the caller's, so
        ``ms`` counts only the time spent starting it — the wait shows in the mode's own time)."""
        started = time.perf_counter()
        out = self._inner.embed_queries_soon(texts)
        self.ms += (time.perf_counter() - started) * 1000
        self.calls += 1
        self.texts += len(texts)
        return out

    def reset(self) -> None:
        self.calls, self.texts, self.ms = 0, 0, 0.0


def clear_memos() -> None:
    """Forget every per-process memo of a question or a rendered row, so no timed call reuses a
    result of an earlier one."""
    from core.extraction import query_terms
    from core.retrieval import lightrag_context

    query_terms._parse.cache_clear()
    lightrag_context.csv_line.cache_clear()
    lightrag_context.text_tokens.cache_clear()


def timed(ws: Any, counter: CountingEmbedder, question: str, mode: str,
          before: Callable[[Any], None] | None = None) -> tuple[float, Any]:
    """One timed retrieval on a fresh context; ``before(ctx)`` runs before the clock starts. Returns
    (wall ms, result); the process CPU ms of the call is left in ``timed.cpu_ms``, the calling thread's
    own CPU ms (without the embedder's helper thread) in ``timed.thread_ms``."""
    from core.retrieval.registry import query_context
    from core.retrieval.registry import retrieve

    clear_memos()
    ctx = query_context(ws, question)
    if before is not None:
        before(ctx)
    counter.reset()
    cpu, own = time.process_time(), time.thread_time()
    started = time.perf_counter()
    result = retrieve(ctx, mode)
    wall = (time.perf_counter() - started) * 1000
    timed.thread_ms = (time.thread_time() - own) * 1000  # type: ignore[attr-defined]
    timed.cpu_ms = (time.process_time() - cpu) * 1000  # type: ignore[attr-defined]
    for started in list(ctx.state.pending.values()):  # a background embedding the mode never waited for
        started.result()  # ends here, not inside the next timed call
    return wall, result


def helper_on() -> bool:
    """Would the int8 embedder share the next question's strings with its helper thread now
    (``RAGSCOPE_QUERY_HELPER``; ``auto`` depends on the load average, so a run on a loaded machine times
    the one-thread path)? Printed per mode as the share of calls: wall times are comparable only
    between runs with the same share."""
    from core.onnx_embeddings import query_helper

    return query_helper() is not None


def stats(values: list[float]) -> dict[str, float]:
    return {"p50_ms": median(values), "p95_ms": p95(values), "n": len(values)}


def main() -> None:
    parser = question_parser(__doc__, SHARED_DATA / "dev_musique_full" / "questions.jsonl")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--limit", type=int, default=50, help="first N questions (the first one is the warm-up)")
    parser.add_argument("--modes", default="all")
    parser.add_argument("--keywords-outside", action="store_true",
                        help="also time each call with the keywords computed before the clock (as the peer harness)")
    parser.add_argument("--name", default="")
    parser.add_argument("--helper", choices=("auto", "0", "1"), default=None,
                        help="set RAGSCOPE_QUERY_HELPER for this run (default: as the environment says)")
    args = parser.parse_args()
    if args.helper is not None:
        os.environ["RAGSCOPE_QUERY_HELPER"] = args.helper

    from core.retrieval.registry import parse_modes

    ws, loaded = workspace_and_questions(args)
    questions = [q.question for q in loaded][: args.limit or None]
    counter = CountingEmbedder(ws.embedder)
    ws._embedder = counter  # every query embedding of the workspace goes through the counter
    modes = parse_modes(args.modes)
    for mode in modes:  # loads the models, the graph views and the vector matrices once
        timed(ws, counter, "warm-up question about a place", mode)
    table: dict[str, dict[str, Any]] = {}
    for mode in modes:
        full, peer, cpu, own, embed_ms, calls, texts, helper = [], [], [], [], [], [], [], []
        branches: dict[str, list[float]] = {}
        for _ in range(args.repeat):
            for i, question in enumerate(questions):
                helper.append(helper_on())
                ms, result = timed(ws, counter, question, mode)
                n_calls, n_texts, e_ms, cpu_ms = counter.calls, counter.texts, counter.ms, timed.cpu_ms  # type: ignore[attr-defined]
                own_ms = timed.thread_ms  # type: ignore[attr-defined]
                if args.keywords_outside:
                    peer_ms, _ = timed(ws, counter, question, mode, before=lambda ctx: ctx.keywords())
                    peer.append(peer_ms)
                if i == 0:
                    continue  # the warm-up question, as in the peer harness
                full.append(ms)
                cpu.append(cpu_ms)
                own.append(own_ms)
                embed_ms.append(e_ms)
                calls.append(n_calls)
                texts.append(n_texts)
                if mode == "tree":
                    branch = str(result.params.get("branch", ""))
                    branches.setdefault("local" if branch.startswith("local") else "global", []).append(ms)
        row: dict[str, Any] = {**stats(full), "cpu_p50_ms": median(cpu), "thread_cpu_p50_ms": median(own), "peer_p50_ms": median(peer), "peer_p95_ms": p95(peer),
                               "embed_p50_ms": median(embed_ms), "minilm_calls_mean": sum(calls) / len(calls),
                               "minilm_calls_max": max(calls), "minilm_texts_mean": sum(texts) / len(texts),
                               "helper_share": sum(helper) / len(helper), "load_1min": round(os.getloadavg()[0], 2)}
        if branches:
            row["branches"] = {b: stats(v) for b, v in sorted(branches.items())}
        table[mode] = row
        line = (f"{mode:<7} median {row['p50_ms']:7.1f} ms  p95 {row['p95_ms']:7.1f}  cpu {row['cpu_p50_ms']:6.1f}  "
                f"caller cpu {row['thread_cpu_p50_ms']:6.1f}  "
                + (f"keywords-outside median {row['peer_p50_ms']:7.1f}  " if peer else "")
                + f"embed {row['embed_p50_ms']:5.1f} ms  "
                f"MiniLM calls {row['minilm_calls_mean']:.2f} (max {row['minilm_calls_max']}), "
                f"texts {row['minilm_texts_mean']:.2f}  (n={row['n']})  helper on {row['helper_share']:.0%} "
                f"(load {row['load_1min']})")
        for b, s in row.get("branches", {}).items():
            line += f"\n        branch {b}: median {s['p50_ms']:.1f} ms, p95 {s['p95_ms']:.1f} (n={s['n']})"
        print(line, flush=True)
    status = ws.status()
    graph = ws.views.graph
    write_result(args.name or f"retrieval_{Path(args.workspace).name}",
                 {"workspace": args.workspace, "documents": status["documents"], "chunks": status["chunks"],
                  "entities": len(graph), "relations": graph.relation_count(), "questions": len(questions),
                  "timed_per_mode": len(questions) - 1, "modes": table})


if __name__ == "__main__":
    main()
