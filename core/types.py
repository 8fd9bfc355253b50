"""Shared record types of RAGScope: documents, chunks, extraction records, progress events, the typed hits
a retrieval mode returns (``EntityHit``, ``RelationHit``, ``PathHit``, ``ChunkHit``, ``SummaryHit``) and the
one ``RetrievalResult`` that holds them; ``Cancelled`` with its check points (``cancel_scope`` / ``checkpoint``)."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable, Iterator, Mapping, Optional

from core.trace import TraceEvent, trace_text


def display_name(key: str, attributes: Optional[Mapping[str, Any]]) -> str:
    """An entity's display name: its ``name`` attribute, else its key."""
    return str((attributes or {}).get("name") or key)


@dataclass
class SourceDocument:
    """A document as produced by a loader, before indexing."""

    name: str
    text: str
    doc_id: Optional[str] = None  # kept from JSONL corpora; else the content hash is used
    source: str = ""
    page_starts: tuple[int, ...] = ()  # PDF: offset in ``text`` where each page (1-based order) starts
    section_starts: tuple[int, ...] = ()  # DOCX, HTML, Markdown: offset of each section heading in ``text``
    by_line: bool = False  # text, Markdown: cited by line (line starts computed from the stored text)
    original: bytes = field(default=b"", repr=False)  # PDF: the uploaded file, kept for the source viewer


@dataclass
class LoadFailure:
    """A document (or JSONL line) that could not be loaded, with a human-readable reason."""

    name: str
    reason: str


@dataclass
class Chunk:
    chunk_id: str
    doc_id: str
    order: int
    text: str
    tokens: int
    start_token: int = 0
    start_char: int = -1  # offset in the document text (-1: unknown, e.g. read back from the database)
    windows: int = 1  # vectors of the chunk (one per ~192-token window, see core.embeddings)


@dataclass
class EntityRecord:
    """One entity mention fragment extracted from one chunk."""

    name: str
    type: str
    description: str
    type_votes: dict[str, int] = field(default_factory=dict)  # label -> mentions with that label
    aliases: list[str] = field(default_factory=list)  # other surface forms merged into this name


@dataclass
class RelationRecord:
    """One relation fragment extracted from one chunk (undirected)."""

    source: str
    target: str
    keywords: list[str]
    description: str
    weight: float = 1.0


@dataclass
class MentionRecord:
    """E2GraphRAG mention-graph contribution of one chunk."""

    counts: dict[str, int] = field(default_factory=dict)  # term -> occurrences in the chunk
    labels: dict[str, str] = field(default_factory=dict)  # term -> NE label or NOUN/PROPN
    cooccurrence: dict[tuple[str, str], int] = field(default_factory=dict)  # (a, b) sorted -> count


@dataclass
class SentenceRecord:
    """One sentence of a chunk (markup removed) with its typed mentions, stored at indexing time so
    that answers never parse text per query: ``mentions`` = [label, surface text, entity key or ""]."""

    text: str
    mentions: list[list[str]] = field(default_factory=list)


@dataclass
class ChunkExtraction:
    """Everything extracted from one chunk by one parse."""

    entities: list[EntityRecord] = field(default_factory=list)
    relations: list[RelationRecord] = field(default_factory=list)
    mentions: MentionRecord = field(default_factory=MentionRecord)
    dropped: list[str] = field(default_factory=list)  # what a parser had to ignore
    sentences: list[SentenceRecord] = field(default_factory=list)


@dataclass
class ProgressEvent:
    """A progress report: step name, items done out of total, and a message. An indexing run also
    says how far along the whole run is (``fraction`` 0–1), the seconds left (``eta_s``, None while
    unknown) and which batch is running (``batch`` of ``batches``; 0 when not said)."""

    step: str
    done: int
    total: int
    message: str = ""
    fraction: Optional[float] = None
    eta_s: Optional[float] = None
    batch: int = 0
    batches: int = 0

    def eta_text(self) -> str:
        """'about 2 min left', 'about 40 s left', or '' while the time left is unknown."""
        if self.eta_s is None or self.eta_s <= 0:
            return ""
        if self.eta_s >= 90:
            return f"about {round(self.eta_s / 60):,} min left"
        return f"about {max(round(self.eta_s), 1)} s left"


