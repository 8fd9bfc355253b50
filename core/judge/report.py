"""The judge's results: per-question answers and verdicts, and what they add up to.

Counting: every pair of modes is judged twice per question (each order once), and each judgment gives
one verdict per criterion, so a pair's counts per criterion add up to 2 × questions:
``{a: wins, b: wins, tie: n, invalid: n}``. The win rate of a over b counts a tie as half a win:
(wins_a + ties / 2) / (wins_a + wins_b + ties), invalid verdicts left out (and shown).

Two checks of the judge itself: ``first_position_share`` (of the decisive verdicts, how many picked the
answer shown first; 0.5 is unbiased) and ``order_agreement`` (of the criteria judged validly in both
orders, how often both orders named the same winner).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any, Optional

from core.judge.prompt import INVALID

USAGE_FIELDS = ("calls", "cached", "prompt_tokens", "completion_tokens", "seconds")


def pair_key(a: str, b: str) -> str:
    return f"{a}|{b}"


@dataclass
class Judgment:
    """One judge call: ``first`` was shown as Answer 1, ``second`` as Answer 2. ``verdicts`` name the
    winning mode, "tie" or "invalid" per criterion."""

    pair: str
    first: str
    second: str
    verdicts: dict[str, str]
    reasons: dict[str, str] = field(default_factory=dict)
    raw: str = ""  # the reply, kept when a verdict is invalid
    note: str = ""  # why a verdict is invalid, or why no call was made
    cached: bool = False


@dataclass
class QuestionResult:
    qid: str
    question: str
    answers: dict[str, str] = field(default_factory=dict)
    context_tokens: dict[str, int] = field(default_factory=dict)
    judgments: list[Judgment] = field(default_factory=list)


@dataclass
class JudgeReport:
    modes: list[str]
    criteria: list[str]
    criteria_set: str = "lightrag"
    model: str = ""
    questions: list[QuestionResult] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)  # measured: totals and by_stage
    estimate: Optional[dict[str, Any]] = None
    cancelled: bool = False
    seconds: float = 0.0

    def pair_keys(self) -> list[str]:
        return [pair_key(a, b) for a, b in combinations(self.modes, 2)]

    def pairs(self) -> dict[str, dict[str, dict[str, int]]]:
        """``{"a|b": {criterion: {a: wins, b: wins, "tie": n, "invalid": n}}}``."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for key in self.pair_keys():
            a, b = key.split("|", 1)
            out[key] = {c: {a: 0, b: 0, "tie": 0, INVALID: 0} for c in self.criteria}
        for q in self.questions:
            for j in q.judgments:
                for criterion, winner in j.verdicts.items():
                    if j.pair in out and criterion in out[j.pair]:
                        out[j.pair][criterion][winner] += 1
        return out

    def win_rates(self) -> dict[str, dict[str, dict[str, Optional[float]]]]:
        """``{criterion: {row mode: {column mode: win rate of row over column or None}}}``."""
        counts = self.pairs()
        rates: dict[str, dict[str, dict[str, Optional[float]]]] = {
            c: {m: {n: None for n in self.modes} for m in self.modes} for c in self.criteria}
        for key, by_criterion in counts.items():
            a, b = key.split("|", 1)
            for criterion, n in by_criterion.items():
                valid = n[a] + n[b] + n["tie"]
                if valid:
                    rates[criterion][a][b] = (n[a] + n["tie"] / 2) / valid
                    rates[criterion][b][a] = (n[b] + n["tie"] / 2) / valid
        return rates

    def consistency(self) -> dict[str, Any]:
        """Position bias and agreement between the two orders (see the module docstring)."""
        first = decisive = 0
        agree = both = 0
        for q in self.questions:
            by_pair: dict[str, list[Judgment]] = {}
            for j in q.judgments:
                by_pair.setdefault(j.pair, []).append(j)
                if j.note.startswith("identical"):
                    continue
                for winner in j.verdicts.values():
                    if winner in (j.first, j.second):
                        decisive += 1
                        first += winner == j.first
            for pair in by_pair.values():
                if len(pair) != 2 or pair[0].note.startswith("identical"):
                    continue
                for criterion in self.criteria:
                    x, y = pair[0].verdicts.get(criterion), pair[1].verdicts.get(criterion)
                    if x not in (None, INVALID) and y not in (None, INVALID):
                        both += 1
                        agree += x == y
        return {"first_position_share": first / decisive if decisive else None, "decisive_verdicts": decisive,
                "order_agreement": agree / both if both else None, "judged_in_both_orders": both}

    def invalid_count(self) -> int:
        return sum(1 for q in self.questions for j in q.judgments for w in j.verdicts.values() if w == INVALID)

    def to_dict(self) -> dict[str, Any]:
        return {"modes": self.modes, "criteria": self.criteria, "criteria_set": self.criteria_set,
                "model": self.model, "pairs": self.pairs(), "win_rates": self.win_rates(),
                "consistency": self.consistency(), "invalid_verdicts": self.invalid_count(),
                "questions": [asdict(q) for q in self.questions], "usage": self.usage, "estimate": self.estimate,
                "cancelled": self.cancelled, "seconds": round(self.seconds, 2)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "JudgeReport":
        """Read back ``to_dict()`` output (e.g. a saved ``python -m core judge --json`` report)."""
        if not isinstance(data, dict) or not isinstance(data.get("modes"), list) or \
                not isinstance(data.get("criteria"), list) or not isinstance(data.get("questions"), list):
            raise ValueError("not a RAGScope judge report (expected modes, criteria and questions)")
        try:
            questions = [QuestionResult(str(q["qid"]), str(q["question"]), dict(q.get("answers") or {}),
                                        dict(q.get("context_tokens") or {}),
                                        [Judgment(**j) for j in q.get("judgments") or []])
                         for q in data["questions"]]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"the judge report's questions are malformed ({exc})") from None
        return cls([str(m) for m in data["modes"]], [str(c) for c in data["criteria"]],
                   str(data.get("criteria_set") or ""), str(data.get("model") or ""), questions,
                   dict(data.get("usage") or {}), data.get("estimate"), bool(data.get("cancelled")),
                   float(data.get("seconds") or 0.0))


def usage_totals(by_stage: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Totals over the stages plus the stages themselves (rounded seconds)."""
    totals: dict[str, Any] = {name: 0 for name in USAGE_FIELDS}
    for values in by_stage.values():
        for name in USAGE_FIELDS:
            totals[name] += values.get(name, 0)
    totals["seconds"] = round(float(totals["seconds"]), 2)
    totals["by_stage"] = {s: {k: (round(v, 2) if k == "seconds" else int(v)) for k, v in vals.items()}
                          for s, vals in by_stage.items()}
    return totals
