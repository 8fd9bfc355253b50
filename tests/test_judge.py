"""The judge without a server: criteria, prompt, verdict reading, aggregation, and the protocol driven by
a scripted chat model behind the real workspace cache (the real llama.cpp server is exercised in
test_judge_llm.py)."""
from __future__ import annotations

import json
import re
import threading

import pytest

from core.evaluation.questions import Question
from core.judge.prompt import (CRITERIA_SETS, INVALID, criteria_from_spec, judge_messages, parse_verdict)
from core.judge.report import JudgeReport, Judgment, QuestionResult
from core.llm.client import Completion

LIGHTRAG = CRITERIA_SETS["lightrag"]


# --- criteria and prompt ------------------------------------------------------------------
def test_criteria_sets():
    assert [c.name for c in LIGHTRAG] == ["comprehensiveness", "diversity", "empowerment", "overall"]
    assert [c.name for c in criteria_from_spec("pathrag")[1]] == ["comprehensiveness", "diversity", "logicality",
                                                                  "relevance", "coherence"]
    assert criteria_from_spec("PathRAG")[0] == "pathrag"
    label, chosen = criteria_from_spec("overall, relevance")
    assert label == "custom" and [c.name for c in chosen] == ["overall", "relevance"]
    with pytest.raises(ValueError, match="unknown criteria bogus"):
        criteria_from_spec("overall,bogus")


def test_prompt_shows_both_answers_in_the_given_order_and_every_criterion():
    first = judge_messages("Q?", "alpha answer", "beta answer", LIGHTRAG)
    second = judge_messages("Q?", "beta answer", "alpha answer", LIGHTRAG)
    user = first[1]["content"]
    assert user.index("Answer 1:\nalpha answer") < user.index("Answer 2:\nbeta answer")
    assert "Answer 1:\nbeta answer" in second[1]["content"] and first != second
    for c in LIGHTRAG:
        assert f"- {c.name}: {c.description}" in user and f'"{c.name}": {{"winner"' in user


# --- reading verdicts ------------------------------------------------------------------------
def test_valid_replies_in_several_forms():
    reply = json.dumps({c.name: {"winner": w, "reason": f"because {c.name}\nsecond line"}
                        for c, w in zip(LIGHTRAG, ["1", "2", "tie", "1"])})
    verdicts, problem = parse_verdict(f"Here you go:\n```json\n{reply}\n```", LIGHTRAG)
    assert problem == "" and [v.winner for v in verdicts.values()] == ["1", "2", "tie", "1"]
    assert verdicts["overall"].reason == "because overall second line"  # one line
    lightrag_style = {"Comprehensiveness": {"Winner": "Answer 2", "Explanation": "more"},
                      "Diversity": {"Winner": "Answer 1"}, "Empowerment": {"winner": 2}, "Overall Winner": "x",
                      "overall": "Tie"}
    verdicts, problem = parse_verdict(json.dumps(lightrag_style), LIGHTRAG)
    assert {k: v.winner for k, v in verdicts.items()} == {"comprehensiveness": "2", "diversity": "1",
                                                          "empowerment": "2", "overall": "tie"}
    assert verdicts["comprehensiveness"].reason == "more" and problem == ""
    nested = {"criteria": {c.name: {"winner": "first"} for c in LIGHTRAG}}
    assert {v.winner for v in parse_verdict(json.dumps(nested), LIGHTRAG)[0].values()} == {"1"}


@pytest.mark.parametrize("reply, problem", [
    ("I think the second answer is better.", "the reply holds no JSON object"),
    ('{"comprehensiveness": {"winner": "1"', "the reply holds no JSON object"),  # cut off
    ('{"comprehensiveness": {"winner": "<1, 2 or tie>"}, "diversity": {"winner": "2"}, "empowerment": "3", '
     '"overall": {"reason": "no winner given"}}',
     "no winner among"),
])
def test_unreadable_verdicts_are_invalid_never_guessed(reply, problem):
    verdicts, note = parse_verdict(reply, LIGHTRAG)
    assert problem in note
    if "diversity" in reply:
        assert {k: v.winner for k, v in verdicts.items()} == {
            "comprehensiveness": INVALID, "diversity": "2", "empowerment": INVALID, "overall": INVALID}
        assert note == "no winner among 1, 2, tie for comprehensiveness, empowerment, overall"
    else:
        assert {v.winner for v in verdicts.values()} == {INVALID}


def test_missing_criteria_are_named():
    verdicts, note = parse_verdict('{"overall": {"winner": "2"}}', LIGHTRAG)
    assert verdicts["overall"].winner == "2" and verdicts["diversity"].winner == INVALID
    assert note == "no verdict for comprehensiveness, diversity, empowerment"