ProgressCallback = Callable[[ProgressEvent], None]


def no_progress(_event: ProgressEvent) -> None:
    """A progress callback that ignores events."""


class Cancelled(Exception):
    """Work was cancelled on request (the app's Cancel button, Ctrl-C in the CLI).

    Indexing stops as a resumable stop: the documents being indexed go back to 'pending', nothing
    of the interrupted batch is committed, and LLM replies received so far stay in the cache, so
    the next run resumes without paying for them again. ``core.llm.client.LLMCancelled`` is one.
    """


_CANCEL_EVENTS: ContextVar[tuple[threading.Event, ...]] = ContextVar("ragscope_cancel_events", default=())


@contextmanager
def cancel_scope(*events: Optional[threading.Event]) -> Iterator[None]:
    """While the block runs (in this thread or task), ``checkpoint()`` raises ``Cancelled`` once any of
    ``events`` is set: long steps deep below the indexing run (parsing, chunking, embedding one huge
    document) check it without every function between taking the event. Scopes nest (both apply)."""
    token = _CANCEL_EVENTS.set(_CANCEL_EVENTS.get() + tuple(e for e in events if e is not None))
    try:
        yield
    finally:
        _CANCEL_EVENTS.reset(token)


def checkpoint(doing: str) -> None:
    """Raise ``Cancelled("indexing cancelled while <doing>")`` when the enclosing ``cancel_scope``'s
    event is set (nothing outside a scope)."""
    for event in _CANCEL_EVENTS.get():
        if event.is_set():
            raise Cancelled(f"indexing cancelled while {doing}")


def in_cancel_scope() -> bool:
    """Does a ``cancel_scope`` with an event enclose this call (``core.cancellable`` waits then)?"""
    return bool(_CANCEL_EVENTS.get())


class ServiceUnavailable(Exception):
    """A server indexing depends on (the embeddings server) stopped answering or is misconfigured: a
    resumable stop like ``Cancelled`` (the batch's documents go back to 'pending', nothing of it is
    committed), reported as an error naming the server and the fix (``EmbeddingUnavailableError``)."""


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value.to_dict() if hasattr(value, "to_dict") else value


class _Hit:
    """``to_dict``: the record's JSON, a field left ``None`` (not used by the mode) left out, so each
    mode's JSON keeps the field names it always had; a record's own fields come before inherited ones."""

    def to_dict(self) -> dict[str, Any]:
        own = type(self).__dict__.get("__annotations__", {})
        ordered = sorted(fields(self), key=lambda f: f.name not in own)  # type: ignore[arg-type]
        return {f.name: _plain(getattr(self, f.name)) for f in ordered if getattr(self, f.name) is not None}


@dataclass
class ChunkHit(_Hit):
    """A chunk in a mode's evidence. ``position`` (LightRAG modes: 1-based rank in the Sources),
    ``via`` / ``brought_by`` (the kind and labels of the entities or relations that brought it; mix's
    dense hits: via "naive"), ``also_found_by`` (hybrid / mix: other lists that found it) and ``pairs``
    (tree: the query-entity name pairs it holds) are set only by the modes that have them."""

    chunk_id: str
    score: float
    reason: str
    doc_id: str = ""
    doc_name: str = ""
    order: int = 0
    text: str = ""
    position: Optional[int] = None
    via: Optional[str] = None
    brought_by: Optional[list[str]] = None
    also_found_by: Optional[list[str]] = None
    pairs: Optional[list[list[str]]] = None
    page_start: Optional[int] = None  # 1-based pages of the chunk's span (documents with pages only)
    page_end: Optional[int] = None
    section: Optional[str] = None  # heading of the section the span starts in (DOCX, HTML, Markdown)
    line_start: Optional[int] = None  # 1-based lines of the span (text, Markdown outside a section)
    line_end: Optional[int] = None

    @classmethod
    def make(cls, chunk_id: str, score: float, reason: str, text: str = "") -> "ChunkHit":
        """The one constructor: document fields are filled later from the store
        (``core.retrieval.results.fill_chunk_texts``); the score is rounded to 6 places."""
        return cls(chunk_id=chunk_id, score=round(float(score), 6), reason=reason, text=text or "")


