"""Re-merging the touched entities and relations from their fragments, and the summary tree with its
extractive summarizer: the steps a batch and a deletion share (rows go to the caller's transaction).
The re-merge ends by replaying the graph edit log (``core.editing.replay``)."""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from core.editing.replay import replay_active
from core.indexing.profiles import MergedEntity, MergedRelation, merge_entity, merge_relation
from core.indexing.summarize import extractive_summary, tfidf_vectors, unparsed_sentences
from core.indexing.tree import Passage, Summarizer, SummaryTree
from core.workspace import Workspace


def merge_touched(ws: Workspace, entity_keys: set[str], relation_keys: set[tuple[str, str]],
                  summarizer: Optional[Callable] = None) -> tuple[list[MergedEntity], list[MergedRelation], list[str]]:
    """Re-merge touched entities/relations from all their remaining fragments.

    Returns (changed entities, changed relations, vector ids to delete). Rows are written to the
    caller's transaction; only items whose embedded text changed are returned.
    """
    records = ws.records
    settings = ws.settings
    old_entity_vectors = records.existing_vector_ids("entities", sorted(entity_keys))
    changed_entities: list[MergedEntity] = []
    changed_relations: list[MergedRelation] = []
    removed: list[str] = []
    names: dict[str, str] = {}
    renamed: list[str] = []
    for key, fragments in records.entity_fragments(sorted(entity_keys)).items():
        if not fragments:
            records.delete_entity(key)
            if key in old_entity_vectors:
                removed.append(old_entity_vectors[key])
            continue
        merged = merge_entity(key, fragments, settings, summarizer)
        names[key] = merged.name
        old_name = records.entity_name(key)
        if old_name is not None and old_name != merged.name:
            renamed.append(key)
        records.write_entity(key, merged.name, merged.type, merged.description, merged.source_chunk_ids,
                                 merged.vector_id, merged.aliases)
        if old_entity_vectors.get(key) != merged.vector_id:
            changed_entities.append(merged)
            if key in old_entity_vectors:
                removed.append(old_entity_vectors[key])
    # a relation's embedded text names its endpoints: when an entity's display name changes, its other
    # relations are re-merged too, so the result never depends on which batch brought the new name
    relation_keys = set(relation_keys)
    for key in renamed:
        relation_keys.update(records.relations_touching(key))
    old_relation_vectors = records.existing_vector_ids("relations", sorted(relation_keys))
    for pair, relation_fragments in records.relation_fragments(sorted(relation_keys)).items():
        if not relation_fragments:
            records.delete_relation(pair)
            if pair in old_relation_vectors:
                removed.append(old_relation_vectors[pair])
            continue
        for key in pair:
            if key not in names:
                names[key] = records.entity_name(key) or key
        relation = merge_relation(pair, relation_fragments, names, settings, summarizer)
        records.write_relation(pair, relation.keywords, relation.description, relation.weight,
                                   relation.source_chunk_ids, relation.vector_id)
        if old_relation_vectors.get(pair) != relation.vector_id:
            changed_relations.append(relation)
            if pair in old_relation_vectors:
                removed.append(old_relation_vectors[pair])
    # hand edits (core.editing) survive every re-merge: the active edit log is applied again
    return replay_active(records, settings, changed_entities, changed_relations, removed)


def make_tree_summarizer(ws: Workspace, cache: dict) -> Summarizer:
    """Extractive LexRank summaries of the children's parsed sentences (their text split by
    ``unparsed_sentences`` where no parse covers it) with TF-IDF similarity by default; embedder vectors
    when the ``tree_summary_similarity`` setting says so, cached so upper levels reuse them."""

    def embed_cached(sentences: list[str]) -> np.ndarray:
        missing = [s for s in dict.fromkeys(sentences) if s not in cache]
        if missing:
            cache.update(zip(missing, ws.embedder.embed(missing)))
        return np.stack([cache[s] for s in sentences])

    similarity = embed_cached if ws.settings.tree_summary_similarity == "embedder" else tfidf_vectors

    def summarize(passages: list[Passage]) -> str:
        # summaries never quote markup ("## Foundation", list bullets): parsed sentences are plain text
        # already, the rest is split from the plain text
        sentences = [s for p in passages for s in (p.sentences if p.sentences is not None
                                                   else unparsed_sentences(p.text))]
        return extractive_summary(sentences, similarity, ws.settings.summary_tokens)

    return summarize


def new_tree(ws: Workspace, cache: dict, summarizer: Optional[Callable[[list[str]], str]] = None) -> SummaryTree:
    """The summary tree of the workspace, summarising with ``summarizer(texts)`` (an LLM, which reads the
    children's texts) or by default extractively from their sentences."""
    if summarizer is None:
        return SummaryTree(ws.records, ws.settings.tree_group_size, make_tree_summarizer(ws, cache))
    texts_summarizer = summarizer
    return SummaryTree(ws.records, ws.settings.tree_group_size,
                       lambda passages: texts_summarizer([p.text for p in passages]))
