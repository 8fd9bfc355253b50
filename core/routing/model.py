"""The router's model. Two kinds, one file format:

* **hops** (the default recipe): a linear predictor of how many gold passages (hops) the question needs
  (ridge regression on the standardised features of ``core.routing.features``, trained on the number of
  gold documents per question); a question predicted at ``threshold`` hops or more gets the ``long``
  candidate, any other the ``short`` one (each the best mean recall on training questions of that kind).
  The reason gives the predicted hops and the features that pushed it most.
* **gains** (the first recipe): a default mode and, for every other candidate mode, a linear predictor of
  how much more gold recall that mode finds than the default on this question. The router picks the mode
  with the largest predicted gain when it exceeds ``margin``, else the default; the reason names the
  features that contributed most to that gain.

The model is plain JSON (no pickle), loaded without any network: ``load_model`` reads a path, and
``default_model`` reads ``default_router.json`` next to this module (trained by ``python -m core router
train`` on the two MuSiQue dev sets). ``fit`` is deterministic (closed-form ridge)."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from core.errors import RAGScopeError

DEFAULT_PATH = Path(__file__).with_name("default_router.json")
FORMAT = "ragscope-router/1"


class RouterModelError(RAGScopeError, ValueError):
    """A router model file that cannot be used."""


@dataclass(frozen=True)
class Choice:
    """One routing decision: the mode, the predicted gain of each candidate over the default, and why."""

    mode: str
    gains: dict[str, float]
    reason: str
    features: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RouterModel:
    """A default mode plus one (bias, weights) gain predictor per other candidate mode."""

    default: str
    features: list[str]
    mean: list[float]
    scale: list[float]
    gains: dict[str, dict[str, Any]]  # mode -> {"bias": float, "weights": [float per feature]}
    margin: float = 0.0
    target: str = "recall@5"
    ridge: float = 10.0
    trained_on: dict[str, Any] = field(default_factory=dict)
    hops: dict[str, Any] = field(default_factory=dict)  # {bias, weights, threshold, short, long} or {} (gains only)

    @property
    def modes(self) -> list[str]:
        """Every mode the model can choose, the default first."""
        ends = [str(self.hops[k]) for k in ("short", "long")] if self.hops else []
        return list(dict.fromkeys([self.default, *ends, *self.gains]))

    def standardised(self, values: Mapping[str, float]) -> np.ndarray:
        x = np.array([float(values.get(f, 0.0)) for f in self.features], dtype=np.float64)
        return (x - np.asarray(self.mean)) / np.asarray(self.scale)

    def choose(self, values: Mapping[str, float], available: Optional[Sequence[str]] = None) -> Choice:
        """The mode for a question with these feature values (only modes in ``available`` if given;
        the default must be one of them, else the best-predicted available mode is taken)."""
        z = self.standardised(values)
        allowed = set(available) if available is not None else set(self.modes)
        if self.hops and {self.hops["short"], self.hops["long"]} <= allowed:
            return self._by_hops(values, z)
        ends = [str(self.hops[k]) for k in ("short", "long") if self.hops and self.hops[k] in allowed]
        if ends:
            missing = ", ".join(str(self.hops[k]) for k in ("short", "long") if self.hops[k] not in allowed)
            return Choice(ends[0], {}, f"{ends[0]}: the hop router's other candidate ({missing}) is not available",
                          {f: round(float(values.get(f, 0.0)), 4) for f in self.features})
        gains = {m: float(g["bias"] + np.dot(g["weights"], z)) for m, g in self.gains.items() if m in allowed}
        feats = {f: round(float(values.get(f, 0.0)), 4) for f in self.features}
        best = max(gains, key=lambda m: (gains[m], -self.modes.index(m)), default=None)
        default_ok = self.default in allowed
        if best is not None and (gains[best] > self.margin or not default_ok):
            return Choice(best, _rounded(gains), self._why(best, z, gains[best]), feats)
        if not default_ok:
            raise RouterModelError(f"none of the router's modes ({', '.join(self.modes)}) is available")
        top = f"; best other: {best} {gains[best]:+.3f}" if best is not None else ""
        why = f"default {self.default}: no mode is predicted to gain more than {self.margin:.3f} {self.target}{top}"
        return Choice(self.default, _rounded(gains), why, feats)

    def predicted_hops(self, z: np.ndarray) -> float:
        """The hops (gold passages) the hop predictor gives the standardised features ``z``."""
        return float(self.hops["bias"] + np.dot(self.hops["weights"], z))

    def _by_hops(self, values: Mapping[str, float], z: np.ndarray) -> Choice:
        hops = self.predicted_hops(z)
        threshold = float(self.hops["threshold"])
        long = hops >= threshold
        mode = str(self.hops["long"] if long else self.hops["short"])
        parts = np.asarray(self.hops["weights"]) * z * (1.0 if long else -1.0)
        order = sorted(range(len(parts)), key=lambda i: (-parts[i], i))[:3]
        named = ", ".join(f"{self.features[i]} {'+' if long else '-'}{abs(parts[i]):.2f}" for i in order if parts[i] > 0)
        kind = (f"a question of {threshold:g} hops or more: {mode}, the best on such questions in training"
                if long else f"a question of fewer than {threshold:g} hops: {mode}, the best on such questions in training")
        why = f"predicted {hops:.2f} hops (gold passages), {kind}" + (f" (most from {named})" if named else "")
        feats = {f: round(float(values.get(f, 0.0)), 4) for f in self.features}
        return Choice(mode, {"predicted_hops": round(hops, 4)}, why, feats)

    def _why(self, mode: str, z: np.ndarray, gain: float) -> str:
        weights = np.asarray(self.gains[mode]["weights"])
        parts = weights * z
        order = sorted(range(len(parts)), key=lambda i: (-parts[i], i))[:3]
        named = ", ".join(f"{self.features[i]} {parts[i]:+.3f}" for i in order if parts[i] > 0)
        return (f"{mode}: predicted {gain:+.3f} {self.target} over {self.default}"
                + (f" (most from {named})" if named else ""))

    def to_json(self) -> str:
        data = {"format": FORMAT, **asdict(self)}
        return json.dumps(data, indent=1, sort_keys=True) + "\n"


def _rounded(gains: Mapping[str, float]) -> dict[str, float]:
    return {m: round(v, 4) for m, v in gains.items()}


def model_from_dict(data: Mapping[str, Any]) -> RouterModel:
    """A model from its JSON data; a malformed file raises RouterModelError."""
    if data.get("format") != FORMAT:
        raise RouterModelError(f"not a router model (format {data.get('format')!r}, expected {FORMAT!r})")
    try:
        model = RouterModel(default=str(data["default"]), features=[str(f) for f in data["features"]],
                            mean=[float(v) for v in data["mean"]], scale=[float(v) for v in data["scale"]],
                            gains={str(m): {"bias": float(g["bias"]), "weights": [float(w) for w in g["weights"]]}
                                   for m, g in data["gains"].items()},
                            margin=float(data.get("margin", 0.0)), target=str(data.get("target", "recall@5")),
                            ridge=float(data.get("ridge", 0.0)), trained_on=dict(data.get("trained_on", {})),
                            hops=_hops_from(data.get("hops") or {}))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RouterModelError(f"malformed router model: {exc}") from exc
    n = len(model.features)
    if len(model.mean) != n or len(model.scale) != n or any(len(g["weights"]) != n for g in model.gains.values()) \
            or (model.hops and len(model.hops["weights"]) != n):
        raise RouterModelError("malformed router model: the weights do not match the feature list")
    return model


def _hops_from(data: Mapping[str, Any]) -> dict[str, Any]:
    if not data:
        return {}
    return {"bias": float(data["bias"]), "weights": [float(w) for w in data["weights"]],
            "threshold": float(data["threshold"]), "short": str(data["short"]), "long": str(data["long"])}


def load_model(path: Path) -> RouterModel:
    """The model saved at ``path`` (JSON)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RouterModelError(f"cannot read the router model {path}: {exc}") from exc
    return model_from_dict(data)