@dataclass(kw_only=True)
class _GraphHit(_Hit):
    """What an entity or relation hit carries besides what it is: its score and the reason, the chunks it
    was extracted from; ``degree`` and ``position`` (LightRAG modes) and ``also_found_by`` (hybrid /
    mix) only where the mode has them."""

    score: float
    reason: str
    source_chunk_ids: list[str] = field(default_factory=list)
    degree: Optional[int] = None
    position: Optional[int] = None
    also_found_by: Optional[list[str]] = None
    cited: Optional[list[str]] = None  # where its source chunks are: "doc, pp. 3, 5" or "doc, chunks 2, 4"


@dataclass(kw_only=True)
class EntityHit(_GraphHit):
    """An entity in a mode's evidence: graph ``key`` and display ``name``."""

    key: str
    name: str
    type: str
    description: str

    @classmethod
    def make(cls, key: str, data: Mapping[str, Any], score: float, reason: str, *, name: str = "",
             default_type: str = "", degree: Optional[int] = None) -> "EntityHit":
        """The one constructor, from a graph node's ``data``."""
        return cls(key=key, name=name or display_name(key, data), type=data.get("type", default_type),
                   description=data.get("description", ""), score=round(float(score), 6), reason=reason,
                   source_chunk_ids=list(data.get("source_chunk_ids") or []), degree=degree)


@dataclass
class PathEdge(_Hit):
    """One edge between the entities ``source_key`` and ``target_key`` (display names ``source`` /
    ``target``); on a path, in the path's direction."""

    source: str
    target: str
    source_key: str
    target_key: str
    keywords: list[str]
    description: str
    weight: float

    @classmethod
    def make(cls, a: str, b: str, names: tuple[str, str], data: Mapping[str, Any]) -> "PathEdge":
        return cls(source=names[0], target=names[1], source_key=a, target_key=b,
                   keywords=list(data.get("keywords") or []), description=data.get("description", ""),
                   weight=float(data.get("weight", 0.0)))


@dataclass
class RelationHit(_GraphHit, PathEdge):
    """A relation in a mode's evidence: an edge with its score and reason."""

    @classmethod
    def make(  # type: ignore[override]  # a hit needs its score and reason, which an edge has not
            cls, a: str, b: str, names: tuple[str, str], data: Mapping[str, Any], score: float, reason: str, *,
            default_weight: float = 1.0, degree: Optional[int] = None) -> "RelationHit":
        """The one constructor, from a graph edge's ``data``."""
        return cls(source=names[0], target=names[1], source_key=a, target_key=b,
                   keywords=list(data.get("keywords") or []), description=data.get("description", ""),
                   weight=float(data.get("weight", default_weight)), score=round(float(score), 6), reason=reason,
                   source_chunk_ids=list(data.get("source_chunk_ids") or []), degree=degree)


@dataclass
class PathHit(_Hit):
    """A PathRAG path: its node ``keys`` and display ``nodes`` in order, its edges, each node's
    resource, its reliability ``score``, the text the context quotes; ``why`` and
    ``question_entities`` say how it relates to the question (RAGScope's ranking). Built from a scored
    path by its one constructor, ``core.retrieval.path_search.path_record``."""

    rank: int
    nodes: list[str]
    keys: list[str]
    relations: list[PathEdge]
    resources: dict[str, float]
    score: float
    hops: int
    text: str
    why: Optional[str] = None
    question_entities: Optional[int] = None
    hop_cited: Optional[list[str]] = None  # per edge, in path order: where its source chunks are


