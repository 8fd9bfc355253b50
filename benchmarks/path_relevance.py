"""Path mode: how many of the top-5 paths touch the question (an entity of the question, or its
answer) and how many are multi-hop, over a question file, RAGScope's defaults against paper_strict.

    python benchmarks/path_relevance.py --workspace W [--questions FILE] [--top 5]

The measurement behind docs/methods.md's "top-5 paths touching the question" numbers. A question
whose path search finds no path counts 0 touching paths out of 0 (reported apart, never as 100 %).
"""
from __future__ import annotations

from common import ROOT, question_parser, workspace_and_questions, write_result


def measure(ws, questions, top: int, paper_strict: bool) -> dict:
    from core.extraction.nlp import normalize_name
    from core.retrieval.query import Stopwatch
    from core.retrieval.registry import query_context
    from core.retrieval.results import new_result
    from core.retrieval.path_seeds import ragscope_nodes
    from core.retrieval.registry import retrieve

    settings = ws.settings.with_overrides({"paper_strict": paper_strict})
    shown = touching = multi_hop = empty = 0
    for q in questions:
        result = retrieve(query_context(ws, q.question, settings=settings), "path")
        # the question's entities as RAGScope links them, for both rows (paper_strict links none)
        probe = query_context(ws, q.question)
        _, _, question = ragscope_nodes(probe, new_result(probe, "path", ()), Stopwatch(new_result(probe, "path", ())),
                                        ws.knowledge_graph())
        answer = normalize_name(q.answer or "")
        paths = result.paths[:top]
        empty += not paths
        shown += len(paths)
        touching += sum(1 for p in paths if set(p.keys) & question or (answer and answer in p.keys))
        multi_hop += sum(1 for p in paths if p.hops > 1)
    share = (lambda n: round(100.0 * n / shown, 1) if shown else None)
    return {"questions": len(questions), "paths_shown": shown, "questions_without_paths": empty,
            f"top{top}_touching_pct": share(touching), f"top{top}_multi_hop_pct": share(multi_hop)}


def main() -> None:
    parser = question_parser(__doc__, ROOT / "data" / "sample_questions.jsonl")
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--name", default="path_relevance")
    args = parser.parse_args()
    ws, questions = workspace_and_questions(args)
    table = {label: measure(ws, questions, args.top, strict)
             for label, strict in (("ragscope", False), ("paper_strict", True))}
    for label, row in table.items():
        print(label, row)
    write_result(args.name, {"workspace": args.workspace, "questions": args.questions, "results": table})


if __name__ == "__main__":
    main()
