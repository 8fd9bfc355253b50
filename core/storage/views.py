"""Read views of one workspace generation: typed, lazily built cached properties.

A ``WorkspaceViews`` belongs to one generation; ``Workspace.views`` hands out a new one when the
generation moves (a commit, a rollback, a re-embed), so nothing is ever cleared by hand.
``derived(build)`` keeps what a module computes from the views (an index, a sentence bank) in the
same object, keyed by the build function itself: it goes when the generation goes.
"""
from __future__ import annotations

import threading
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import networkx as nx


if TYPE_CHECKING:
    from core.storage.ports import GraphView, RecordStore, VectorIndex, VectorSearch
    from core.storage.records import TreeNode

T = TypeVar("T")


class WorkspaceViews:
    """The graph, mention graph, orders, names, tree and exact vector search of one generation."""

    def __init__(self, generation: int, records: Callable[[], "RecordStore"], vectors: Callable[[], "VectorIndex"],
                 owner: Any = None) -> None:
        self.generation = generation
        self._records = records
        self._vector_store = vectors
        self._owner = owner  # what ``derived`` builders receive (the workspace)
        self._derived: dict[Callable[..., Any], Any] = {}
        self._lock = threading.RLock()

    @cached_property
    def graph(self) -> "GraphView":
        return self._records().load_graph_view()

    @cached_property
    def mention_graph(self) -> nx.Graph:
        """E2GraphRAG's co-occurrence graph (node attr: label; edge attr: weight); never mutated."""
        return self._records().load_mention_graph()

    @cached_property
    def mention_index(self) -> dict[str, dict[str, int]]:
        return self._records().load_mention_index()

    @cached_property
    def chunk_order(self) -> dict[str, int]:
        return {cid: i for i, cid in enumerate(self._records().all_chunk_ids())}

    @cached_property
    def doc_names(self) -> dict[str, str]:
        return {d.doc_id: d.name for d in self._records().documents()}

    @cached_property
    def tree_index(self) -> dict[str, "TreeNode"]:
        return {n.node_id: n for n in self._records().tree_nodes()}

    @cached_property
    def vectors(self) -> "VectorSearch":
        """The vector index's exact search for this generation (the SQLite + Chroma adapter: every
        vector of a collection in memory, loaded on first use)."""
        return self._vector_store().exact_search()

    def derived(self, build: Callable[[Any], T]) -> T:
        """``build(workspace)`` once per generation (``build`` is the key: pass a module-level function)."""
        if build not in self._derived:
            with self._lock:
                if build not in self._derived:
                    self._derived[build] = build(self._owner)
        return self._derived[build]