@dataclass
class SummaryHit(_Hit):
    """An E2GraphRAG summary-tree node in a mode's evidence."""

    node_id: str
    level: int
    scope: str
    doc_id: str
    doc_name: str
    text: str
    score: float
    reason: str
    leaf_chunk_ids: list[str] = field(default_factory=list)
    cited: Optional[list[str]] = None  # where its leaf chunks are (see ``_GraphHit.cited``)

    @classmethod
    def make(cls, node: Any, score: float, reason: str, doc_name: str = "") -> "SummaryHit":
        """The one constructor, from a ``core.storage`` tree node."""
        return cls(node_id=node.node_id, level=int(node.level), scope=node.scope, doc_id=node.doc_id or "", doc_name=doc_name,
                   text=node.text, score=round(float(score), 6), reason=reason, leaf_chunk_ids=list(node.leaf_chunk_ids))


@dataclass
class Answer:
    text: str
    kind: str  # "llm" | "extractive"
    model: str = ""
    note: str = ""  # why an extractive answer bolds no short answer (``core.answers.claim``), else ""
    ranking: str = ""  # extractive: "meaning" when sentence vectors ranked its sentences, "lexical" without them
    bold: list[str] = field(default_factory=list)  # extractive: the short answers its first line wraps in "**" (any other "**" there is the document's own)


@dataclass
class RetrievalResult:
    """What a retrieval mode retrieved and why; JSON-serialisable with stable field names."""

    mode: str
    query: str
    params: dict[str, Any] = field(default_factory=dict)
    keywords: dict[str, list[str]] = field(default_factory=lambda: {"low": [], "high": []})
    entities: list[EntityHit] = field(default_factory=list)
    relations: list[RelationHit] = field(default_factory=list)
    paths: list[PathHit] = field(default_factory=list)
    chunks: list[ChunkHit] = field(default_factory=list)
    summaries: list[SummaryHit] = field(default_factory=list)
    context_text: str = ""
    context_tokens: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    trace: list[TraceEvent] = field(default_factory=list)  # what the mode did, as records (core.trace)
    evidence_chunk_ids: list[str] = field(default_factory=list)
    answer: Optional[Answer] = None
    # The evidence-loss funnel (core.evaluation.loss): chunks selected before the token budgets (rank order),
    # and every chunk the search reached (sources of its hits, tree candidates), a superset of those.
    candidate_chunk_ids: list[str] = field(default_factory=list)
    reached_chunk_ids: list[str] = field(default_factory=list)
    # auto's routing decision (core.routing: chosen, reason, gains, features); empty (and not in the JSON) otherwise
    route: dict[str, Any] = field(default_factory=dict)

    def log(self, stage: str, event: str, **data: Any) -> TraceEvent:
        """Record one trace event (its wording: ``core.retrieval.trace_text``)."""
        record = TraceEvent(stage, event, data)
        self.trace.append(record)
        return record

    def events(self, event: str) -> list[TraceEvent]:
        """The trace events of one kind, in order."""
        return [record for record in self.trace if record.event == event]

    def trace_lines(self) -> list[str]:
        """The trace as the lines the UI and the CLI show."""
        return trace_text(self.trace)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data; each hit through its own ``to_dict``."""
        data = {f.name: _plain(getattr(self, f.name)) for f in fields(self) if f.name not in ("answer", "trace")}
        if not self.route:
            del data["route"]
        data["trace"] = trace_text(self.trace)  # the lines users read, as the JSON always had them
        data["trace_events"] = [event.to_dict() for event in self.trace]
        data["answer"] = None if self.answer is None else asdict(self.answer)
        return data
