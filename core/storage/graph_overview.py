"""The Knowledge graph page's reads straight from the record store, so that opening the page never loads
the whole graph: node keys and degrees (index scans of the relation keys), the rows of the nodes it
draws and the relations among them (primary-key lookups), one node's neighbours, one relation, a name
search and one hop of a neighbourhood at a time.

Two readers share one interface (``core.storage.ports.GraphOverview``): ``KnowledgeGraphReader`` over
``entities`` / ``relations`` and ``MentionGraphReader`` over ``mentions`` / ``mention_edges`` (the
E2GraphRAG co-occurrence graph). The attributes they return are exactly the ones
``core.storage.graph_store.load_knowledge_graph`` / ``load_mention_graph`` put on the networkx graph.
The SQL is the subset SQLite and PostgreSQL share (the PostgreSQL adapter runs it through
``core.storage.postgres_dialect``). Name search: an ASCII query is narrowed in SQL (``lower(x) LIKE``, a
superset of Python's ``query in x.lower()`` for an ASCII query, plus the two non-ASCII letters whose
Python lower case is ASCII) and checked exactly in Python; any other query reads every name.
"""
from __future__ import annotations

import json
from collections import Counter
from typing import Any, Iterable, Iterator, Optional, Sequence

BATCH = 500  # keys per IN (...) list
_ASCII_LOWERING = ("%\u0130%", "%\u212a%")  # 'İ'.lower() == 'i̇', 'K' (Kelvin).lower() == 'k'


def _batches(keys: Iterable[str], size: int = BATCH) -> Iterator[list[str]]:
    items = list(dict.fromkeys(keys))
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _marks(n: int) -> str:
    return ",".join("?" * n)


def like_pattern(query: str) -> str:
    """``%query%`` for ``LIKE … ESCAPE '!'`` (the query's ``%``, ``_`` and ``!`` taken literally)."""
    return "%" + query.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%"


