"""What a question costs before any mode runs, per step, in process-CPU ms (medians and p95 over the
questions; each question fresh: the parse memo and the per-question state cleared):

* ``parse`` — the question's spaCy parse (``core.extraction.query_terms``: the one parse keywords and
  names come from);
* ``keywords`` — LightRAG's (low, high) keywords from that parse;
* ``names`` — the names entity linking looks up (``QueryContext.link_names``: name spans and the
  graph's own names found in the question);
* ``embed`` — every query string of the question in one embedding call (``QueryContext.prefetch``);
* ``link`` — the names linked to graph entities (``QueryContext.seeds``: exact names, aliases, then
  all names' vector searches in one matrix product, ``ranked_keys_many``).

    python benchmarks/question_cost.py --workspace W [--questions FILE] [--limit 50]

CPU times, so the figures hold on a loaded machine better than wall times (they are not quiet-machine
figures either). The workspace is only read.
"""
from __future__ import annotations

import time
from pathlib import Path

from common import SHARED_DATA, median, p95, question_parser, workspace_and_questions, write_result

STEPS = ("parse", "keywords", "names", "embed", "link")


def main() -> None:
    parser = question_parser(__doc__, SHARED_DATA / "dev_musique_full" / "questions.jsonl")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--name", default="")
    args = parser.parse_args()

    from core.extraction import query_terms
    from core.retrieval.registry import query_context

    ws, loaded = workspace_and_questions(args)
    questions = [q.question for q in loaded][: args.limit or None]

    def one(question: str) -> dict[str, float]:
        query_terms._parse.cache_clear()
        ctx = query_context(ws, question)
        spent: dict[str, float] = {}
        steps = (("parse", lambda: query_terms.parse_question(question)),
                 ("keywords", ctx.keywords),
                 ("names", ctx.link_names),
                 ("embed", lambda: ctx.prefetch([question, "x"])),  # "x": not the question, so every query string comes
                 ("link", lambda: ctx.seeds(ctx.keywords()[0])))
        for step, run in steps:
            started = time.process_time()
            run()
            spent[step] = (time.process_time() - started) * 1000
        ctx.state.embeddings.pop("x", None)
        return spent

    one("A warm-up question about Paris and the Eiffel Tower?")  # loads spaCy, the model and the matrices
    rows = [one(q) for q in questions]
    table = {step: {"p50_ms": median([r[step] for r in rows]), "p95_ms": p95([r[step] for r in rows])} for step in STEPS}
    totals = [sum(r[s] for s in STEPS if s != "embed") for r in rows]
    table["all but embed"] = {"p50_ms": median(totals), "p95_ms": p95(totals)}
    for step, row in table.items():
        print(f"{step:<14} CPU median {row['p50_ms']:6.2f} ms  p95 {row['p95_ms']:6.2f} ms")
    write_result(args.name or f"question_cost_{Path(args.workspace).name}",
                 {"workspace": args.workspace, "questions": len(rows), "steps_cpu_ms": table})


if __name__ == "__main__":
    main()
