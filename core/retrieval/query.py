"""The question object at the bottom of ``core.retrieval``: ``QueryContext`` (one question, the
workspace, the settings and the strategies it is answered with), ``QuestionState`` (everything
worked out for that question once and shared by the modes of one comparison and by their answers),
the records the strategies hand to the modes, and the strategy and retriever protocols.

Nothing here imports a mode, a strategy or the answers: the strategies (RAGScope's or the papers',
``core.retrieval.strategies``) are chosen by whoever builds the context
(``core.retrieval.registry.query_context``) and passed in, and a module above that keeps work of
its own per question (the anchored relations, the tree's term counts, the answers' cache) attaches
it to the state by its own type (``QuestionState.attached``), so this module never names it.
Every value of the state is computed once, by the method that owns it, and written nowhere else.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from concurrent.futures import Future
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional, Protocol, Sequence, TypeVar

import numpy as np

from core.embeddings import QUERY_BATCH
from core.extraction.query_terms import name_spans
from core.retrieval import trace_text  # noqa: F401  (registers the trace events' wording)
from core.retrieval.query_vectors import fetch_shared
from core.settings import Settings
from core.storage.ports import GraphView
from core.storage.records import VectorHit
from core.types import RetrievalResult

if TYPE_CHECKING:
    from core.retrieval.path_flow import ScoredPath
    from core.trace import TraceEvent
    from core.workspace import Workspace

Attached = TypeVar("Attached")

# The query strings the running mode never reads (``Retriever.unread_query_texts``; set by
# ``core.retrieval.registry.retrieve`` for the mode it runs, per thread): ``prefetch`` leaves them out of
# the batch it adds to a mode's own strings. A string left out is still embedded if a mode asks for it
# (same per-string call, same vector), so this only saves work, never changes a result. Only for an
# embedder whose query vectors do not depend on their batch (``query_vectors_alone``: the int8 MiniLM's
# one call per string); torch's packed call differs in the last float bits with its batch.
UNREAD_QUERY_TEXTS: ContextVar[Optional[Callable[["QueryContext"], set[str]]]] = ContextVar(
    "ragscope_unread_query_texts", default=None)


@contextmanager
def reading_only_what_mode_reads(unread: Optional[Callable[["QueryContext"], set[str]]]) -> Iterator[None]:
    """Run a mode with ``unread`` (its ``unread_query_texts``) telling ``prefetch`` what to leave out."""
    token = UNREAD_QUERY_TEXTS.set(unread)
    try:
        yield
    finally:
        UNREAD_QUERY_TEXTS.reset(token)


# --- the records the strategies hand to the modes ------------------------------------------------
@dataclass
class Seed:
    """A question entity linked to the graph: its key, score, the keyword that found it and how."""

    key: str
    score: float
    keyword: str
    how: str  # "name" | "alias" | "contains" | "vector"
    question: bool = False  # stands for a name of the question (exact, alias, or that name's best hit)

    def reason(self) -> str:
        if self.how == "name":
            return f"named in the question ('{self.keyword}')"
        if self.how == "alias":
            return f"'{self.keyword}' in the question is one of its names"
        if self.how == "contains":
            return f"its name contains '{self.keyword}' from the question"
        return f"cosine {self.score:.3f} to the question's '{self.keyword}'"


@dataclass
class RelationSearch:
    """What a relation search found: (source, target, score) triples best first, a reason per pair
    (None: the paper's cosine reason), the graph searched and the label reasons quote."""

    triples: list[tuple[str, str, float]]
    reasons: Optional[dict[tuple[str, str], str]]
    graph: GraphView
    label: str


@dataclass
class NodeChoice:
    """The path mode's start nodes (key, score) best first, why each is one, and the question's own."""

    nodes: list[tuple[str, float]]
    why: dict[str, str]
    question: set[str]


# --- the protocols -------------------------------------------------------------------------------
class KeywordExtractor(Protocol):
    """Turns a question into (low-level, high-level) keywords; offline (spaCy) or LLM."""

    name: str

    def extract(self, question: str) -> tuple[list[str], list[str]]: ...


class Retriever(Protocol):
    """A retrieval mode. ``params``: the settings it reads, recorded in ``RetrievalResult.params`` and
    exposed by ``core.retrieval.registry.mode_params`` (the Inspect page builds its controls from them).
    A mode may also say which of the question's ``query_texts`` it never reads (``unread_query_texts(ctx)
    -> set[str]``, see ``UNREAD_QUERY_TEXTS``); without it every string is embedded with the first batch."""

    name: str
    params: Sequence[str]

    def retrieve(self, ctx: QueryContext) -> RetrievalResult: ...


class SeedSelection(Protocol):
    """Which question names are looked up and how they become seed entities."""

    shares_mode_seeds: bool  # the answers may reuse the seeds a mode linked (same names, same way)

    def names(self, ws: Workspace, question: str, spans: Sequence[str],
              before_parse: Optional[Sequence[str]] = None) -> list[str]: ...

    def names_before_parse(self, ws: Workspace, question: str) -> list[str]: ...

    def seeds(self, ctx: QueryContext, names: Sequence[str], fallback_terms: Sequence[str], top_n: int,
              fill: bool) -> list[Seed]: ...

    def describe(self, has_names: bool, fill: bool) -> str: ...


class RelationRanking(Protocol):
    """How global mode finds and ranks its relations; None when there is nothing to search."""

    def search(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch) -> Optional[RelationSearch]: ...


class PathRanking(Protocol):
    """The path mode's start nodes, path order, extra connections and each path's why."""

    order: str  # how the kept paths are ordered, as the trace says it

    def nodes(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, kg: GraphView) -> NodeChoice: ...

    def priority(self, question: set[str]) -> Optional[Callable[[ScoredPath], tuple[int, int]]]: ...

    def connect(self, ctx: QueryContext, kg: GraphView, question: set[str], paths: list[ScoredPath],
                keys: Sequence[str]) -> tuple[list[ScoredPath], list[TraceEvent]]: ...

    def why(self, path: ScoredPath, question: set[str], seed_why: dict[str, str], names: dict[str, str]) -> str: ...


class EvidenceOrder(Protocol):
    """How evidence chunks are ordered: LightRAG's chunk lists, PathRAG's sources, the tree's leaves."""

    leaves_tail: bool  # a summary's leaves that mention no query entity go after every item

    def owner_scores(self, scores: Optional[Sequence[float]]) -> Optional[Sequence[float]]: ...

    def describe(self, via: str, scores: Optional[Sequence[float]]) -> str: ...

    def sources(self, ctx: QueryContext, ids: Sequence[str]) -> list[str]: ...

    def tie_break(self, ctx: QueryContext) -> Optional[Mapping[str, float]]: ...


class TreeQuery(Protocol):
    """The tree mode's query entities, and the extra terms that weigh occurrences."""

    def terms(self, ctx: QueryContext, graph: Any) -> tuple[list[str], list[str]]: ...

    def weight_terms(self, ctx: QueryContext) -> list[str]: ...


@dataclass(frozen=True)
class Strategies:
    """One member of every strategy pair (``core.retrieval.strategies``); ``paper`` says which side."""

    paper: bool
    seeds: SeedSelection
    relations: RelationRanking
    paths: PathRanking
    evidence: EvidenceOrder
    tree: TreeQuery


# --- the question --------------------------------------------------------------------------------
@dataclass
class QuestionState:
    """Everything worked out once for one question, shared by the modes of one comparison (and by
    their answers): a pure function of the question, the context's settings, strategies, keyword
    extractor and embedder, and the workspace generation. ``QueryContext``'s methods fill the fields;
    a module above keeps its own per-question work in ``attached`` (keyed by its own type), so this
    record never names it."""

    question: str
    keywords: Optional[tuple[list[str], list[str]]] = None
    keyword_usage: dict[str, int] = field(default_factory=lambda: {"llm_calls": 0, "prompt_tokens": 0,
                                                                   "completion_tokens": 0})
    names: Optional[list[str]] = None  # the names entity linking looks up (``QueryContext.link_names``)
    names_before_parse: Optional[list[str]] = None  # those of them found without the parse
    query_texts: Optional[list[str]] = None
    embeddings: OrderedDict[str, np.ndarray] = field(default_factory=OrderedDict)
    pending: dict[str, Future[np.ndarray]] = field(default_factory=dict)  # started, not yet in ``embeddings``
    seed_names: Optional[list[str]] = None  # None until a mode linked the question's names
    seeds: Optional[list[Seed]] = None
    seeds_filled: Optional[list[Seed]] = None  # local mode's seeds, topped up by the joined search
    _attached: dict[type, Any] = field(default_factory=dict, init=False, repr=False)

    def attached(self, kind: type[Attached]) -> Attached:
        """The question's ``kind`` record (``kind()`` the first time): how a module above keeps its own
        per-question work here, e.g. ``core.answers.cache.AnswerCache``."""
        found = self._attached.get(kind)
        if found is None:
            found = self._attached.setdefault(kind, kind())
        return found


class QueryContext:
    """One question and how it is answered: the workspace, its settings, the strategies and the
    keyword extractor, all given by the caller (``core.retrieval.registry.query_context`` picks the
    strategies from the settings), and the question's ``state``, which caches the query embeddings,
    keywords and seeds so a comparison of several modes computes them once."""

    def __init__(self, ws: Workspace, question: str, settings: Settings, strategies: Strategies,
                 keywords: KeywordExtractor) -> None:
        self.ws = ws
        self.question = question
        self._settings = settings
        self._strategies = strategies
        self.keyword_extractor = keywords
        self.state = QuestionState(question)

    @property
    def settings(self) -> Settings:
        """The settings of this question (fixed: the state's cached work depends on them)."""
        return self._settings

    @property
    def strategies(self) -> Strategies:
        """The strategies the question is answered with, as given (fixed, like the settings)."""
        return self._strategies

    @property
    def keyword_usage(self) -> dict[str, int]:
        """The keyword extraction's LLM usage (calls and tokens; zeros offline)."""
        return self.state.keyword_usage

    @property
    def graph(self) -> GraphView:
        """The knowledge graph of the workspace generation this thread reads."""
        return self.ws.views.graph

    def search(self, collection: str, vector: np.ndarray, k: int) -> list[VectorHit]:
        """A retrieval vector search: exact cosines over the in-memory vectors (``vector_search`` "exact",
        the default: deterministic) or the vector index's approximate search ("approximate")."""
        if self.settings.vector_search == "approximate":
            return self.ws.vectors.query(collection, vector, k)
        return self.ws.views.vectors.top(collection, vector, k)

    def search_chunks(self, vector: np.ndarray, k: int) -> list[VectorHit]:
        """The top-k chunks by their best window, exact or approximate like ``search``."""
        if self.settings.vector_search == "approximate":
            return self.ws.vectors.query_chunks(vector, k)
        return self.ws.views.vectors.top_chunks(vector, k)

    def embed(self, text: str) -> np.ndarray:
        """Embedding of one query string (fp32, cached; any string but the question brings the other
        strings of ``query_texts`` with it: see ``prefetch``)."""
        if text not in self.state.embeddings:
            self.prefetch([text])
        return self.state.embeddings[text]

    def embed_ahead(self, text: str) -> None:
        """Start embedding ``text`` in the background where the embedder can (``embed_queries_soon``: the
        int8 MiniLM's helper thread), e.g. during the question's parse; the same vector as ``embed``'s."""
        soon, state = getattr(self.ws.embedder, "embed_queries_soon", None), self.state
        if soon is None or not text or text in state.embeddings or text in state.pending:
            return
        state.pending[text] = soon([text])

    def prefetch(self, texts: Sequence[str]) -> None:
        """Embed ``texts`` (the question alone stays one string) with every string of ``query_texts`` the mode
        reads (``UNREAD_QUERY_TEXTS``): shared with the int8 MiniLM's helper thread, the others only started
        (``query_vectors.fetch_shared``); else in one packed call (``embed_queries``: torch) or batches of
        ``QUERY_BATCH`` (a server). A string started by ``embed_ahead`` is never embedded twice."""
        wanted, later = [t for t in dict.fromkeys(texts) if t], []
        alone = getattr(self.ws.embedder, "query_vectors_alone", False)  # else the batch shapes the vectors
        if any(t != self.question for t in wanted):
            unread = UNREAD_QUERY_TEXTS.get()
            skip = unread(self) if unread is not None and alone else set()
            later = [t for t in self.query_texts() if t not in skip and t not in wanted]
        cache, pending = self.state.embeddings, self.state.pending
        soon = getattr(self.ws.embedder, "embed_queries_soon", None) if alone else None
        if soon is not None:
            return fetch_shared(cache, pending, soon, self._embed_now, wanted, later)
        wanted = list(dict.fromkeys(wanted + later))
        missing = [t for t in wanted if t not in cache and t not in pending]
        vectors = dict(zip(missing, self._embed_now(missing))) if missing else {}
        for text in wanted:
            if text in cache:
                continue
            started = pending.get(text)
            cache[text] = vectors[text] if started is None else started.result()[0]
            pending.pop(text, None)

    def _embed_now(self, texts: list[str]) -> list[np.ndarray]:
        embedder = self.ws.embedder
        packed = getattr(embedder, "embed_queries", None)
        if packed is not None:
            return list(packed(texts))
        out: list[np.ndarray] = []
        for start in range(0, len(texts), QUERY_BATCH):
            out.extend(embedder.embed(texts[start : start + QUERY_BATCH]))
        return out

    def query_texts(self) -> list[str]:
        """Every string a mode of this question may embed: the question, the names entity linking
        looks up one by one and joined (the papers' joined search), and each keyword level joined.
        RAGScope's strategies search the low-level keywords only when the question has no name
        (they stand in for the names), so with names that string is left out; the papers' keep it."""
        if self.state.query_texts is None:
            low, high = self.keywords()
            names = self.link_names()
            texts = [self.question, *names, ", ".join(names), ", ".join(high)]
            if self.strategies.paper or not names:
                texts.append(", ".join(low))
            self.state.query_texts = [t for t in dict.fromkeys(texts) if t]
        return self.state.query_texts

    def keywords(self) -> tuple[list[str], list[str]]:
        """The question's (low-level, high-level) keywords, extracted once."""
        if self.state.keywords is None:
            self.state.keywords = self.keyword_extractor.extract(self.question)
            usage = getattr(self.keyword_extractor, "last_usage", None)
            if usage:
                self.state.keyword_usage = dict(usage)
        return self.state.keywords

    def link_names(self) -> list[str]:
        """The names entity linking looks up, by the seed strategy: offline, from the question's name
        spans (no dates or amounts; RAGScope's strategy adds the graph's own names found verbatim in
        it); with LLM keywords, from the low-level keywords. Worked out once per question."""
        if self.state.names is None:
            low, _ = self.keywords()
            spans = name_spans(self.question) if getattr(self.keyword_extractor, "name", "") == "spacy" else list(low)
            self.state.names = self.strategies.seeds.names(self.ws, self.question, spans, self.names_before_parse())
        return list(self.state.names)

    def names_before_parse(self) -> list[str]:
        """The names of ``link_names`` the seed strategy finds in the question's text alone (RAGScope's:
        the graph's own names; the papers': none), worked out once per question: ``embed_names_ahead``
        embeds them while the question is parsed."""
        if self.state.names_before_parse is None:
            self.state.names_before_parse = self.strategies.seeds.names_before_parse(self.ws, self.question)
        return list(self.state.names_before_parse)

    def embed_names_ahead(self) -> None:
        """``embed_ahead`` each name found before the parse (a mode that links names one by one embeds each)."""
        for name in self.names_before_parse():
            self.embed_ahead(name)

    def seeds(self, fallback_terms: Sequence[str], fill: bool = False) -> list[Seed]:
        """The question's entities linked to the graph by the seed strategy (``fallback_terms`` are
        searched when the question has no name), linked once per question; ``fill`` tops them up
        with the paper's joined search (local mode) and is remembered apart."""
        state = self.state
        seeds = state.seeds_filled if fill else state.seeds
        if seeds is None:
            names = self.link_names()
            seeds = self.strategies.seeds.seeds(self, names, fallback_terms, self.settings.lightrag_top_k, fill)
            if fill:
                state.seeds_filled = seeds
            else:
                state.seeds = seeds
            state.seed_names = names
        return seeds


class Stopwatch:
    """Accumulates milliseconds per stage into ``result.timings_ms``."""

    def __init__(self, result: RetrievalResult) -> None:
        self.result = result

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            elapsed = (time.perf_counter() - started) * 1000.0
            self.result.timings_ms[name] = round(self.result.timings_ms.get(name, 0.0) + elapsed, 3)
