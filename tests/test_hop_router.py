"""Issue 35 (a): the hop router, ``auto``'s default recipe. It predicts how many gold passages (hops) a question
needs from the question's own text and picks the best training candidate for its kind of question (under
2.5 hops: ``short``; the others: ``long``), saying why. Checked on hand-made rows whose numbers can be worked
by hand, on the committed default model (two different choices for a two-hop and a four-hop question, each
with its reason), and against a stub that always returns the short candidate."""
from __future__ import annotations

import numpy as np
import pytest

from core.evaluation import routing_eval
from core.routing.features import FEATURES, form_features
from core.routing.model import default_model, fit_hops, model_from_dict

SHORT_Q = "Who is the wife of Kim Jong-chul?"
LONG_Q = ("How many stores are in the state that borders the east of the state where the performer of the album "
          "that the director of the film was born in lived?")


def _rows() -> list[dict]:
    """Eight questions: the long ones (words >= 2.0) have three gold passages and only 'long' finds them all;
    the short ones have two and 'short' finds both. Every other feature is 0."""
    rows = []
    for i, words in enumerate((0.8, 1.0, 1.1, 1.2, 2.2, 2.4, 2.6, 3.0)):
        long = words >= 2.0
        features = {f: 0.0 for f in FEATURES}
        features["words"] = words
        rows.append({"qid": f"q{i}", "set": "toy", "features": features, "hops": 3 if long else 2,
                     "recall": {"ppr+mix": 0.5 if long else 1.0, "ppr+mix+global+path": 1.0 if long else 0.5}})
    return rows


def test_fit_hops_equals_the_hand_worked_regression_and_picks_each_kinds_best():
    rows = _rows()
    model = routing_eval.fit_by_hops(rows)
    assert model.hops["short"] == "ppr+mix" and model.hops["long"] == "ppr+mix+global+path"
    # the hand-worked ridge: standardised 'words' z, hops y; slope = sum(z*y) / (sum(z*z) + ridge), bias = mean(y)
    words = np.array([r["features"]["words"] for r in rows])
    y = np.array([float(r["hops"]) for r in rows])
    z = (words - words.mean()) / words.std()
    slope = float(z @ (y - y.mean()) / (z @ z + routing_eval.HOP_RIDGE))
    assert model.hops["bias"] == pytest.approx(y.mean(), abs=1e-5)
    assert model.hops["weights"][FEATURES.index("words")] == pytest.approx(slope, abs=1e-5)
    assert all(w == 0.0 for f, w in zip(FEATURES, model.hops["weights"]) if f not in routing_eval.HOP_FEATURES)
    chosen = [model.choose(r["features"]).mode for r in rows]
    assert chosen == [model.hops["long"] if r["hops"] == 3 else model.hops["short"] for r in rows]
    assert "predicted" in model.choose(rows[-1]["features"]).reason and "hops" in model.choose(rows[-1]["features"]).reason


def test_hop_router_cross_validation_routes_and_beats_a_fixed_short_stub():
    rows = _rows() + [{**r, "qid": r["qid"] + "b"} for r in _rows()]
    cv = routing_eval.cross_validate(rows)
    assert cv["all"]["auto"] == pytest.approx(1.0) and len(cv["all"]["chosen"]) == 2
    stub = [r["recall"]["ppr+mix"] for r in rows]  # a router that always takes the short candidate
    assert cv["all"]["auto"] > float(np.mean(stub))


def test_the_model_file_round_trips_the_hop_router():
    rows = _rows()
    model = routing_eval.fit_by_hops(rows)
    import json
    again = model_from_dict(json.loads(model.to_json()))
    assert again.hops == model.hops and again.modes[:1] == [model.default]
    broken = json.loads(model.to_json())
    broken["hops"]["weights"] = [1.0]
    with pytest.raises(ValueError):
        model_from_dict(broken)


def test_the_default_model_routes_a_two_hop_and_a_four_hop_question_apart():
    model = default_model()
    assert model.hops, "the committed default is the hop router"

    def features(question: str) -> dict[str, float]:
        values = {f: 0.0 for f in FEATURES}
        values.update(form_features(question))
        return values

    short, long = model.choose(features(SHORT_Q)), model.choose(features(LONG_Q))
    assert short.mode == model.hops["short"] and long.mode == model.hops["long"] and short.mode != long.mode
    assert short.gains["predicted_hops"] < model.hops["threshold"] <= long.gains["predicted_hops"]
    assert "fewer than" in short.reason and "or more" in long.reason and "words" in long.reason


def test_a_missing_candidate_falls_back_to_the_one_available():
    model = routing_eval.fit_by_hops(_rows())
    long_question = _rows()[-1]["features"]
    assert model.choose(long_question, ["ppr+mix"]).mode == "ppr+mix"  # the long candidate is not registered
    assert "not available" in model.choose(long_question, ["ppr+mix"]).reason
    with pytest.raises(ValueError):
        model.choose(long_question, ["naive"])  # none of its candidates: refused, as for a gain model
