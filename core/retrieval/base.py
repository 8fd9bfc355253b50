"""Shared machinery of the retrieval modes: the retriever protocol, stage timers, query embedding,
chunk records, token-budgeted lists and the evidence list every mode exposes."""
from __future__ import annotations

import time
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Optional, Protocol, Sequence

import numpy as np

from core.embeddings import QUERY_BATCH
from core.retrieval.lightrag_search import edge_count  # noqa: F401  (re-exported for the modes)
from core.retrieval.lightrag_search import link_names_of
from core.retrieval.state import QuestionState
from core.retrieval.strategies import Strategies, strategies_for
from core.retrieval import trace_text  # noqa: F401  (registers the trace events' wording)
from core.retrieval.csv_cells import csv_table  # noqa: F401  (re-exported: the LightRAG context tables)
from core.settings import Settings
from core.storage.ports import GraphView
from core.storage.records import VectorHit
from core.tokens import count_tokens
from core.types import ChunkHit, RetrievalResult
from core.workspace import Workspace


class KeywordExtractor(Protocol):
    """Turns a question into (low-level, high-level) keywords; offline (spaCy) or LLM."""

    name: str

    def extract(self, question: str) -> tuple[list[str], list[str]]:
        ...


class Retriever(Protocol):
    """A retrieval mode. ``params``: the settings it reads, recorded in ``RetrievalResult.params`` and
    exposed by ``core.retrieval.registry.mode_params`` (the Inspect page builds its controls from them)."""

    name: str
    params: Sequence[str]

    def retrieve(self, ctx: "QueryContext") -> RetrievalResult:
        ...


class QueryContext:
    """Everything a retriever needs for one question; caches the query embedding and keywords so a
    comparison of several modes computes them once."""

    def __init__(self, ws: Workspace, question: str, settings: Optional[Settings] = None,
                 keywords: Optional[KeywordExtractor] = None) -> None:
        self.ws = ws
        self.question = question
        self.settings = settings or ws.settings
        if keywords is None:
            from core.retrieval.keywords import OfflineKeywords

            keywords = OfflineKeywords()
        self.keyword_extractor = keywords
        self._embeddings: "OrderedDict[str, np.ndarray]" = OrderedDict()
        self._keywords: Optional[tuple[list[str], list[str]]] = None
        self.state = QuestionState(question)  # per-question results shared by the modes of one comparison
        self.keyword_usage: dict[str, int] = {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}

    @property
    def settings(self) -> Settings:
        return self._settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        """The settings of this query; the strategies (RAGScope's or the papers') are chosen from them
        once, here (``core.retrieval.strategies``)."""
        self._settings = value
        self.strategies: Strategies = strategies_for(value)
        self._names: Optional[list[str]] = None  # the strategies pick the names (and so the query strings)
        self._query_texts: Optional[list[str]] = None

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
        """Embedding of one query string (fp32, cached). Any string but the question brings every
        string of ``query_texts`` with it, in one batch: a mode's name, keyword and question searches
        then cost one embedding call, not one each."""
        if text not in self._embeddings:
            self.prefetch([text])
        return self._embeddings[text]

    def prefetch(self, texts: Sequence[str]) -> None:
        """Embed the query strings a mode will need in as few calls as possible: the question alone
        stays one string (naive, tree), anything else is embedded with every string of
        ``query_texts``, in one packed call where the embedder has one (``embed_queries``: no padding,
        the local MiniLM), else in batches of ``QUERY_BATCH`` (an embeddings server)."""
        wanted = [t for t in dict.fromkeys(texts) if t]
        if any(t != self.question for t in wanted):
            wanted = list(dict.fromkeys(wanted + self.query_texts()))
        missing = [t for t in wanted if t not in self._embeddings]
        if not missing:
            return
        embedder = self.ws.embedder
        packed = getattr(embedder, "embed_queries", None)
        if packed is not None:
            for text, vector in zip(missing, packed(missing)):
                self._embeddings[text] = vector
            return
        for start in range(0, len(missing), QUERY_BATCH):
            batch = missing[start : start + QUERY_BATCH]
            for text, vector in zip(batch, embedder.embed(batch)):
                self._embeddings[text] = vector

    def query_texts(self) -> list[str]:
        """Every string a mode of this question may embed: the question, the names entity linking
        looks up one by one and joined (the papers' joined search), and each keyword level joined.
        RAGScope's strategies search the low-level keywords only when the question has no name
        (they stand in for the names), so with names that string is left out; the papers' keep it."""
        if self._query_texts is None:
            low, high = self.keywords()
            names = link_names_of(self)
            texts = [self.question, *names, ", ".join(names), ", ".join(high)]
            if self.strategies.paper or not names:
                texts.append(", ".join(low))
            self._query_texts = [t for t in dict.fromkeys(texts) if t]
        return self._query_texts

    def keywords(self) -> tuple[list[str], list[str]]:
        if self._keywords is None:
            self._keywords = self.keyword_extractor.extract(self.question)
            usage = getattr(self.keyword_extractor, "last_usage", None)
            if usage:
                self.keyword_usage = dict(usage)
        return self._keywords


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


def new_result(ctx: QueryContext, mode: str, param_names: Sequence[str]) -> RetrievalResult:
    params = {name: getattr(ctx.settings, name) for name in param_names}
    return RetrievalResult(mode=mode, query=ctx.question, params=params)


def fill_chunk_texts(ws: Workspace, records: list[ChunkHit]) -> list[ChunkHit]:
    """Fill doc ids, names, positions and texts of chunk records in one query; drop vanished chunks."""
    chunks = ws.records.chunks_by_id(r.chunk_id for r in records)
    names = ws.doc_names()
    out = []
    for record in records:
        chunk = chunks.get(record.chunk_id)
        if chunk is None:
            continue
        record.doc_id, record.doc_name, record.order = chunk.doc_id, names.get(chunk.doc_id, chunk.doc_id), chunk.order
        record.text = record.text or chunk.text
        out.append(record)
    return out


def finish(result: RetrievalResult, context_text: str, evidence: Iterable[str],
           counter: Optional[Callable[[str], int]] = None) -> RetrievalResult:
    """Set the rendered context, its token count (``counter``, exact: default ``count_tokens``; the
    modes pass the generation's ``core.retrieval.token_counts`` counter) and the ordered,
    de-duplicated evidence chunk ids."""
    result.context_text = context_text
    result.context_tokens = (counter or count_tokens)(context_text)
    result.evidence_chunk_ids = list(dict.fromkeys(c for c in evidence if c))
    return result
