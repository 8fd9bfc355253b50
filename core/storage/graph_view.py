"""The SQLite adapter's ``GraphView``: the merged graph loaded once per generation into networkx, read
through plain dicts (networkx's views cost two objects per lookup in the retrieval loops).

``NetworkxGraphView.networkx()`` hands the graph to the pages that lay it out; retrieval and answers
use the view's methods only.
"""
from __future__ import annotations

from functools import cached_property
from typing import Any, Iterable, Mapping, Optional

import networkx as nx

from core.extraction.names import normalize_name
from core.storage.records import GraphEntity, GraphRelation, node_pair
from core.types import display_name

_EMPTY: Mapping[str, Any] = {}


class NetworkxGraphView:
    """A ``GraphView`` over an undirected networkx graph that nobody mutates afterwards."""

    def __init__(self, graph: nx.Graph) -> None:
        self._graph = graph
        self._adjacency: dict[str, dict[str, dict[str, Any]]] = graph._adj  # plain dict-of-dicts
        self._attributes: dict[str, dict[str, Any]] = graph._node
        self._degree: dict[str, int] = {}
        self._relation_count: Optional[int] = None

    def networkx(self) -> nx.Graph:
        """The graph itself, read-only by contract (layouts and exports)."""
        return self._graph

    def __contains__(self, key: object) -> bool:
        return key in self._attributes

    def __len__(self) -> int:
        return len(self._attributes)

    def keys(self) -> Iterable[str]:
        return self._attributes.keys()

    def attributes(self, key: str) -> Mapping[str, Any]:
        return self._attributes.get(key, _EMPTY)

    def name(self, key: str) -> str:
        return display_name(key, self._attributes.get(key))

    def entity(self, key: str) -> Optional[GraphEntity]:
        data = self._attributes.get(key)
        if data is None:
            return None
        return GraphEntity(key, str(data.get("name") or ""), str(data.get("type") or ""),
                            str(data.get("description") or ""), tuple(data.get("aliases") or ()),
                            tuple(data.get("source_chunk_ids") or ()))

    def has_relation(self, a: str, b: str) -> bool:
        return b in self._adjacency.get(a, _EMPTY)

    def relation_attributes(self, a: str, b: str) -> Mapping[str, Any]:
        return self._adjacency.get(a, _EMPTY).get(b, _EMPTY)

    def relation(self, a: str, b: str) -> Optional[GraphRelation]:
        data = self._adjacency.get(a, _EMPTY).get(b)
        if data is None:
            return None
        src, tgt = node_pair(a, b)
        return GraphRelation(src, tgt, tuple(data.get("keywords") or ()), str(data.get("description") or ""),
                              float(data.get("weight", 1.0)), tuple(data.get("source_chunk_ids") or ()))

    def adjacency(self, key: str) -> Mapping[str, Mapping[str, Any]]:
        return self._adjacency.get(key, _EMPTY)

    def neighbours(self, key: str) -> Iterable[str]:
        return self._adjacency.get(key, _EMPTY).keys()

    def degree(self, key: str) -> int:
        value = self._degree.get(key)
        if value is None:
            value = self._degree[key] = len(self._adjacency.get(key, _EMPTY))
        return value

    def relation_count(self) -> int:
        if self._relation_count is None:
            self._relation_count = int(self._graph.number_of_edges())
        return self._relation_count

    @cached_property
    def _aliases(self) -> dict[str, str]:
        owners: dict[str, set[str]] = {}
        for key, data in self._attributes.items():
            for alias in data.get("aliases") or []:
                alias_key = normalize_name(alias)
                if alias_key and alias_key != key:
                    owners.setdefault(alias_key, set()).add(key)
        return {a: next(iter(keys)) for a, keys in owners.items() if len(keys) == 1 and a not in self._attributes}

    def alias_owner(self, alias_key: str) -> Optional[str]:
        return self._aliases.get(alias_key)

    def aliases(self) -> Mapping[str, str]:
        return self._aliases

    @cached_property
    def _words(self) -> dict[str, frozenset[str]]:
        index: dict[str, set[str]] = {}
        for key in self._attributes:
            for word in set(str(key).split()):
                index.setdefault(word, set()).add(key)
        return {w: frozenset(keys) for w, keys in index.items()}

    def entities_with_word(self, word: str) -> frozenset[str]:
        return self._words.get(word, frozenset())


def as_graph_view(graph: "NetworkxGraphView | nx.Graph") -> "NetworkxGraphView":
    """A graph view of ``graph`` (a view is returned as it is; a networkx graph is wrapped)."""
    return graph if isinstance(graph, NetworkxGraphView) else NetworkxGraphView(graph)
