"""The retrieval modes: one ordered ``ModeSpec`` per mode (``SPECS``, in display order), and the calls
that read it — the mode list, a mode's declared parameters, parsing ``--modes``, running a mode —
and ``query_context``, which builds the question object the modes run on, with the strategies the
settings pick (``core.retrieval.strategies``) and the keyword extractor passed in.

Adding a mode: write its retriever module (and, if its evidence is not plain chunks, its answer
builder), then add one ``ModeSpec`` to ``SPECS``. The CLI's ``--modes``, Compare, Inspect, Evaluate,
the offline and LLM answers all read this list.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from core.retrieval.keywords import OfflineKeywords
from core.retrieval.results import cite_sources
from core.retrieval.query import KeywordExtractor, QueryContext, Retriever, reading_only_what_mode_reads
from core.retrieval.spec import ModeSpec, ModeSpecError
from core.retrieval.strategies import strategies_for
from core.types import RetrievalResult

if TYPE_CHECKING:
    from core.settings import Settings
    from core.workspace import Workspace

_LIGHTRAG_ANSWER = "core.answers.lightrag:lightrag_answer"

SPECS: tuple[ModeSpec, ...] = (
    ModeSpec("naive", "baseline", "dense top-k chunks for the question's embedding.",
             "core.retrieval.naive_search:NaiveRetriever", "core.answers.chunk_modes:naive_answer"),
    ModeSpec("local", "LightRAG", "low level — entities matched by low-level keywords, their relations and chunks.",
             "core.retrieval.local_search:LocalRetriever", _LIGHTRAG_ANSWER),
    ModeSpec("global", "LightRAG",
             "high level — relations matched by high-level keywords, their endpoints and chunks.",
             "core.retrieval.global_search:GlobalRetriever", _LIGHTRAG_ANSWER),
    ModeSpec("hybrid", "LightRAG", "local and global merged round-robin.",
             "core.retrieval.hybrid_search:HybridRetriever", _LIGHTRAG_ANSWER),
    ModeSpec("mix", "LightRAG", "hybrid plus the naive chunks.",
             "core.retrieval.hybrid_search:MixRetriever", _LIGHTRAG_ANSWER),
    ModeSpec("tree", "E2GraphRAG",
             "query-entity pairs within h nodes in the mention graph, else the summary tree.",
             "core.retrieval.tree_search:TreeRetriever", "core.answers.chunk_modes:tree_answer"),
    ModeSpec("path", "PathRAG", "flow-pruned paths between retrieved nodes, least reliable first in the prompt.",
             "core.retrieval.path_search:PathRetriever", "core.answers.path:path_answer",
             llm_answer="core.llm.generated_answers:context_is_prompt"),
    ModeSpec("ppr", "HippoRAG", "personalised PageRank over entities and chunks from the question's entities.",
             "core.retrieval.ppr_search:PPRRetriever", "core.answers.chunk_modes:ppr_answer"),
    ModeSpec("auto", "router", "picks one of the other modes per question from cheap question features, runs only it.",
             "core.routing.auto_mode:AutoRetriever", "core.routing.auto_mode:auto_answer",
             llm_answer="core.routing.auto_mode:auto_llm_message"),
)

_CACHE: dict[str, Any] = {"specs": None, "retrievers": None}


def specs() -> list[ModeSpec]:
    """Every mode's spec, in display order (duplicate names are an error)."""
    names = [s.name for s in SPECS]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ModeSpecError(f"more than one spec for mode(s): {', '.join(duplicates)}")
    return list(SPECS)


def spec(mode: str) -> ModeSpec:
    """The spec of ``mode``; an unknown name raises ValueError listing the modes."""
    for candidate in specs():
        if candidate.name == mode:
            return candidate
    raise ValueError(f"unknown mode {mode!r} (available: {', '.join(modes())})")


def find_spec(mode: str) -> Optional[ModeSpec]:
    """The spec of ``mode``, or None when no mode has that name."""
    return next((s for s in specs() if s.name == mode), None)


def registry() -> dict[str, Retriever]:
    """mode -> its retriever instance, built once per ``SPECS`` value."""
    if _CACHE["specs"] is not SPECS or _CACHE["retrievers"] is None:
        _CACHE["retrievers"] = {s.name: s.build_retriever() for s in specs()}
        _CACHE["specs"] = SPECS
    return _CACHE["retrievers"]


def modes() -> list[str]:
    """All registered modes, in display order."""
    return [s.name for s in specs()]


def mode_params(mode: str) -> list[str]:
    """The settings ``mode`` reads (its retriever's declared ``params``, each a ``Settings`` field)."""
    spec(mode)
    return list(registry()[mode].params)


def mode_help(mode: str) -> str:
    """One line on what ``mode`` does (``system: blurb``); empty for an unknown mode."""
    found = find_spec(mode)
    return found.help_text() if found else ""


def parse_modes(text: str) -> list[str]:
    """'all' or a comma-separated list of modes; unknown names raise ValueError."""
    if text.strip() in ("", "all"):
        return modes()
    wanted = [m.strip() for m in text.split(",") if m.strip()]
    known = set(modes())
    unknown = [m for m in wanted if m not in known]
    if unknown:
        raise ValueError(f"unknown mode(s): {', '.join(unknown)} (available: {', '.join(modes())})")
    return wanted


def query_context(ws: Workspace, question: str, settings: Optional[Settings] = None,
                  keywords: Optional[KeywordExtractor] = None) -> QueryContext:
    """The question object the modes of one comparison share: the workspace's settings unless
    ``settings`` are given, the strategies they pick (``strategies_for``: RAGScope's, or the papers')
    and ``keywords`` (default: offline spaCy keywords)."""
    chosen = settings or ws.settings
    extractor = OfflineKeywords() if keywords is None else keywords
    return QueryContext(ws, question, chosen, strategies_for(chosen), extractor)


def retrieve(ctx: QueryContext, mode: str) -> RetrievalResult:
    """Run one mode on a prepared query context."""
    if mode not in registry():
        raise ValueError(f"unknown mode {mode!r} (available: {', '.join(modes())})")
    if not ctx.question.strip():
        raise ValueError("the question is empty")
    retriever = registry()[mode]
    if not getattr(retriever, "embeds_question_first", False):
        ctx.embed_ahead(ctx.question)  # the modes search with the question's vector: overlap it with the parse
    with ctx.ws.one_generation(), reading_only_what_mode_reads(getattr(retriever, "unread_query_texts", None)):
        if getattr(retriever, "searches_each_name", False):
            ctx.embed_names_ahead()  # and the names its seeds search with, those found without the parse
        result = retriever.retrieve(ctx)
        return cite_sources(ctx.ws, result)
