"""The storage ports: the small interfaces retrieval, answers, evaluation and indexing use to reach a
workspace's data, whatever backend holds it.

* ``GraphView`` — the merged knowledge graph, read-only: typed ``GraphEntity`` / ``GraphRelation``,
  neighbours, degree, adjacency and the relation of a node pair.
* ``GraphOverview`` — either graph read a few rows at a time (the Knowledge graph page: degrees, the rows
  of the nodes drawn, one node's neighbours), never loaded whole.
* ``VectorIndex`` — the vector collections ("chunks", "entities", "relations", "tree"): upsert,
  delete, top-k and the cosines of given keys (``VectorSearch`` is its read-only part).
* ``RecordStore`` — documents, chunks, sentences, graph fragments, merged rows, the summary tree,
  meta and run log; it owns its transaction: ``with store.unit_of_work():`` commits the block as one
  unit or rolls all of it back.
* ``LLMCacheStore`` — the LLM response cache and the per-stage usage rows.
* ``AnnotationStore`` — the analyst annotations (``AnnotatedQuestion`` with its ``Mark`` records): reads
  and one write transaction (``edit()``) of their own, never joined to the indexing unit of work.

The records they take and return are in ``core.storage.records`` (plain dataclasses and tuples: no
connection, cursor or row type of a backend leaves it) and ``core.types`` (chunks, extraction records).
A backend registers a factory by name in ``core.storage.registry``; ``docs/storage.md`` says how.
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Iterable, Mapping, Optional, Protocol, Sequence, runtime_checkable

import networkx as nx
import numpy as np

from core.storage.records import (AnnotatedQuestion, CachedReply, DocumentRow, EntityFragment, GraphEntity,
                                  GraphRelation, Pair, RelationFragment, TreeNode, VectorHit)
from core.types import Chunk, ChunkExtraction


@runtime_checkable
class GraphView(Protocol):
    """The merged knowledge graph of one workspace generation (never mutated)."""

    def __contains__(self, key: object) -> bool: ...

    def __len__(self) -> int: ...

    def keys(self) -> Iterable[str]:
        """Every entity key, in key order."""

    def entity(self, key: str) -> Optional[GraphEntity]: ...

    def name(self, key: str) -> str:
        """The entity's display name, else its key (also for a key not in the graph)."""

    def attributes(self, key: str) -> Mapping[str, Any]:
        """The entity's stored attributes (name, type, description, aliases, source_chunk_ids)."""

    def relation(self, a: str, b: str) -> Optional[GraphRelation]: ...

    def has_relation(self, a: str, b: str) -> bool: ...

    def relation_attributes(self, a: str, b: str) -> Mapping[str, Any]:
        """The relation's stored attributes (keywords, description, weight, source_chunk_ids)."""

    def neighbours(self, key: str) -> Iterable[str]: ...

    def degree(self, key: str) -> int: ...

    def networkx(self) -> nx.Graph:
        """The graph as networkx, for layouts and exports."""

    def adjacency(self, key: str) -> Mapping[str, Mapping[str, Any]]:
        """Neighbour -> the attributes of the relation to it (empty for an unknown key)."""

    def relation_count(self) -> int: ...

    def alias_owner(self, alias_key: str) -> Optional[str]:
        """The one entity a merged alias (normalised) stands for; None when none or ambiguous."""

    def aliases(self) -> Mapping[str, str]:
        """Every unambiguous merged alias key -> its entity key (aliases that are entity keys left out)."""

    def entities_with_word(self, word: str) -> frozenset[str]:
        """The entity keys containing ``word`` as one of their words."""


@runtime_checkable
class GraphOverview(Protocol):
    """The knowledge graph or the mention graph of the committed generation, read with indexed queries
    (``core.storage.graph_overview``); attributes as on the networkx graph of ``load_graph_view`` /
    ``load_mention_graph``."""

    kind_attr: str  # the node attribute holding the category ("type" / "label")

    def node_keys(self) -> list[str]: ...  # every node that has a row, in key order

    def kinds(self) -> dict[str, str]: ...  # node key -> its category (the nodes that have a row)

    def degrees(self) -> dict[str, int]: ...  # the degree of every node with an edge

    def edge_keys(self) -> Iterable[Pair]: ...

    def neighbour_keys(self, keys: Iterable[str]) -> dict[str, set[str]]: ...

    def node_attributes(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]: ...

    def edges_among(self, keys: Iterable[str]) -> list[tuple[str, str, dict[str, Any]]]: ...

    def neighbours(self, key: str) -> list[tuple[str, dict[str, Any]]]:
        """(neighbour, edge attributes), by neighbour key."""

    def edge(self, a: str, b: str) -> Optional[dict[str, Any]]: ...

    def name_candidates(self, query: str) -> list[tuple[str, str]]:
        """(key, display name) of every node whose name or key may contain ``query`` (a superset)."""

    def chunk_counts(self, terms: Iterable[str]) -> dict[str, dict[str, int]]:
        """Mention graph: term -> {chunk id: mentions}; the knowledge graph has none ({})."""


