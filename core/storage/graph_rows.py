"""The graph half of the SQLite ``RecordStore``: fragments, merged rows, sentences and the graph views,
as methods on the store (the SQL itself is in ``core.storage.graph_store``), so indexing never holds
the connection."""
from __future__ import annotations

import sqlite3
from typing import Any, Iterable, cast

import networkx as nx

from core.storage import graph_store
from core.storage.graph_overview import graph_reader
from core.storage.graph_store import EntityFragment, RelationFragment
from core.storage.graph_view import NetworkxGraphView
from core.storage.ports import GraphOverview, Pair


class GraphRows:
    """Mixed into ``core.storage.store.Store`` (which provides ``conn``)."""

    conn: sqlite3.Connection

    def insert_chunk_extraction(self, doc_id: str, chunk_id: str, extraction: Any) -> tuple[set[str], set[Pair]]:
        return graph_store.insert_chunk_extraction(self.conn, doc_id, chunk_id, extraction)

    def remove_chunks(self, chunk_ids: list[str]) -> tuple[set[str], set[Pair]]:
        return graph_store.remove_chunks(self.conn, chunk_ids)

    def entity_fragments(self, keys: Iterable[str]) -> dict[str, list[EntityFragment]]:
        return graph_store.entity_fragments(self.conn, keys)

    def relation_fragments(self, keys: Iterable[Pair]) -> dict[Pair, list[RelationFragment]]:
        return graph_store.relation_fragments(self.conn, keys)

    def existing_vector_ids(self, table: str, keys: Iterable[Any]) -> dict[Any, str]:
        return graph_store.existing_vector_ids(self.conn, table, keys)

    def entity_name(self, key: str) -> str | None:
        return graph_store.entity_name(self.conn, key)

    def entity_names(self) -> dict[str, str]:
        return graph_store.entity_names(self.conn)

    def write_entity(self, key: str, name: str, etype: str, description: str, source_chunk_ids: list[str],
                     vector_id: str, aliases: list[str]) -> None:
        graph_store.write_entity(self.conn, key, name, etype, description, source_chunk_ids, vector_id, aliases)

    def delete_entity(self, key: str) -> None:
        graph_store.delete_entity(self.conn, key)

    def relations_touching(self, key: str) -> list[Pair]:
        return graph_store.relations_touching(self.conn, key)

    def write_relation(self, pair: Pair, keywords: list[str], description: str, weight: float,
                       source_chunk_ids: list[str], vector_id: str) -> None:
        graph_store.write_relation(self.conn, pair, keywords, description, weight, source_chunk_ids, vector_id)

    def delete_relation(self, pair: Pair) -> None:
        graph_store.delete_relation(self.conn, pair)

    def entity_vector_rows(self) -> list[tuple[str, str, str, str]]:
        return [cast(tuple[str, str, str, str], tuple(r)) for r in graph_store.entity_vector_rows(self.conn)]

    def relation_vector_rows(self) -> list[tuple[str, str, list[str], str, str]]:
        return graph_store.relation_vector_rows(self.conn)

    def fragment_type_votes(self) -> list[tuple[str, str, str]]:
        return [cast(tuple[str, str, str], tuple(r)) for r in graph_store.fragment_type_votes(self.conn)]

    def chunk_sentences(self, chunk_ids: Iterable[str]) -> dict[str, list[tuple[str, list[list[str]]]]]:
        return graph_store.chunk_sentences(self.conn, chunk_ids)

    def load_graph_view(self) -> NetworkxGraphView:
        return NetworkxGraphView(graph_store.load_knowledge_graph(self.conn))

    def load_mention_graph(self) -> nx.Graph:
        return graph_store.load_mention_graph(self.conn)

    def load_mention_index(self) -> dict[str, dict[str, int]]:
        return graph_store.load_mention_index(self.conn)

    def graph_overview(self, mention: bool) -> GraphOverview:
        return graph_reader(self.conn, mention)

    def drop_document_annotations(self, doc_id: str) -> int:
        from core.storage.annotations import drop_document_annotations

        return drop_document_annotations(self.conn, doc_id, (sqlite3.OperationalError,))