def default_model() -> RouterModel:
    """The committed default model (``default_router.json``)."""
    return load_model(DEFAULT_PATH)


def fit(x: np.ndarray, recalls: Mapping[str, np.ndarray], features: Sequence[str], ridge: float = 10.0,
        margin: float = 0.0, target: str = "recall@5", modes: Optional[Sequence[str]] = None) -> RouterModel:
    """Fit a model on feature rows ``x`` (n × features) and each mode's per-row recall: the default is
    the mode with the best mean recall (ties: the earlier in ``modes``), and each other mode's gain over
    it is a ridge regression (closed form, the bias not penalised) on the standardised features."""
    order = list(modes) if modes is not None else list(recalls)
    means = {m: float(np.mean(recalls[m])) for m in order}
    default = max(order, key=lambda m: (means[m], -order.index(m)))
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    n, d = z.shape
    design = np.hstack([np.ones((n, 1)), z])
    penalty = ridge * np.eye(d + 1)
    penalty[0, 0] = 0.0
    gains: dict[str, dict[str, Any]] = {}
    for m in order:
        if m == default:
            continue
        y = np.asarray(recalls[m], dtype=np.float64) - np.asarray(recalls[default], dtype=np.float64)
        coef = np.linalg.solve(design.T @ design + penalty, design.T @ y)
        gains[m] = {"bias": round(float(coef[0]), 6), "weights": [round(float(w), 6) for w in coef[1:]]}
    return RouterModel(default=default, features=list(features), mean=[round(float(v), 6) for v in mean],
                       scale=[round(float(v), 6) for v in scale], gains=gains, margin=margin, target=target,
                       ridge=ridge)


