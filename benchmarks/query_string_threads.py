"""Which thread embeds a mode's query strings: per question, the int8 MiniLM session calls (and their
wordpieces) run on the calling thread and on the query helper thread, averaged over the questions. A
count, not a timing, so it is the same on a loaded machine: the calling thread's calls are the MiniLM
work on a question's critical path when the helper has a core of its own.

    python benchmarks/query_string_threads.py --workspace W [--questions FILE] [--modes global,local,tree]

The helper is forced on (``RAGSCOPE_QUERY_HELPER=1``); each question runs on a fresh context with the
per-process memos cleared, as in ``retrieval_latency.py`` (first question skipped, 49 counted).
"""
from __future__ import annotations

import os
import threading
from typing import Any

from common import SHARED_DATA, question_parser, workspace_and_questions
from retrieval_latency import clear_memos


def main() -> None:
    parser = question_parser(__doc__, SHARED_DATA / "dev_musique_full" / "questions.jsonl")
    parser.add_argument("--modes", default="global,local,hybrid,mix,path,tree,naive")
    parser.add_argument("--limit", type=int, default=50)
    args = parser.parse_args()
    os.environ["RAGSCOPE_QUERY_HELPER"] = "1"

    import core.onnx_embeddings as int8
    from core.retrieval.registry import query_context, retrieve

    calls: list[tuple[bool, int]] = []  # (on the calling thread, wordpieces) per session call
    run = int8.Int8MiniLMEmbedder._run

    def counted(ids: Any, session: Any) -> Any:
        calls.append((threading.current_thread() is threading.main_thread(), sum(len(p) for p in ids)))
        return run(ids, session)

    int8.Int8MiniLMEmbedder._run = staticmethod(counted)  # type: ignore[method-assign]
    ws, loaded = workspace_and_questions(args)
    questions = [q.question for q in loaded][1 : args.limit or None]
    for mode in args.modes.split(","):
        mine = theirs = pieces_mine = pieces_theirs = 0
        for question in questions:
            clear_memos()
            ctx = query_context(ws, question)
            calls.clear()
            retrieve(ctx, mode)
            for started in list(ctx.state.pending.values()):
                started.result()
            mine += sum(1 for caller, _ in calls if caller)
            theirs += sum(1 for caller, _ in calls if not caller)
            pieces_mine += sum(n for caller, n in calls if caller)
            pieces_theirs += sum(n for caller, n in calls if not caller)
        n = len(questions)
        print(f"{mode:<7} calling thread {mine / n:.2f} calls ({pieces_mine / n:.1f} wordpieces)   "
              f"helper {theirs / n:.2f} calls ({pieces_theirs / n:.1f} wordpieces)   (n={n})", flush=True)


if __name__ == "__main__":
    main()