# --- aggregation ---------------------------------------------------------------------------------
def _report() -> JudgeReport:
    q1 = QuestionResult("q1", "Q1", {"a": "x", "b": "y", "c": "z"}, {}, [
        Judgment("a|b", "a", "b", {"overall": "a"}), Judgment("a|b", "b", "a", {"overall": "a"}),
        Judgment("a|c", "a", "c", {"overall": "a"}), Judgment("a|c", "c", "a", {"overall": "c"}),
        Judgment("b|c", "b", "c", {"overall": "tie"}), Judgment("b|c", "c", "b", {"overall": INVALID})])
    q2 = QuestionResult("q2", "Q2", {}, {}, [
        Judgment("a|b", "a", "b", {"overall": "tie"}, note="identical answers: not sent to the judge"),
        Judgment("a|b", "b", "a", {"overall": "tie"}, note="identical answers: not sent to the judge")])
    return JudgeReport(["a", "b", "c"], ["overall"], "custom", "m", [q1, q2])


def test_counts_win_rates_and_judge_checks():
    report = _report()
    assert report.pairs() == {"a|b": {"overall": {"a": 2, "b": 0, "tie": 2, "invalid": 0}},
                              "a|c": {"overall": {"a": 1, "c": 1, "tie": 0, "invalid": 0}},
                              "b|c": {"overall": {"b": 0, "c": 0, "tie": 1, "invalid": 1}}}
    rates = report.win_rates()["overall"]
    assert rates["a"]["b"] == pytest.approx(0.75) and rates["b"]["a"] == pytest.approx(0.25)
    assert rates["a"]["c"] == rates["c"]["a"] == 0.5 and rates["b"]["c"] == 0.5 and rates["a"]["a"] is None
    checks = report.consistency()
    # decisive verdicts (identical answers left out): a (shown 1st), a (shown 2nd), a (1st), c (1st)
    assert checks["decisive_verdicts"] == 4 and checks["first_position_share"] == 0.75
    # both orders valid: a|b (a, a) agree, a|c (a, c) disagree; b|c has an invalid one; q2 is identical
    assert checks["judged_in_both_orders"] == 2 and checks["order_agreement"] == 0.5
    assert report.invalid_count() == 1


def test_report_json_round_trip_and_bad_reports():
    report = _report()
    data = json.loads(json.dumps(report.to_dict()))
    assert set(data) >= {"pairs", "questions", "usage", "win_rates", "consistency", "invalid_verdicts"}
    assert data["pairs"]["a|b"]["overall"] == {"a": 2, "b": 0, "tie": 2, "invalid": 0}
    back = JudgeReport.from_dict(data)
    assert back.pairs() == report.pairs() and back.questions[0].judgments[0] == report.questions[0].judgments[0]
    with pytest.raises(ValueError, match="not a RAGScope judge report"):
        JudgeReport.from_dict({"pairs": {}})
    with pytest.raises(ValueError, match="malformed"):
        JudgeReport.from_dict({"modes": [], "criteria": [], "questions": [{"question": "no qid"}]})


# --- the protocol with a scripted model behind the real cache -------------------------------------
class ScriptedChat:
    """Answers deterministically: answers quote the context's first words; the judge always prefers the
    answer shown second on 'overall' and returns unreadable text when the question says so."""

    def __init__(self) -> None:
        self.model = "scripted"
        self.requests: list[tuple[str, str]] = []
        self.cancel_event = threading.Event()
        self.lock = threading.Lock()

    def cache_params(self, json_mode: bool = False, max_tokens=None) -> dict:
        return {"model": self.model, "json_mode": json_mode, "max_tokens": max_tokens}

    def complete(self, messages, *, stage, json_mode=False, max_tokens=None) -> Completion:
        user = messages[-1]["content"]
        with self.lock:
            self.requests.append((stage, user))
        if stage == "keywords":
            return Completion('{"low_level_keywords": ["Velmora"], "high_level_keywords": ["history"]}', 50, 10)
        if stage == "answer":
            words = re.findall(r"\w+", user.split("Question:")[0])[:6]
            return Completion("Answer from " + " ".join(words), 100, 8)
        if "UNREADABLE" in user:
            return Completion("no idea", 120, 2)
        return Completion(json.dumps({"overall": {"winner": "2", "reason": "second is better"}}), 120, 12)


def _questions():
    return [Question("s1", "Who founded the Velmora Marine Institute?", None),
            Question("s2", "What happened in the Great Velmora Flood? UNREADABLE", None)]