def fit_hops(x: np.ndarray, hops: Sequence[float], recalls: Mapping[str, np.ndarray], features: Sequence[str],
             ridge: float = 10.0, threshold: float = 2.5, target: str = "recall@5",
             modes: Optional[Sequence[str]] = None, use: Optional[Sequence[str]] = None) -> RouterModel:
    """Fit a hop router on feature rows ``x``, each row's number of gold passages ``hops`` and each mode's
    per-row recall: a ridge regression (closed form, the bias not penalised) predicts the hops from the
    standardised features; ``short`` is the mode with the best mean recall on rows under ``threshold``
    hops, ``long`` on the others, ``default`` over all rows (ties: the earlier in ``modes``)."""
    order = list(modes) if modes is not None else list(recalls)
    counts = np.asarray(hops, dtype=np.float64)

    def best(rows: np.ndarray) -> str:
        if not rows.any():
            rows = np.ones_like(rows)
        return max(order, key=lambda m: (float(np.mean(np.asarray(recalls[m])[rows])), -order.index(m)))

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    columns = [i for i, f in enumerate(features) if use is None or f in use]
    n, d = z.shape[0], len(columns)
    design = np.hstack([np.ones((n, 1)), z[:, columns]])
    penalty = ridge * np.eye(d + 1)
    penalty[0, 0] = 0.0
    coef = np.linalg.solve(design.T @ design + penalty, design.T @ counts)
    weights = np.zeros(z.shape[1])
    weights[columns] = coef[1:]
    hop_model = {"bias": round(float(coef[0]), 6), "weights": [round(float(w), 6) for w in weights],
                 "threshold": threshold, "short": best(counts < threshold), "long": best(counts >= threshold)}
    return RouterModel(default=best(np.ones(n, dtype=bool)), features=list(features),
                       mean=[round(float(v), 6) for v in mean], scale=[round(float(v), 6) for v in scale], gains={},
                       margin=0.0, target=target, ridge=ridge, hops=hop_model)
