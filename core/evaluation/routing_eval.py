"""Training and measuring the ``auto`` router (``core.routing``) on per-question gold recall.

* ``router_rows``: one row per question of a set: its router features and each candidate mode's gold
  recall@k (from an ``eval --per-question`` file when given, else by running the modes).
* ``regret_table``: what a choice per question is worth against the best fixed mode and the
  per-question oracle (regret = oracle recall − chosen mode's recall, averaged).
* ``cross_validate``: grouped k-fold by question id (a question asked on two workspaces is held out
  of both), every choice the recipe makes (the hop recipe's short and long candidates; the gain recipe's
  ridge and margin, by an inner grouped k-fold) made on the training folds only, so no reported figure is a
  train-set figure. ``train`` fits the final model on every row the same way.
* Recipes: ``hops`` (the default when every row carries its number of gold passages, ``hops``): predict
  the hops, the best training candidate for questions under ``HOP_THRESHOLD`` hops and for the others
  (``core.routing.model.fit_hops``, ridge ``HOP_RIDGE``); ``gains`` (the first recipe, for rows without
  hops): per-mode recall gains over a default.
Everything is deterministic: folds by a hash of the question id, closed-form fits."""
from __future__ import annotations

import hashlib
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from core.evaluation.questions import Question, resolve_gold
from core.evaluation.regret import regret_table
from core.retrieval.registry import query_context
from core.evaluation.metrics import ranked_documents, recall_at_k
from core.routing.auto_mode import candidates, run_candidate
from core.routing.fusion import is_fused
from core.routing.features import FEATURES, form_features, question_features
from core.routing.model import RouterModel, fit, fit_hops
from core.settings import Settings
from core.workspace import Workspace

RIDGES = (1.0, 3.0, 10.0, 30.0, 100.0)
MARGINS = (0.0, 0.05, 0.1, 0.2, 0.3)
FOLDS = 5
HOP_RIDGE = 10.0  # the middle of RIDGES; 1 gave the same held-out choices, 100 fewer long ones
HOP_THRESHOLD = 2.5  # halfway between a two-hop and a three-hop question: not fitted
# The hop predictor reads the question's text only (wh-word, length, clauses, possessives): how many hops a
# question needs is a property of the question, not of the corpus it is asked of (its link and dense scores).
HOP_FEATURES = tuple(form_features("What is it?"))


def router_rows(ws: Workspace, questions: list[Question], label: str, k: int = 5,
                eval_rows: Optional[Sequence[Mapping[str, Any]]] = None, settings: Optional[Settings] = None,
                keywords: Any = None) -> list[dict[str, Any]]:
    """Per question with gold: ``{"qid", "set": label, "features": {...}, "recall": {mode: recall@k}}``.
    The recalls come from ``eval_rows`` (``eval --per-question`` rows of this workspace) when given,
    else from running every candidate mode (``core.evaluation.runner.evaluate``)."""
    from core.evaluation.runner import evaluate

    questions = [q for q in resolve_gold(questions, ws.doc_names()) if q.gold_doc_ids]
    modes = candidates()
    registered = [m for m in modes if not is_fused(m)]
    if eval_rows is None:
        eval_rows = evaluate(ws, questions, registered, (k,), settings=settings, include_bm25=False,
                             keywords=keywords).rows
    recall: dict[tuple[str, str], float] = {(str(r["qid"]), str(r["mode"])): float(r.get(f"recall@{k}") or 0.0)
                                            for r in eval_rows if r.get("mode") in modes}
    chunk_doc = {cid: c.doc_id for cid, c in ws.records.chunks_by_id(ws.records.all_chunk_ids()).items()}
    out = []
    for q in questions:
        found = {m: recall[(q.qid, m)] for m in registered if (q.qid, m) in recall}
        if len(found) != len(registered):
            continue  # a question some mode was not measured on
        ctx = query_context(ws, q.question, settings=settings, keywords=keywords)
        features = question_features(ctx)
        for fused in (m for m in modes if is_fused(m)):  # not an eval mode: run on the question's context
            docs = ranked_documents(run_candidate(ctx, fused).evidence_chunk_ids, chunk_doc)
            found[fused] = float(recall_at_k(docs, q.gold_doc_ids, k) or 0.0)
        out.append({"qid": q.qid, "set": label, "features": features, "recall": found,
                    "hops": len(q.gold_doc_ids)})
    return out


def _matrix(rows: Sequence[Mapping[str, Any]], features: Sequence[str]) -> np.ndarray:
    return np.array([[float(r["features"].get(f, 0.0)) for f in features] for r in rows], dtype=np.float64)