def test_protocol_both_orders_cache_and_estimate(sample_ws_copy):
    from core.llm.cache import CachedChat, UsageCounter
    from core.judge.runner import estimate_cost, run_judge

    ws = sample_ws_copy
    scripted = ScriptedChat()
    chat = UsageCounter(CachedChat(scripted, ws.store.conn), ws.store.conn)
    modes = ["naive", "local", "tree"]
    estimate = estimate_cost(ws, _questions(), modes, chat, criteria="overall")
    assert scripted.requests == []  # the estimate calls nothing
    assert estimate["by_stage"]["judge"]["calls"] == 2 * 3 * 2 and estimate["by_stage"]["keywords"]["calls"] == 2
    assert estimate["by_stage"]["answer"]["calls"] == 6 and estimate["cached"] == 0
    assert estimate["prompt_tokens"] > 0 and estimate["completion_tokens_max"] >= estimate["completion_tokens"]
    events = []
    report = run_judge(ws, _questions(), modes, chat, criteria="overall", progress=events.append)
    judge_requests = [u for s, u in scripted.requests if s == "judge"]
    assert len(judge_requests) == 12 and len(set(judge_requests)) == 12
    for q in report.questions:
        orders = {(j.first, j.second) for j in q.judgments}
        assert orders == {(a, b) for a in modes for b in modes if a != b}  # every pair, both orders
        for j in q.judgments:
            if "UNREADABLE" in q.question:
                assert j.verdicts == {"overall": INVALID} and j.raw == "no idea" and j.note
            else:
                assert j.verdicts == {"overall": j.second} and j.reasons == {"overall": "second is better"}
    assert report.pairs()["naive|local"]["overall"] == {"naive": 1, "local": 1, "tie": 0, "invalid": 2}
    assert report.consistency()["first_position_share"] == 0.0 and report.invalid_count() == 6
    assert report.usage["calls"] == 2 + 6 + 12 and report.usage["cached"] == 0
    assert report.usage["by_stage"]["judge"]["prompt_tokens"] == 12 * 120
    assert events[-1].done == events[-1].total == 2 * (3 + 6)
    # a re-run asks nothing: every call is a cache hit, the estimate says so too
    before = len(scripted.requests)
    again = run_judge(ws, _questions(), modes, chat, criteria="overall")
    assert len(scripted.requests) == before and again.usage["calls"] == 0 and again.usage["cached"] == 20
    assert again.pairs() == report.pairs()
    assert estimate_cost(ws, _questions(), modes, chat, criteria="overall")["calls"] == 0


def test_identical_answers_tie_without_a_call_and_bad_arguments(sample_ws_copy):
    from core.judge.runner import run_judge

    scripted = ScriptedChat()
    report = run_judge(sample_ws_copy, _questions()[:1], ["hybrid", "hybrid", "mix"], scripted, criteria="overall")
    assert report.modes == ["hybrid", "mix"]
    with pytest.raises(ValueError, match="at least two modes"):
        run_judge(sample_ws_copy, _questions(), ["naive"], scripted)
    with pytest.raises(ValueError, match="needs an LLM"):
        run_judge(sample_ws_copy, _questions(), ["naive", "local"], None)

    class SameAnswer(ScriptedChat):
        def complete(self, messages, *, stage, json_mode=False, max_tokens=None):
            if stage == "answer":
                return Completion("The same answer.", 10, 3)
            return super().complete(messages, stage=stage, json_mode=json_mode, max_tokens=max_tokens)

    same = SameAnswer()
    report = run_judge(sample_ws_copy, _questions()[:1], ["naive", "local"], same, criteria="lightrag")
    assert [s for s, _ in same.requests].count("judge") == 0
    assert all(j.note.startswith("identical answers") and set(j.verdicts.values()) == {"tie"}
               for j in report.questions[0].judgments)


def test_cancelled_run_keeps_the_finished_questions(sample_ws_copy):
    from core.judge.runner import run_judge
    from core.llm.client import LLMCancelled

    class CancelsAfterFirstQuestion(ScriptedChat):
        def complete(self, messages, *, stage, json_mode=False, max_tokens=None):
            if self.cancel_event.is_set():
                raise LLMCancelled("cancelled")
            reply = super().complete(messages, stage=stage, json_mode=json_mode, max_tokens=max_tokens)
            if sum(1 for s, _ in self.requests if s == "judge") == 2:
                self.cancel_event.set()
            return reply

    chat = CancelsAfterFirstQuestion()
    report = run_judge(sample_ws_copy, _questions(), ["naive", "local"], chat, criteria="overall")
    assert report.cancelled and [q.qid for q in report.questions] == ["s1"]
    assert report.usage["calls"] == 1 + 2 + 2
