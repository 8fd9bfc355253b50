"""The Knowledge graph page's reads straight from the record store, so that opening the page never loads
the whole graph: node keys and degrees (index scans of the relation keys), the rows of the nodes it
draws and the relations among them (primary-key lookups), one node's neighbours, one relation, a name
search and one hop of a neighbourhood at a time.

Two readers share one interface (``core.storage.ports.GraphOverview``): ``KnowledgeGraphReader`` over
``entities`` / ``relations`` and ``MentionGraphReader`` over ``mentions`` / ``mention_edges`` (the
E2GraphRAG co-occurrence graph). The attributes they return are exactly the ones
``core.storage.graph_store.load_knowledge_graph`` / ``load_mention_graph`` put on the networkx graph.
The statements are SQLAlchemy Core, the same for SQLite and PostgreSQL. Name search: an ASCII query is
narrowed in SQL (``lower(x) LIKE``, a superset of Python's ``query in x.lower()`` for an ASCII query,
plus the two non-ASCII letters whose Python lower case is ASCII) and checked exactly in Python; any
other query reads every name.
"""
from __future__ import annotations

import json
from collections import Counter
from typing import Any, Iterable, Iterator, Optional, Sequence

from sqlalchemy import Column, Table, bindparam, func, or_, select

from core.storage import schema as s
from core.storage.sql_connection import SqlConnection

BATCH = 500  # keys per IN (...) list
_ASCII_LOWERING = ("%\u0130%", "%\u212a%")  # 'İ'.lower() == 'i̇', 'K' (Kelvin).lower() == 'k'


def _batches(keys: Iterable[str], size: int = BATCH) -> Iterator[list[str]]:
    items = list(dict.fromkeys(keys))
    for start in range(0, len(items), size):
        yield items[start:start + size]


def like_pattern(query: str) -> str:
    """``%query%`` for ``LIKE … ESCAPE '!'`` (the query's ``%``, ``_`` and ``!`` taken literally)."""
    return "%" + query.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%"


class _SqlGraphReader:
    """What both graphs share: degrees from the edge table's two key indexes, one hop, edges among keys."""

    kind_attr = ""
    _edges: Table  # edge table
    _a: Column[Any]  # its two endpoint columns (a <= b as stored)
    _b: Column[Any]
    _edge_cols: tuple[Column[Any], ...] = ()  # the attribute columns selected after the endpoints

    def __init__(self, db: SqlConnection) -> None:
        self.db = db

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
            for key, count in self.db.rows(select(column, func.count()).group_by(column)):
                out[key] += int(count)
        return dict(out)

    def edge_keys(self) -> Iterator[tuple[str, str]]:
        """Every edge's endpoints (for degrees inside a filtered node set)."""
        for a, b in self.db.rows(select(self._a, self._b)):
            yield a, b

    def neighbour_keys(self, keys: Iterable[str]) -> dict[str, set[str]]:
        """Key -> its neighbours' keys, for the given keys (one indexed read per endpoint column)."""
        out: dict[str, set[str]] = {}
        for part in _batches(keys):
            for near, far in ((self._a, self._b), (self._b, self._a)):
                for key, other in self.db.rows(select(near, far).where(near.in_(bindparam("keys", expanding=True))),
                                                  {"keys": part}):
                    out.setdefault(key, set()).add(other)
        return out

    def edges_among(self, keys: Iterable[str]) -> list[tuple[str, str, dict[str, Any]]]:
        """The edges whose two endpoints are both among ``keys`` (with attributes), sorted by endpoints."""
        wanted = set(keys)
        found: list[tuple[str, str, dict[str, Any]]] = []
        for part in _batches(sorted(wanted)):
            query = select(self._a, self._b, *self._edge_cols).where(self._a.in_(part))
            if len(wanted) <= BATCH:
                query = query.where(self._b.in_(sorted(wanted)))
            found += [(row[0], row[1], self._edge_attributes(row[2:])) for row in self.db.rows(query)
                      if row[1] in wanted]
        return sorted(found, key=lambda edge: (edge[0], edge[1]))

    def neighbours(self, key: str) -> list[tuple[str, dict[str, Any]]]:
        """(neighbour, edge attributes) of one node, by neighbour key (networkx's adjacency order)."""
        rows = []
        for near, far in ((self._a, self._b), (self._b, self._a)):
            rows += [(row[0], self._edge_attributes(row[1:])) for row in self.db.rows(
                select(far, *self._edge_cols).where(near == key))]
        unique = dict(sorted(rows, key=lambda item: item[0]))  # a self-loop is found twice
        return list(unique.items())

    def chunk_counts(self, terms: Iterable[str]) -> dict[str, dict[str, int]]:
        """Mention graph only (term -> {chunk id: mentions}); entities list their chunks themselves."""
        return {}

    def edge(self, a: str, b: str) -> Optional[dict[str, Any]]:
        """The attributes of the edge between ``a`` and ``b`` (either order); None when there is none."""
        first, second = (a, b) if a <= b else (b, a)
        row = self.db.execute(select(*self._edge_cols).where(self._a == first, self._b == second)).first()
        return None if row is None else self._edge_attributes(row)


