"""The judge's criteria, its prompt, and the reading of its verdicts.

Criteria sets: ``lightrag`` (comprehensiveness, diversity, empowerment, overall — LightRAG's win-rate
criteria) and ``pathrag`` (comprehensiveness, diversity, logicality, relevance, coherence — PathRAG's).
The descriptions are RAGScope's own wording of what each criterion asks.

The judge sees the question and two answers labelled "Answer 1" and "Answer 2" and replies (JSON mode)
with one object: ``{criterion: {"winner": "1" | "2" | "tie", "reason": one sentence}}``. Reading is
tolerant of form (code fences or prose around the object, capitalised keys, "Answer 1", 1, "first",
LightRAG's "Winner"/"Explanation" keys) but never of substance: a criterion that is missing, or whose
winner is not one of the three choices, is ``invalid`` and the reply is kept to be shown.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from core.llm.budget import messages_tokens, share_room
from core.llm.client import Message


@dataclass(frozen=True)
class Criterion:
    name: str
    description: str


_COMPREHENSIVENESS = Criterion("comprehensiveness", "How much of what the question asks does the answer cover, "
                                                    "and with how much relevant detail?")
_DIVERSITY = Criterion("diversity", "How varied are the perspectives, facts and sources the answer brings in?")
CRITERIA_SETS: dict[str, tuple[Criterion, ...]] = {
    "lightrag": (
        _COMPREHENSIVENESS, _DIVERSITY,
        Criterion("empowerment", "How well does the answer help a reader understand the subject and reach "
                                 "their own informed judgement?"),
        Criterion("overall", "Taking the criteria above together, which answer is better?"),
    ),
    "pathrag": (
        _COMPREHENSIVENESS, _DIVERSITY,
        Criterion("logicality", "Are the answer's statements consistent with each other, and do its steps of "
                                "reasoning follow from one another?"),
        Criterion("relevance", "How closely does the answer keep to the question, without digressions?"),
        Criterion("coherence", "Is the answer well organised, reading as one connected whole?"),
    ),
}
WINNER_CHOICES = ("1", "2", "tie")
INVALID = "invalid"
MAX_REASON_CHARS = 300

SYSTEM_PROMPT = ("You compare two answers to the same question on named criteria. Judge the content only: the "
                 "order in which the answers are shown and their length must not sway you. You reply with one "
                 "JSON object and nothing else.")


def criteria_from_spec(spec: str) -> tuple[str, tuple[Criterion, ...]]:
    """``lightrag`` / ``pathrag`` (a set), or comma-separated names from either set. Returns (label, criteria)."""
    text = (spec or "lightrag").strip().lower()
    if text in CRITERIA_SETS:
        return text, CRITERIA_SETS[text]
    known = {c.name: c for group in CRITERIA_SETS.values() for c in group}
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        what = ", ".join(unknown) if unknown else repr(spec)
        raise ValueError(f"unknown criteria {what}: use lightrag, pathrag or names from {', '.join(known)}")
    return "custom", tuple(known[n] for n in dict.fromkeys(names))


# The reply's shape is shown with an example whose verdicts vary, so that every choice is seen as possible
# (a neutral "<1, 2 or tie>" placeholder was copied verbatim by a small local model, measured).
_EXAMPLE = (("2", "Answer 2 covers more of what was asked."), ("1", "Answer 1 brings in more varied facts."),
            ("tie", "Neither answer is better on this point."))


def judge_messages(question: str, first: str, second: str, criteria: Sequence[Criterion],
                   room: Optional[int] = None) -> list[Message]:
    """The judge's messages for one ordered pair of answers. With ``room`` (prompt tokens that fit the
    model's context next to the reply), the two answers are trimmed to equal shares of what the rest
    of the prompt leaves, each with a marker — the same trimming in both orders, so position-swapped
    calls still see the same texts."""
    if room is not None:
        fixed = messages_tokens(_judge_messages(question, "", "", criteria))
        first, second = share_room([first.strip(), second.strip()], room - fixed)
    return _judge_messages(question, first, second, criteria)


def _judge_messages(question: str, first: str, second: str, criteria: Sequence[Criterion]) -> list[Message]:
    listed = "\n".join(f"- {c.name}: {c.description}" for c in criteria)
    example = ", ".join(f'"{c.name}": {{"winner": "{_EXAMPLE[i % 3][0]}", "reason": "{_EXAMPLE[i % 3][1]}"}}'
                        for i, c in enumerate(criteria))
    user = (f"Question:\n{question.strip()}\n\nAnswer 1:\n{first.strip()}\n\nAnswer 2:\n{second.strip()}\n\n"
            f"Compare Answer 1 and Answer 2 on each criterion:\n{listed}\n\n"
            f"For each criterion give the winner (\"1\" for Answer 1, \"2\" for Answer 2, or \"tie\" when neither "
            f"is better) and a reason of one short sentence. Reply with one JSON object with a key for every "
            f"criterion, shaped like this example (its verdicts are placeholders: judge for yourself):\n{{{example}}}")
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


@dataclass
class CriterionVerdict:
    """One criterion's verdict: ``winner`` is "1", "2", "tie" or "invalid" (positions, not modes)."""

    winner: str
    reason: str = ""


