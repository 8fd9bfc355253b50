"""Shared record types of RAGScope: documents, chunks, extraction records, progress events
and the one ``RetrievalResult`` that every retrieval mode returns."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional


@dataclass
class SourceDocument:
    """A document as produced by a loader, before indexing."""

    name: str
    text: str
    doc_id: Optional[str] = None  # kept from JSONL corpora; else the content hash is used
    source: str = ""


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
    """A progress report: step name, items done out of total, and a message."""

    step: str
    done: int
    total: int
    message: str = ""


ProgressCallback = Callable[[ProgressEvent], None]


def no_progress(_event: ProgressEvent) -> None:
    """A progress callback that ignores events."""


class Cancelled(Exception):
    """Work was cancelled on request (the app's Cancel button, Ctrl-C in the CLI).

    Indexing stops as a resumable stop: the documents being indexed go back to 'pending', nothing
    of the interrupted batch is committed, and LLM replies received so far stay in the cache, so
    the next run resumes without paying for them again. ``core.llm.client.LLMCancelled`` is one.
    """


class ServiceUnavailable(Exception):
    """A server that indexing depends on (the embeddings server) stopped answering or is misconfigured.

    A resumable stop like ``Cancelled`` (the batch's documents go back to 'pending', nothing of it is
    committed), but reported as an error whose message names the server and the fix.
    ``core.remote_embeddings.EmbeddingUnavailableError`` is one.
    """


@dataclass
class Answer:
    text: str
    kind: str  # "llm" | "extractive"
    model: str = ""


@dataclass
class RetrievalResult:
    """What a retrieval mode retrieved and why; JSON-serialisable with stable field names."""

    mode: str
    query: str
    params: dict[str, Any] = field(default_factory=dict)
    keywords: dict[str, list[str]] = field(default_factory=lambda: {"low": [], "high": []})
    entities: list[dict[str, Any]] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    paths: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)
    context_text: str = ""
    context_tokens: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    trace: list[str] = field(default_factory=list)
    evidence_chunk_ids: list[str] = field(default_factory=list)
    answer: Optional[Answer] = None
    # The evidence-loss funnel (core.evaluation.loss): chunks the mode selected before its token budgets
    # (rank order), and every chunk its search reached (sources of the retrieved entities, relations, path
    # nodes and edges, tree candidates), a superset of the selected ones. Empty lists: nothing reached.
    candidate_chunk_ids: list[str] = field(default_factory=list)
    reached_chunk_ids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if self.answer is None:
            data["answer"] = None
        return data