_e, _r, _m, _me = s.entities, s.relations, s.mentions, s.mention_edges


class KnowledgeGraphReader(_SqlGraphReader):
    """The merged knowledge graph: ``entities`` (nodes) and ``relations`` (edges)."""

    kind_attr = "type"
    _edges, _a, _b = _r, _r.c.source_key, _r.c.target_key
    _edge_cols = (_r.c.keywords, _r.c.description, _r.c.weight, _r.c.source_chunk_ids)

    def _edge_attributes(self, row: Sequence[Any]) -> dict[str, Any]:
        return {"keywords": json.loads(row[0]), "description": row[1], "weight": row[2],
                "source_chunk_ids": json.loads(row[3])}

    def node_keys(self) -> list[str]:
        return self.db.scalars(select(_e.c.entity_key).order_by(_e.c.entity_key))

    def kinds(self) -> dict[str, str]:
        return {key: kind for key, kind in self.db.rows(select(_e.c.entity_key, _e.c.type))}

    def node_attributes(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        out = {}
        query = select(_e.c.entity_key, _e.c.name, _e.c.type, _e.c.description, _e.c.source_chunk_ids, _e.c.aliases
                       ).where(_e.c.entity_key.in_(bindparam("keys", expanding=True)))
        for part in _batches(keys):
            for key, name, etype, desc, sources, aliases in self.db.rows(query, {"keys": part}):
                out[key] = {"name": name, "type": etype, "description": desc,
                            "source_chunk_ids": json.loads(sources), "aliases": json.loads(aliases or "[]")}
        return out

    def name_candidates(self, query: str) -> list[tuple[str, str]]:
        names = select(_e.c.entity_key, _e.c.name)
        if query.isascii():
            pattern = like_pattern(query)
            names = names.where(or_(func.lower(_e.c.name).like(pattern, escape="!"),
                                    func.lower(_e.c.entity_key).like(pattern, escape="!"),
                                    *(_e.c.name.like(letter) for letter in _ASCII_LOWERING)))
        return [(key, str(name or key)) for key, name in self.db.rows(names)]


class MentionGraphReader(_SqlGraphReader):
    """The E2GraphRAG mention graph: terms of ``mentions`` (label: the largest of their labels) and
    ``mention_edges`` (weight: sentences together)."""

    kind_attr = "label"
    _edges, _a, _b = _me, _me.c.a, _me.c.b
    _edge_cols = (_me.c.weight,)

    def _edge_attributes(self, row: Sequence[Any]) -> dict[str, Any]:
        return {"weight": row[0]}

    def node_keys(self) -> list[str]:
        return self.db.scalars(select(_m.c.term).group_by(_m.c.term).order_by(_m.c.term))

    def kinds(self) -> dict[str, str]:
        return {term: label for term, label in self.db.rows(
            select(_m.c.term, func.max(_m.c.label)).group_by(_m.c.term))}

    def node_attributes(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        out = {}
        query = (select(_m.c.term, func.max(_m.c.label)).where(_m.c.term.in_(bindparam("keys", expanding=True)))
                 .group_by(_m.c.term))
        for part in _batches(keys):
            for term, label in self.db.rows(query, {"keys": part}):
                out[term] = {"label": label}
        return out

    def name_candidates(self, query: str) -> list[tuple[str, str]]:
        terms = select(_m.c.term)
        if query.isascii():
            terms = terms.where(or_(func.lower(_m.c.term).like(like_pattern(query), escape="!"),
                                    *(_m.c.term.like(letter) for letter in _ASCII_LOWERING)))
        return [(row[0], str(row[0])) for row in self.db.rows(terms.group_by(_m.c.term))]

    def chunk_counts(self, terms: Iterable[str]) -> dict[str, dict[str, int]]:
        """Term -> {chunk id: mentions} for the given terms (the mention index, a few rows of it)."""
        out: dict[str, dict[str, int]] = {}
        query = select(_m.c.term, _m.c.chunk_id, _m.c.count).where(_m.c.term.in_(bindparam("keys", expanding=True)))
        for part in _batches(terms):
            for term, chunk_id, count in self.db.rows(query, {"keys": part}):
                out.setdefault(term, {})[chunk_id] = int(count)
        return out


def graph_reader(db: SqlConnection, mention: bool) -> _SqlGraphReader:
    """The reader of the mention graph (``mention``) or of the knowledge graph over ``db``."""
    return MentionGraphReader(db) if mention else KnowledgeGraphReader(db)