def _modes(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    order = candidates()
    common = set.intersection(*(set(r["recall"]) for r in rows)) if rows else set()
    return [m for m in order if m in common] + sorted(common - set(order))


def _fold(qid: str, folds: int) -> int:
    return int(hashlib.sha1(qid.encode("utf-8")).hexdigest()[:8], 16) % folds


def _fit(rows: Sequence[Mapping[str, Any]], ridge: float, margin: float, target: str) -> RouterModel:
    modes = _modes(rows)
    recalls = {m: np.array([float(r["recall"][m]) for r in rows]) for m in modes}
    return fit(_matrix(rows, FEATURES), recalls, FEATURES, ridge=ridge, margin=margin, target=target, modes=modes)


def _choices(model: RouterModel, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return [model.choose(r["features"], list(r["recall"])).mode for r in rows]


def _held_out(rows: Sequence[Mapping[str, Any]], folds: int,
              fitter: Callable[[Sequence[Mapping[str, Any]]], RouterModel]) -> list[str]:
    """The mode chosen for each row by a model fitted without that row's question (grouped k-fold)."""
    chosen = [""] * len(rows)
    for f in range(folds):
        test = [i for i, r in enumerate(rows) if _fold(str(r["qid"]), folds) == f]
        train = [r for i, r in enumerate(rows) if _fold(str(r["qid"]), folds) != f]
        if not test or not train:
            continue
        model = fitter(train)
        for i, mode in zip(test, _choices(model, [rows[i] for i in test])):
            chosen[i] = mode
    return chosen


def _mean_chosen(rows: Sequence[Mapping[str, Any]], chosen: Sequence[str]) -> float:
    return float(np.mean([r["recall"][m] for r, m in zip(rows, chosen) if m])) if rows else 0.0


def recipe_of(rows: Sequence[Mapping[str, Any]]) -> str:
    """``hops`` when every row says how many gold passages its question has, else ``gains``."""
    return "hops" if rows and all(r.get("hops") for r in rows) else "gains"


def fit_by_hops(rows: Sequence[Mapping[str, Any]], target: str = "recall@5") -> RouterModel:
    """The hop router fitted on ``rows`` (``core.routing.model.fit_hops``; nothing is selected by an inner
    cross-validation: the ridge and the threshold are the fixed ``HOP_RIDGE`` and ``HOP_THRESHOLD``). Its
    short and long candidates are fused ones when the rows have any: a fusion holds its parts' top
    evidence, and on 51 questions a single mode's lead over it in one kind of question is one question's
    noise (docs/auto-mode.md)."""
    modes = [m for m in _modes(rows) if is_fused(m)] or _modes(rows)
    recalls = {m: np.array([float(r["recall"][m]) for r in rows]) for m in modes}
    return fit_hops(_matrix(rows, FEATURES), [float(r["hops"]) for r in rows], recalls, FEATURES, ridge=HOP_RIDGE,
                    threshold=HOP_THRESHOLD, target=target, modes=modes, use=HOP_FEATURES)


def select_and_fit(rows: Sequence[Mapping[str, Any]], target: str = "recall@5",
                   folds: int = FOLDS) -> RouterModel:
    """The model of the rows' recipe (``recipe_of``): the hop router, or the gain router fitted on ``rows``
    with the ridge and margin picked by an inner grouped k-fold and the
    one-standard-error rule: of the settings whose inner held-out recall is within one standard error of
    the best one's, the largest margin (the router that leaves its default mode least), then the larger
    ridge (the smoother fit). With a few dozen questions the best inner score is mostly noise; the rule
    keeps the default mode unless leaving it wins clearly."""
    if recipe_of(rows) == "hops":
        return fit_by_hops(rows, target)
    scored: list[tuple[float, float, float, float]] = []  # (score, standard error, ridge, margin)
    for ridge in RIDGES:
        for margin in MARGINS:
            chosen = _held_out(rows, folds, lambda t: _fit(t, ridge, margin, target))
            got = [float(r["recall"][m]) for r, m in zip(rows, chosen) if m]
            error = float(np.std(got) / np.sqrt(len(got))) if len(got) > 1 else 0.0
            scored.append((round(float(np.mean(got)) if got else 0.0, 9), error, ridge, margin))
    best = max(scored, key=lambda t: (t[0], t[2], -t[3]))
    near = [t for t in scored if t[0] >= best[0] - best[1]]
    pick = max(near, key=lambda t: (t[3], t[2]))
    return _fit(rows, pick[2], pick[3], target)


def cross_validate(rows: Sequence[Mapping[str, Any]], target: str = "recall@5",
                   folds: int = FOLDS) -> dict[str, Any]:
    """Held-out figures per set and over all rows: each question's mode chosen by a model (its ridge and
    margin selected inside the training folds) that never saw that question."""
    chosen = _held_out(rows, folds, lambda t: select_and_fit(t, target, folds))
    out: dict[str, Any] = {"folds": folds, "target": target, "all": regret_table(rows, chosen)}
    for label in sorted({str(r["set"]) for r in rows}):
        keep = [i for i, r in enumerate(rows) if r["set"] == label]
        out[label] = regret_table([rows[i] for i in keep], [chosen[i] for i in keep])
    return out


def train(rows: Sequence[Mapping[str, Any]], target: str = "recall@5", folds: int = FOLDS,
          with_cv: bool = True) -> tuple[RouterModel, dict[str, Any]]:
    """The model fitted on every row (``select_and_fit``) and its cross-validated figures (empty when
    ``with_cv`` is off); the model records what it was trained on, the figures included."""
    if not rows:
        raise ValueError("no training rows: no question with gold evidence was measured")
    model = select_and_fit(rows, target, folds)
    cv = cross_validate(rows, target, folds) if with_cv else {}
    in_sample = regret_table(rows, _choices(model, rows))
    model.trained_on = {"sets": sorted({str(r["set"]) for r in rows}), "rows": len(rows), "recipe": recipe_of(rows),
                        "questions": len({str(r["qid"]) for r in rows}), "cv": cv,
                        "qids": sorted({str(r["qid"]) for r in rows}),
                        "train_set_figures_not_a_result": in_sample}
    return model, cv