@runtime_checkable
class VectorSearch(Protocol):
    """Read-only vector search over one generation. Keys: the entity key ("entities"), the relation's
    (source, target) ("relations"), the chunk id ("chunks": a chunk's best window), the vector id else."""

    def top(self, collection: str, vector: np.ndarray, k: int) -> list[VectorHit]:
        """Exact top-k by cosine, ties by id."""

    def top_chunks(self, vector: np.ndarray, k: int) -> list[VectorHit]:
        """Top-k chunks, each scored by its best window; a hit's id is the chunk id."""

    def ranked_keys(self, collection: str, vector: np.ndarray, k: int) -> list[tuple[Any, float]]:
        """Exact top-k keys by cosine, ties in storage order."""

    def cosines(self, collection: str, vector: np.ndarray, keys: Sequence[Any]) -> dict[Any, float]:
        """The cosine of each given key that has a vector (keys without one are left out)."""

    def cosine(self, collection: str, vector: np.ndarray, key: Any) -> Optional[float]: ...

    def size(self, collection: str) -> int: ...


@runtime_checkable
class VectorIndex(Protocol):
    """The writable vector collections of a workspace (derived data, reconciled from the records)."""

    def upsert(self, name: str, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]
               ) -> None: ...

    def delete(self, name: str, ids: Iterable[str]) -> None: ...

    def delete_chunks(self, chunk_ids: Sequence[str]) -> None: ...

    def count(self, name: str) -> int: ...

    def all_ids(self, name: str) -> set[str]: ...

    def query(self, name: str, vector: np.ndarray, k: int, where: Optional[dict] = None) -> list[Any]: ...

    def query_chunks(self, vector: np.ndarray, k: int) -> list[Any]: ...

    def get_vectors(self, name: str, ids: Sequence[str]) -> dict[str, np.ndarray]: ...

    def exact_search(self) -> VectorSearch:
        """An exact, deterministic ``VectorSearch`` over the current vectors (kept per generation)."""

    def drop_all(self) -> None: ...

    def forget_embedded_system(self) -> None:
        """Drop in-process caches so the next open sees other processes' writes (no-op for a server)."""


@runtime_checkable
class UnitOfWork(Protocol):
    """A store that owns its transaction."""

    def unit_of_work(self) -> AbstractContextManager[Any]:
        """Begin; commit when the block ends, roll everything back when it raises."""

    def in_unit_of_work(self) -> bool: ...

    def rollback(self) -> None:
        """Abandon an open unit of work (a no-op outside one)."""


