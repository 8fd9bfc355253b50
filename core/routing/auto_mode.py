"""The ``auto`` mode: work out the question's router features (``core.routing.features``), let the router
model choose one of the other modes (``core.routing.model``), run only that mode, and return its result
under the name ``auto`` with the decision in ``result.route`` (chosen mode, reason, predicted gains,
feature values) and a ``route`` trace event. Its answers are the chosen mode's answers.

The model is the workspace's own ``router.json`` when one was trained into it (``python -m core router
train``), else the committed default. It sits above the mode registry (it runs a mode through it); the
registry names it only by its ``"module:attribute"`` reference."""
from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from core.retrieval.query import QueryContext
from core.retrieval.registry import find_spec, modes, registry, specs
from core.routing.features import question_features
from core.routing.fusion import FUSIONS, fused_result, is_fused
from core.routing.fusion import available as fusion_available
from core.routing.model import RouterModel, default_model, load_model
from core.trace import TraceEvent
from core.types import RetrievalResult

if TYPE_CHECKING:
    from core.workspace import Workspace

NAME = "auto"
WORKSPACE_MODEL = "router.json"  # a model trained into a workspace, next to its settings
_MODELS: dict[Any, RouterModel] = {}


def model_path(ws: Workspace) -> Optional[Path]:
    """The workspace's own router model file, or None when it has none (the default model is used)."""
    path = Path(ws.path) / WORKSPACE_MODEL
    return path if path.is_file() else None


def model_for(ws: Workspace) -> tuple[RouterModel, str]:
    """The router model for ``ws`` and where it came from ("workspace" or "default"); read once per file
    version."""
    path = model_path(ws)
    key: Any = ("default",) if path is None else (str(path), path.stat().st_mtime_ns)
    if key not in _MODELS:
        _MODELS[key] = default_model() if path is None else load_model(path)
    return _MODELS[key], "default" if path is None else "workspace"


# The modes the router may choose: those whose own work already includes the router's features (the
# question's keywords, its names linked to graph entities, its embedding and dense chunk hits), so auto
# costs its chosen mode's time plus the router's arithmetic (under 1 ms). naive, tree and local are left
# out: on a question routed to them the features' entity linking was 9-30 ms of extra CPU (local links
# with its own top-up, naive and tree link nothing). Pooled over both MuSiQue dev sets the per-question
# oracle over these five modes is within one point of the oracle over all eight (docs/auto-mode.md).
ROUTED = ("global", "hybrid", "mix", "path", "ppr")


def candidates() -> list[str]:
    """What the router may choose: the registered ``ROUTED`` modes (registry order), then the fused
    candidates (``core.routing.fusion.FUSIONS``) whose parts are all registered."""
    return [m for m in modes() if m in ROUTED] + [f for f in FUSIONS if fusion_available(f)]


def run_candidate(ctx: QueryContext, mode: str) -> RetrievalResult:
    """The result of one candidate on ``ctx``: a registered mode, or a fused candidate."""
    return fused_result(ctx, mode) if is_fused(mode) else registry()[mode].retrieve(ctx)


class AutoRetriever:
    name = NAME

    @property
    def params(self) -> tuple[str, ...]:
        """The settings auto may read: those of every mode it can choose (it runs one of them)."""
        seen: dict[str, None] = {}
        for mode_spec in specs():  # read from fresh retrievers: the registry is being built when this is read
            if mode_spec.name != NAME:
                seen.update(dict.fromkeys(getattr(mode_spec.build_retriever(), "params", ())))
        return tuple(seen)

    def retrieve(self, ctx: QueryContext) -> RetrievalResult:
        started = time.perf_counter()
        model, source = model_for(ctx.ws)
        choice = model.choose(question_features(ctx), candidates())
        route_ms = round((time.perf_counter() - started) * 1000, 3)
        result = run_candidate(ctx, choice.mode)
        result.mode = NAME
        result.route = {"chosen": choice.mode, "reason": choice.reason, "gains": choice.gains,
                        "features": choice.features, "model": source, "default": model.default}
        result.timings_ms = {"route": route_ms, **result.timings_ms}
        result.trace.insert(0, TraceEvent("route", "route", {"chosen": choice.mode, "reason": choice.reason,
                                                             "route_ms": route_ms}))
        return result


def chosen_mode(result: RetrievalResult) -> str:
    """The mode whose answer builders read an auto result: the chosen mode; naive's for a fused candidate
    (its offline answer is built from the interleaved chunks: measured on both MuSiQue dev sets, mix's
    builder on the fused rows answered fewer questions, docs/auto-mode.md; the LLM's message is the
    context, mix's rows included) and for a result without a routing decision."""
    chosen = str(result.route.get("chosen", "")) if result.route else ""
    if is_fused(chosen):
        return "naive"
    return chosen if chosen and chosen != NAME and find_spec(chosen) is not None else "naive"


def auto_answer(inputs: Any, result: RetrievalResult) -> Any:
    """The offline answer of an auto result: the chosen mode's answer builder on it."""
    spec = find_spec(chosen_mode(result))
    assert spec is not None
    return spec.offline_builder()(inputs, result)


def auto_llm_message(result: RetrievalResult) -> str:
    """The LLM user message of an auto result: the chosen mode's message builder."""
    spec = find_spec(chosen_mode(result))
    assert spec is not None
    return str(spec.llm_builder()(result))
