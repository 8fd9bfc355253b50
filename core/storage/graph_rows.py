"""The graph half of the SQL ``RecordStore``: fragments, merged rows, sentences and the graph views,
as methods on the store (the statements themselves are in ``core.storage.graph_store``), so indexing
never holds the connection."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, cast

import networkx as nx

from core.storage import graph_store
from core.storage.graph_overview import graph_reader
from core.storage.graph_view import NetworkxGraphView
from core.storage.ports import GraphOverview
from core.storage.records import EntityFragment, Pair, RelationFragment

if TYPE_CHECKING:
    from core.storage.sql_connection import SqlConnection


class GraphRows:
    """Mixed into ``core.storage.store.SqlRecordStore`` (which provides ``db``)."""

    db: "SqlConnection"

    def insert_chunk_extraction(self, doc_id: str, chunk_id: str, extraction: Any) -> tuple[set[str], set[Pair]]:
        return graph_store.insert_chunk_extraction(self.db, doc_id, chunk_id, extraction)

    def remove_chunks(self, chunk_ids: list[str]) -> tuple[set[str], set[Pair]]:
        return graph_store.remove_chunks(self.db, chunk_ids)

    def entity_fragments(self, keys: Iterable[str]) -> dict[str, list[EntityFragment]]:
        return graph_store.entity_fragments(self.db, keys)

    def relation_fragments(self, keys: Iterable[Pair]) -> dict[Pair, list[RelationFragment]]:
        return graph_store.relation_fragments(self.db, keys)

    def existing_vector_ids(self, table: str, keys: Iterable[Any]) -> dict[Any, str]:
        return graph_store.existing_vector_ids(self.db, table, keys)

    def entity_name(self, key: str) -> str | None:
        return graph_store.entity_name(self.db, key)

    def entity_names(self) -> dict[str, str]:
        return graph_store.entity_names(self.db)

    def write_entity(self, key: str, name: str, etype: str, description: str, source_chunk_ids: list[str],
                     vector_id: str, aliases: list[str]) -> None:
        graph_store.write_entity(self.db, key, name, etype, description, source_chunk_ids, vector_id, aliases)

    def delete_entity(self, key: str) -> None:
        graph_store.delete_entity(self.db, key)

    def relations_touching(self, key: str) -> list[Pair]:
        return graph_store.relations_touching(self.db, key)

    def write_relation(self, pair: Pair, keywords: list[str], description: str, weight: float,
                       source_chunk_ids: list[str], vector_id: str) -> None:
        graph_store.write_relation(self.db, pair, keywords, description, weight, source_chunk_ids, vector_id)

    def delete_relation(self, pair: Pair) -> None:
        graph_store.delete_relation(self.db, pair)

    def entity_vector_rows(self) -> list[tuple[str, str, str, str]]:
        return [cast(tuple[str, str, str, str], tuple(r)) for r in graph_store.entity_vector_rows(self.db)]

    def relation_vector_rows(self) -> list[tuple[str, str, list[str], str, str]]:
        return graph_store.relation_vector_rows(self.db)

    def fragment_type_votes(self) -> list[tuple[str, str, str]]:
        return [cast(tuple[str, str, str], tuple(r)) for r in graph_store.fragment_type_votes(self.db)]

    def chunk_sentences(self, chunk_ids: Iterable[str]) -> dict[str, list[tuple[str, list[list[str]]]]]:
        return graph_store.chunk_sentences(self.db, chunk_ids)

    def write_sentence_vectors(self, rows: Iterable[tuple[str, int, int, bytes]]) -> int:
        return graph_store.write_sentence_vectors(self.db, rows)

    def sentence_vectors(self, chunk_ids: Iterable[str]) -> dict[str, list[tuple[int, int, bytes]]]:
        return graph_store.sentence_vectors(self.db, chunk_ids)

    def chunks_with_sentence_vectors(self) -> set[str]:
        return graph_store.chunks_with_sentence_vectors(self.db)

    def load_graph_view(self) -> NetworkxGraphView:
        return NetworkxGraphView(graph_store.load_knowledge_graph(self.db))

    def load_mention_graph(self) -> nx.Graph:
        return graph_store.load_mention_graph(self.db)

    def load_mention_index(self) -> dict[str, dict[str, int]]:
        return graph_store.load_mention_index(self.db)

    def graph_overview(self, mention: bool) -> GraphOverview:
        return graph_reader(self.db, mention)

    def drop_document_annotations(self, doc_id: str) -> int:
        from core.storage.annotations import drop_document_annotations

        return drop_document_annotations(self.db, doc_id)