@runtime_checkable
class RecordStore(UnitOfWork, Protocol):
    """The system of record: everything retrieval, answers, evaluation, reports and indexing read or
    write. Rows come back as the records of ``core.storage.records`` (``DocumentRow``, ``TreeNode``, the
    fragments), ``core.types.Chunk``, or plain tuples and dicts. Writes
    belong inside ``unit_of_work()``; ``commit()`` ends a single bookkeeping write made outside one."""

    def commit(self) -> None: ...
    def close(self) -> None: ...
    # meta / run log / reports
    def get_meta(self, key: str, default: str = "") -> str: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def delete_meta(self, *keys: str) -> None: ...
    def log(self, event: str, detail: dict | str) -> None: ...
    def log_details(self, event: str) -> list[str]: ...
    def count(self, table: str) -> int: ...
    def mention_node_count(self) -> int: ...
    def status_counts(self) -> dict[str, int]: ...
    def total_tokens(self) -> int: ...
    def llm_usage_rows(self) -> list[tuple]: ...
    def chunks_per_document(self) -> dict[str, int]: ...
    def entities_per_document(self) -> dict[str, int]: ...
    # documents
    def documents(self, status: Optional[str] = None) -> list[DocumentRow]: ...
    def document(self, doc_id: str) -> Optional[DocumentRow]: ...
    def document_text(self, doc_id: str) -> str: ...
    def documents_named(self, name: str) -> list[DocumentRow]: ...
    def insert_document(self, doc_id: str, name: str, source: str, content_hash: str, text: str, tokens: int
                        ) -> None: ...
    def set_status(self, doc_id: str, status: str, error: str = "", elapsed_s: Optional[float] = None) -> None: ...
    def delete_document_row(self, doc_id: str) -> None: ...
    def set_page_starts(self, doc_id: str, starts: Iterable[int]) -> None: ...
    def page_starts(self, doc_ids: Iterable[str]) -> dict[str, list[int]]: ...
    def delete_load_failure(self, name: str) -> None: ...
    def processing_to_pending(self, doc_ids: list[str]) -> int: ...
    def failed_to_pending(self) -> int: ...
    def drop_document_annotations(self, doc_id: str) -> int: ...
    # chunks and sentences
    def insert_chunks(self, chunks: Iterable[Chunk]) -> None: ...
    def chunks_of(self, doc_id: str) -> list[Chunk]: ...
    def chunks_by_id(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]: ...
    def has_chunks(self) -> bool: ...
    def all_chunk_ids(self) -> list[str]: ...
    def delete_chunks_of(self, doc_id: str) -> list[str]: ...
    def chunk_sentences(self, chunk_ids: Iterable[str]) -> dict[str, list[tuple[str, list[list[str]]]]]: ...
    # graph fragments and merged rows
    def insert_chunk_extraction(self, doc_id: str, chunk_id: str, extraction: ChunkExtraction
                                ) -> tuple[set[str], set[Pair]]: ...
    def remove_chunks(self, chunk_ids: list[str]) -> tuple[set[str], set[Pair]]: ...
    def entity_fragments(self, keys: Iterable[str]) -> dict[str, list[EntityFragment]]: ...
    def relation_fragments(self, keys: Iterable[Pair]) -> dict[Pair, list[RelationFragment]]: ...
    def existing_vector_ids(self, table: str, keys: Iterable[Any]) -> dict[Any, str]: ...
    def entity_name(self, key: str) -> Optional[str]: ...
    def entity_names(self) -> dict[str, str]: ...
    def write_entity(self, key: str, name: str, etype: str, description: str, source_chunk_ids: list[str],
                     vector_id: str, aliases: list[str]) -> None: ...
    def delete_entity(self, key: str) -> None: ...
    def relations_touching(self, key: str) -> list[Pair]: ...
    def write_relation(self, pair: Pair, keywords: list[str], description: str, weight: float,
                       source_chunk_ids: list[str], vector_id: str) -> None: ...
    def delete_relation(self, pair: Pair) -> None: ...
    def entity_vector_rows(self) -> list[tuple[str, str, str, str]]: ...
    def relation_vector_rows(self) -> list[tuple[str, str, list[str], str, str]]: ...
    def fragment_type_votes(self) -> list[tuple[str, str, str]]: ...
    def expected_vector_ids(self) -> dict[str, set[str]]: ...
    # graph views (built once per generation by ``core.storage.views``)
    def load_graph_view(self) -> GraphView: ...
    def load_mention_graph(self) -> Any: ...
    def load_mention_index(self) -> dict[str, dict[str, int]]: ...
    def graph_overview(self, mention: bool) -> GraphOverview: ...
    # summary tree
    def tree_nodes(self, scope: Optional[str] = None, doc_id: Optional[str] = None) -> list[TreeNode]: ...
    def upsert_tree_node(self, node: TreeNode) -> None: ...
    def set_tree_parent(self, node_id: str, parent_id: str) -> None: ...
    def delete_tree_nodes(self, node_ids: Iterable[str]) -> None: ...
    def doc_roots(self) -> dict[str, tuple[str, Optional[str]]]: ...
    def set_doc_root(self, doc_id: str, root_id: str, corpus_parent: Optional[str]) -> None: ...
    def delete_doc_root(self, doc_id: str) -> None: ...


@runtime_checkable
class AnnotationWriter(Protocol):
    """The writes of one annotation transaction (``AnnotationStore.edit()``)."""

    def chunk_docs(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        """The document of each given chunk the workspace holds (unknown ids left out)."""

    def upsert_question(self, qid: str, question: str, answer: Optional[str], now: float) -> None:
        """Add the question or touch it; ``answer`` (when not None) replaces the expected answer."""

    def write_mark(self, qid: str, chunk_id: str, doc_id: str, relevant: bool, mode: str, now: float,
                   keep_mode: bool = False) -> None:
        """Insert or update one mark (``keep_mode``: an existing mark keeps the mode it was made in)."""

    def delete_mark(self, qid: str, chunk_id: str) -> None: ...

    def delete_question(self, qid: str) -> int:
        """Delete a question and its marks; 1 when it existed, else 0."""

    def prune(self) -> int:
        """Drop questions left with no mark and no expected answer; returns how many."""


@runtime_checkable
class AnnotationStore(Protocol):
    """The analyst annotations of a workspace, on connections of their own: an annotation neither joins
    nor waits for an indexing unit of work in progress (a document's deletion drops its marks in the
    deletion's own unit of work: ``RecordStore.drop_document_annotations``)."""

    def questions(self, qid: Optional[str] = None) -> list[AnnotatedQuestion]:
        """Every annotated question, oldest first (only ``qid``'s when given)."""

    def edit(self) -> AbstractContextManager[AnnotationWriter]:
        """One write transaction: committed when the block ends, rolled back entirely when it raises."""


@runtime_checkable
class LLMCacheStore(Protocol):
    """LLM replies by cache key and usage per stage; writes may be deferred while the store is busy."""

    def get(self, key: str) -> Optional[CachedReply]: ...

    def put(self, key: str, reply: CachedReply) -> None: ...

    def drop_keys_before(self, prefix: str) -> None:
        """Delete the replies whose key sorts before ``prefix`` (an older key format)."""

    def add_usage(self, stage: str, calls: int, cached: int, prompt_tokens: int, completion_tokens: int,
                  seconds: float) -> None: ...

    def flush(self) -> bool:
        """Write what is pending; False (keeping it) while another writer holds the store."""
