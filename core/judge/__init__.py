"""LLM-judged pairwise win rates between retrieval modes (LightRAG's and PathRAG's evaluation): the
criteria, prompt and verdict reading (``prompt``), the protocol and its cost estimate (``runner``),
the results and their aggregation (``report``) (the ``judge`` command is in ``core.cli.judge``)."""
from core.judge.prompt import CRITERIA_SETS, Criterion, criteria_from_spec, parse_verdict
from core.judge.report import JudgeReport, Judgment, QuestionResult
from core.judge.runner import estimate_cost, run_judge

__all__ = ["CRITERIA_SETS", "Criterion", "JudgeReport", "Judgment", "QuestionResult", "criteria_from_spec",
           "estimate_cost", "parse_verdict", "run_judge"]
