"""The registry of retrieval modes and the one call that runs a mode (and answers)."""
from __future__ import annotations

from typing import Optional

from core.retrieval.base import QueryContext, Retriever
from core.types import RetrievalResult


def _registry() -> dict[str, Retriever]:
    from core.retrieval.global_search import GlobalRetriever
    from core.retrieval.hybrid_search import HybridRetriever, MixRetriever
    from core.retrieval.local_search import LocalRetriever
    from core.retrieval.naive_search import NaiveRetriever
    from core.retrieval.path_search import PathRetriever
    from core.retrieval.tree_search import TreeRetriever

    retrievers: list[Retriever] = [NaiveRetriever(), LocalRetriever(), GlobalRetriever(), HybridRetriever(),
                                   MixRetriever(), TreeRetriever(), PathRetriever()]
    return {r.name: r for r in retrievers}


_REGISTRY: Optional[dict[str, Retriever]] = None


def registry() -> dict[str, Retriever]:
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _registry()
    return _REGISTRY


def modes() -> list[str]:
    """All registered modes, in display order."""
    order = ["naive", "local", "global", "hybrid", "mix", "tree", "path"]
    return [m for m in order if m in registry()]


def mode_params(mode: str) -> list[str]:
    """The settings ``mode`` reads (its retriever's declared ``params``)."""
    if mode not in registry():
        raise ValueError(f"unknown mode {mode!r} (available: {', '.join(modes())})")
    return list(registry()[mode].params)


def parse_modes(spec: str) -> list[str]:
    """'all' or a comma-separated list of modes; unknown names raise ValueError."""
    if spec.strip() in ("", "all"):
        return modes()
    wanted = [m.strip() for m in spec.split(",") if m.strip()]
    unknown = [m for m in wanted if m not in registry()]
    if unknown:
        raise ValueError(f"unknown mode(s): {', '.join(unknown)} (available: {', '.join(modes())})")
    return wanted


def retrieve(ctx: QueryContext, mode: str) -> RetrievalResult:
    """Run one mode on a prepared query context."""
    if mode not in registry():
        raise ValueError(f"unknown mode {mode!r} (available: {', '.join(modes())})")
    if not ctx.question.strip():
        raise ValueError("the question is empty")
    return registry()[mode].retrieve(ctx)
