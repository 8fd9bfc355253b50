"""The records that cross the storage ports (``core.storage.ports``), all in one place: plain dataclasses
and tuples, no connection, cursor or row type of a backend.

* documents and the summary tree: ``DocumentRow``, ``TreeNode`` (chunks are ``core.types.Chunk``);
* the knowledge graph: a relation's key ``Pair`` (``node_pair`` makes it), the fragments one chunk
  contributed (``EntityFragment``, ``RelationFragment``) and the merged graph's parts (``GraphEntity``,
  ``GraphRelation``). What an extractor returns for a chunk is ``core.types.ChunkExtraction``, with its
  ``EntityRecord`` / ``RelationRecord``;
* vector search hits: ``VectorHit``;
* analyst annotations: ``AnnotatedQuestion`` with its ``Mark``s;
* the LLM cache: ``CachedReply``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

Pair = tuple[str, str]


def node_pair(a: str, b: str) -> Pair:
    """Relations are undirected: a relation's key is the sorted pair of its entity keys."""
    return (a, b) if a <= b else (b, a)


# --- documents and the summary tree ------------------------------------------------------------
@dataclass
class DocumentRow:
    doc_id: str
    name: str
    source: str
    content_hash: str
    tokens: int
    status: str  # pending | processing | processed | failed
    error: str
    seq: int  # insertion order (corpus level of the summary tree)
    created_at: float
    updated_at: float
    elapsed_s: float


@dataclass
class TreeNode:
    node_id: str
    scope: str  # "doc" | "corpus"
    doc_id: Optional[str]
    level: int
    ord: int
    parent_id: Optional[str]
    child_ids: list[str]
    leaf_chunk_ids: list[str]
    text: str
    tokens: int
    vector_id: str = ""


# --- the knowledge graph -------------------------------------------------------------------------
@dataclass
class EntityFragment:
    """What one chunk says about one entity (the rows a merged entity is rebuilt from)."""

    chunk_id: str
    doc_id: str
    name: str
    type: str
    description: str
    type_votes: dict[str, int] = field(default_factory=dict)
    aliases: list[str] = field(default_factory=list)


@dataclass
class RelationFragment:
    """What one chunk says about one relation."""

    chunk_id: str
    doc_id: str
    keywords: list[str]
    description: str
    weight: float


@dataclass(frozen=True)
class GraphEntity:
    """One merged entity of the knowledge graph."""

    key: str
    name: str
    type: str
    description: str
    aliases: tuple[str, ...] = ()
    source_chunk_ids: tuple[str, ...] = ()

    @property
    def display_name(self) -> str:
        return self.name or self.key


@dataclass(frozen=True)
class GraphRelation:
    """One merged (undirected) relation; ``source <= target``."""

    source: str
    target: str
    keywords: tuple[str, ...]
    description: str
    weight: float
    source_chunk_ids: tuple[str, ...] = ()

    @property
    def pair(self) -> Pair:
        return (self.source, self.target)


# --- vectors, annotations, the LLM cache -------------------------------------------------------------
@dataclass
class VectorHit:
    id: str
    score: float  # cosine similarity
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Mark:
    """One chunk judged for one question."""

    chunk_id: str
    doc_id: str
    relevant: bool
    mode: str = ""
    created_at: float = 0.0


@dataclass
class AnnotatedQuestion:
    """A question with its expected answer ('' when none) and its marks (relevant first, then by time)."""

    qid: str
    question: str
    answer: str = ""
    marks: list[Mark] = field(default_factory=list)
    updated_at: float = 0.0

    @property
    def relevant(self) -> list[Mark]:
        return [m for m in self.marks if m.relevant]

    @property
    def not_relevant(self) -> list[Mark]:
        return [m for m in self.marks if not m.relevant]

    @property
    def gold_doc_ids(self) -> list[str]:
        """Documents holding at least one chunk marked relevant, in marking order."""
        return list(dict.fromkeys(m.doc_id for m in self.relevant))


@dataclass(frozen=True)
class CachedReply:
    text: str
    prompt_tokens: int
    completion_tokens: int


@dataclass
class GraphEdit:
    """One hand edit of the knowledge graph (``graph_edits`` row): ``args`` names the target by identity
    and the state asked for; ``before`` / ``after`` record what its first application changed."""

    id: int
    ts: float
    principal: str
    op: str
    args: dict[str, Any]
    before: dict[str, Any]
    after: dict[str, Any]
    undone: bool = False