_FIRST = {"1", "answer 1", "answer1", "first", "first answer", "a1"}
_SECOND = {"2", "answer 2", "answer2", "second", "second answer", "a2"}
_TIE = {"tie", "a tie", "equal", "draw", "both", "same", "neither"}
_WINNER_KEYS = ("winner", "better", "verdict", "choice", "preferred", "preference", "best")
_REASON_KEYS = ("reason", "explanation", "why", "justification", "rationale")


def _norm(value: Any) -> str:
    return re.sub(r"[\s_\-]+", " ", str(value)).strip().strip(".\"'").lower()


def _winner(value: Any) -> Optional[str]:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and float(value) in (1.0, 2.0):
        return str(int(value))
    text = _norm(value)
    if text in _FIRST:
        return "1"
    if text in _SECOND:
        return "2"
    if text in _TIE:
        return "tie"
    return None


def _object(text: str) -> Optional[dict[str, Any]]:
    """The first JSON object in the reply (code fences and prose around it allowed)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text or ""):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _one_line(text: Any) -> str:
    line = " ".join(str(text or "").split())
    return line if len(line) <= MAX_REASON_CHARS else line[: MAX_REASON_CHARS - 1] + "…"


def _criterion(value: Any) -> CriterionVerdict:
    if isinstance(value, dict):
        fields = {_norm(k): v for k, v in value.items()}
        raw = next((fields[k] for k in _WINNER_KEYS if k in fields), None)
        reason = next((fields[k] for k in _REASON_KEYS if k in fields), "")
        winner = _winner(raw) if raw is not None else None
        return CriterionVerdict(winner or INVALID, _one_line(reason))
    winner = _winner(value)
    return CriterionVerdict(winner or INVALID, "")


def parse_verdict(text: str, criteria: Sequence[Criterion]) -> tuple[dict[str, CriterionVerdict], str]:
    """``({criterion: verdict}, problem)``; ``problem`` says why some verdict is invalid ("" when none is)."""
    data = _object(text)
    if data is None:
        return {c.name: CriterionVerdict(INVALID) for c in criteria}, "the reply holds no JSON object"
    if len(data) == 1 and isinstance(next(iter(data.values())), dict) and _norm(next(iter(data))) in (
            "criteria", "verdicts", "evaluation", "result", "results"):
        data = next(iter(data.values()))
    entries = {_norm(k): v for k, v in data.items()}
    verdicts = {c.name: _criterion(entries[c.name]) if c.name in entries else CriterionVerdict(INVALID)
                for c in criteria}
    missing = [c.name for c in criteria if c.name not in entries]
    unreadable = [c.name for c in criteria if c.name in entries and verdicts[c.name].winner == INVALID]
    problems = []
    if missing:
        problems.append(f"no verdict for {', '.join(missing)}")
    if unreadable:
        problems.append(f"no winner among 1, 2, tie for {', '.join(unreadable)}")
    return verdicts, "; ".join(problems)