class _SqlGraphReader:
    """What both graphs share: degrees from the edge table's two key indexes, one hop, edges among keys."""

    kind_attr = ""
    _edges = ""      # edge table
    _a = _b = ""     # its two endpoint columns (a <= b as stored)
    _edge_cols = ""  # the attribute columns selected after the endpoints

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    # --- to be given by each graph -------------------------------------------------------------
    def _edge_attributes(self, row: Sequence[Any]) -> dict[str, Any]:
        raise NotImplementedError

    def node_keys(self) -> list[str]:
        """Every node that has a row (entities / mentioned terms), in key order."""
        raise NotImplementedError

    def kinds(self) -> dict[str, str]:
        """Node key -> its category (entity type / mention label) for the nodes that have a row."""
        raise NotImplementedError

    def node_attributes(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        raise NotImplementedError

    def name_candidates(self, query: str) -> list[tuple[str, str]]:
        """(key, display name) of the nodes whose name or key may contain ``query`` (a superset)."""
        raise NotImplementedError

    # --- shared --------------------------------------------------------------------------------
    def degrees(self) -> dict[str, int]:
        """Degree of every node with at least one edge (a self-loop counts twice, as networkx does)."""
        out: Counter[str] = Counter()
        for column in (self._a, self._b):
            for key, count in self.conn.execute(
                    f"SELECT {column}, count(*) FROM {self._edges} GROUP BY {column}"):
                out[key] += int(count)
        return dict(out)

    def edge_keys(self) -> Iterator[tuple[str, str]]:
        """Every edge's endpoints (for degrees inside a filtered node set)."""
        for a, b in self.conn.execute(f"SELECT {self._a}, {self._b} FROM {self._edges}"):
            yield a, b

    def neighbour_keys(self, keys: Iterable[str]) -> dict[str, set[str]]:
        """Key -> its neighbours' keys, for the given keys (one indexed read per endpoint column)."""
        out: dict[str, set[str]] = {}
        for part in _batches(keys):
            marks = _marks(len(part))
            for near, far in ((self._a, self._b), (self._b, self._a)):
                for key, other in self.conn.execute(
                        f"SELECT {near}, {far} FROM {self._edges} WHERE {near} IN ({marks})", part):
                    out.setdefault(key, set()).add(other)
        return out

    def edges_among(self, keys: Iterable[str]) -> list[tuple[str, str, dict[str, Any]]]:
        """The edges whose two endpoints are both among ``keys`` (with attributes), sorted by endpoints."""
        wanted = set(keys)
        found: list[tuple[str, str, dict[str, Any]]] = []
        for part in _batches(sorted(wanted)):
            sql = (f"SELECT {self._a}, {self._b}, {self._edge_cols} FROM {self._edges} "
                   f"WHERE {self._a} IN ({_marks(len(part))})")
            params = list(part)
            if len(wanted) <= BATCH:
                sql += f" AND {self._b} IN ({_marks(len(wanted))})"
                params += sorted(wanted)
            found += [(row[0], row[1], self._edge_attributes(row[2:])) for row in self.conn.execute(sql, params)
                      if row[1] in wanted]
        return sorted(found, key=lambda edge: (edge[0], edge[1]))

    def neighbours(self, key: str) -> list[tuple[str, dict[str, Any]]]:
        """(neighbour, edge attributes) of one node, by neighbour key (networkx's adjacency order)."""
        rows = []
        for near, far in ((self._a, self._b), (self._b, self._a)):
            rows += [(row[0], self._edge_attributes(row[1:])) for row in self.conn.execute(
                f"SELECT {far}, {self._edge_cols} FROM {self._edges} WHERE {near} = ?", (key,))]
        unique = dict(sorted(rows, key=lambda item: item[0]))  # a self-loop is found twice
        return list(unique.items())

    def chunk_counts(self, terms: Iterable[str]) -> dict[str, dict[str, int]]:
        """Mention graph only (term -> {chunk id: mentions}); entities list their chunks themselves."""
        return {}

    def edge(self, a: str, b: str) -> Optional[dict[str, Any]]:
        """The attributes of the edge between ``a`` and ``b`` (either order); None when there is none."""
        first, second = (a, b) if a <= b else (b, a)
        row = self.conn.execute(f"SELECT {self._edge_cols} FROM {self._edges} WHERE {self._a} = ? AND {self._b} = ?",
                                (first, second)).fetchone()
        return None if row is None else self._edge_attributes(row)


class KnowledgeGraphReader(_SqlGraphReader):
    """The merged knowledge graph: ``entities`` (nodes) and ``relations`` (edges)."""

    kind_attr = "type"
    _edges, _a, _b = "relations", "source_key", "target_key"
    _edge_cols = "keywords, description, weight, source_chunk_ids"

    def _edge_attributes(self, row: Sequence[Any]) -> dict[str, Any]:
        return {"keywords": json.loads(row[0]), "description": row[1], "weight": row[2],
                "source_chunk_ids": json.loads(row[3])}

    def node_keys(self) -> list[str]:
        return [row[0] for row in self.conn.execute("SELECT entity_key FROM entities ORDER BY entity_key")]

    def kinds(self) -> dict[str, str]:
        return {key: kind for key, kind in self.conn.execute("SELECT entity_key, type FROM entities")}

    def node_attributes(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        out = {}
        for part in _batches(keys):
            for key, name, etype, desc, sources, aliases in self.conn.execute(
                    "SELECT entity_key, name, type, description, source_chunk_ids, aliases FROM entities "
                    f"WHERE entity_key IN ({_marks(len(part))})", part):
                out[key] = {"name": name, "type": etype, "description": desc,
                            "source_chunk_ids": json.loads(sources), "aliases": json.loads(aliases or "[]")}
        return out

    def name_candidates(self, query: str) -> list[tuple[str, str]]:
        if not query.isascii():
            rows = self.conn.execute("SELECT entity_key, name FROM entities")
        else:
            pattern = like_pattern(query)
            rows = self.conn.execute(
                "SELECT entity_key, name FROM entities WHERE lower(name) LIKE ? ESCAPE '!' "
                "OR lower(entity_key) LIKE ? ESCAPE '!' OR name LIKE ? OR name LIKE ?",
                (pattern, pattern, *_ASCII_LOWERING))
        return [(key, str(name or key)) for key, name in rows]


class MentionGraphReader(_SqlGraphReader):
    """The E2GraphRAG mention graph: terms of ``mentions`` (label: the largest of their labels) and
    ``mention_edges`` (weight: sentences together)."""

    kind_attr = "label"
    _edges, _a, _b = "mention_edges", "a", "b"
    _edge_cols = "weight"

    def _edge_attributes(self, row: Sequence[Any]) -> dict[str, Any]:
        return {"weight": row[0]}

    def node_keys(self) -> list[str]:
        return [row[0] for row in self.conn.execute("SELECT term FROM mentions GROUP BY term ORDER BY term")]

    def kinds(self) -> dict[str, str]:
        return {term: label for term, label in self.conn.execute("SELECT term, max(label) FROM mentions GROUP BY term")}

    def node_attributes(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        out = {}
        for part in _batches(keys):
            for term, label in self.conn.execute(
                    f"SELECT term, max(label) FROM mentions WHERE term IN ({_marks(len(part))}) GROUP BY term", part):
                out[term] = {"label": label}
        return out

    def name_candidates(self, query: str) -> list[tuple[str, str]]:
        if not query.isascii():
            rows = self.conn.execute("SELECT term FROM mentions GROUP BY term")
        else:
            rows = self.conn.execute("SELECT term FROM mentions WHERE lower(term) LIKE ? ESCAPE '!' OR term LIKE ? "
                                     "OR term LIKE ? GROUP BY term", (like_pattern(query), *_ASCII_LOWERING))
        return [(row[0], str(row[0])) for row in rows]

    def chunk_counts(self, terms: Iterable[str]) -> dict[str, dict[str, int]]:
        """Term -> {chunk id: mentions} for the given terms (the mention index, a few rows of it)."""
        out: dict[str, dict[str, int]] = {}
        for part in _batches(terms):
            for term, chunk_id, count in self.conn.execute(
                    f"SELECT term, chunk_id, count FROM mentions WHERE term IN ({_marks(len(part))})", part):
                out.setdefault(term, {})[chunk_id] = int(count)
        return out


def graph_reader(conn: Any, mention: bool) -> _SqlGraphReader:
    """The reader of the mention graph (``mention``) or of the knowledge graph over ``conn``."""
    return MentionGraphReader(conn) if mention else KnowledgeGraphReader(conn)
