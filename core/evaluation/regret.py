"""What a per-question choice of mode is worth: regret against the per-question oracle (the best mode's
recall on each question minus the chosen mode's, averaged), against the best fixed mode, and how often
each mode was chosen. ``regret_table`` works on rows ``{"recall": {mode: recall}}`` with the chosen mode
per row; ``auto_summary`` builds them from an evaluation's per-(question, mode) rows, where the ``auto``
rows carry the mode the router chose."""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np

AUTO = "auto"
NOT_MODES = (AUTO, "bm25")  # rows that are no candidate of the router


def common_modes(rows: Sequence[Mapping[str, Any]], order: Sequence[str] = ()) -> list[str]:
    """The modes every row has a recall for, in ``order`` (default: the first row's) first, then by name."""
    common = set.intersection(*(set(r["recall"]) for r in rows)) if rows else set()
    order = list(order) or (list(rows[0]["recall"]) if rows else [])
    return [m for m in order if m in common] + sorted(common - set(order))


def regret_table(rows: Sequence[Mapping[str, Any]], chosen: Sequence[str]) -> dict[str, Any]:
    """For rows with each mode's recall and the mode chosen per row: auto's mean recall, each fixed
    mode's, the best fixed mode, the oracle (best mode per question), regret (oracle − chosen, mean)
    and how often each mode was chosen."""
    modes = common_modes(rows)
    if not rows:
        return {"questions": 0}
    fixed = {m: float(np.mean([r["recall"][m] for r in rows])) for m in modes}
    best = max(modes, key=lambda m: (fixed[m], -modes.index(m)))
    oracle = [max(r["recall"][m] for m in modes) for r in rows]
    got = [r["recall"][m] for r, m in zip(rows, chosen)]
    counts: dict[str, int] = {}
    for m in chosen:
        counts[m] = counts.get(m, 0) + 1
    return {"questions": len(rows), "auto": float(np.mean(got)), "best_fixed": {"mode": best, "recall": fixed[best]},
            "oracle": float(np.mean(oracle)), "regret": float(np.mean([o - g for o, g in zip(oracle, got)])),
            "regret_vs_best_fixed": fixed[best] - float(np.mean(got)), "fixed": fixed,
            "chosen": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))}


def auto_summary(eval_rows: Sequence[Mapping[str, Any]], ks: Sequence[int]) -> Optional[dict[str, Any]]:
    """For an evaluation that ran ``auto`` with other modes: per k, auto's recall, the best fixed mode
    among the other modes run, the oracle and the regret, and the modes chosen ({mode: count}); None
    when auto was not run or no other mode was."""
    order = list(dict.fromkeys(str(r["mode"]) for r in eval_rows))
    others = [m for m in order if m not in NOT_MODES]
    auto = {str(r["qid"]): r for r in eval_rows if r["mode"] == AUTO and r.get("gold")}
    if not auto or not others:
        return None
    by_q: dict[str, dict[str, Mapping[str, Any]]] = {}
    for r in eval_rows:
        if r["mode"] in others and str(r["qid"]) in auto:
            by_q.setdefault(str(r["qid"]), {})[str(r["mode"])] = r
    qids = [q for q in auto if len(by_q.get(q, {})) == len(others)]
    chosen = [str(auto[q].get("chosen") or "") for q in qids]
    out: dict[str, Any] = {"chosen": {}, "regret": {}, "oracle": {}, "best_fixed": {}, "auto": {},
                           "questions": len(qids), "compared_with": others}
    for k in ks:
        rows = [{"recall": {m: float(by_q[q][m].get(f"recall@{k}") or 0.0) for m in others}} for q in qids]
        got = [float(auto[q].get(f"recall@{k}") or 0.0) for q in qids]
        table = regret_table(rows, [c if c in others else others[0] for c in chosen])
        oracle = [max(r["recall"].values()) for r in rows]
        out["auto"][str(k)] = float(np.mean(got)) if got else None
        out["oracle"][str(k)] = table.get("oracle")
        out["regret"][str(k)] = float(np.mean([o - g for o, g in zip(oracle, got)])) if got else None
        out["best_fixed"][str(k)] = table.get("best_fixed")
    for c in chosen:
        out["chosen"][c] = out["chosen"].get(c, 0) + 1
    return out
