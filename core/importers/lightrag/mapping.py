"""LightRAG records -> RAGScope records (pure functions: no storage access).

* documents keep LightRAG's doc ids; their name is LightRAG's ``file_path``; LightRAG's status is kept
  (``processed`` documents are imported, any other status becomes a failed RAGScope document whose error
  says so, without chunks);
* chunks keep LightRAG's chunk ids, order and text; ``tokens`` is re-counted with RAGScope's tokenizer
  (the budgets of the modes are in it) and LightRAG's own count is kept in the import record;
* entity keys are RAGScope's ``normalize_name`` of the LightRAG name; two LightRAG names with one key (case
  variants LightRAG kept apart) get distinct keys (``name``, then ``name #2``), so nothing is merged: RAGScope's
  alias merging stays off for imported entities and the counts equal LightRAG's;
* ``<SEP>``-joined descriptions become fragments, one per source chunk: when LightRAG's description has as
  many parts as the entity (or relation) has source chunks, part *i* is chunk *i*'s fragment (LightRAG appends
  both in the same order); otherwise (an LLM summary, or a capped list) the whole description is the first
  chunk's fragment. The merged row keeps LightRAG's description (the parts joined by a space), its type,
  weight and keywords as LightRAG wrote them.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from core.extraction.names import normalize_name
from core.importers.lightrag.reader import SEP, LightRAGIndex, split_sep
from core.indexing.profiles import (MergedEntity, MergedRelation, entity_vector_id, entity_vector_text,
                                 relation_vector_id, relation_vector_text)
from core.storage.records import node_pair
from core.tokens import count_tokens
from core.types import Chunk


@dataclass
class PlannedDocument:
    doc_id: str
    name: str
    text: str
    content_hash: str
    tokens: int
    lightrag_status: str
    chunks: list[Chunk] = field(default_factory=list)

    @property
    def imported(self) -> bool:
        return self.lightrag_status == "processed" and bool(self.chunks)

    def signature(self) -> str:
        """Changes when the text or LightRAG's chunking of it changes."""
        parts = [self.content_hash, self.lightrag_status] + [f"{c.chunk_id}\x00{c.text}" for c in self.chunks]
        return hashlib.sha256("\x01".join(parts).encode("utf-8")).hexdigest()


@dataclass
class EntityRow:
    """One fragment row: (entity key, chunk, document, name, type, description)."""

    key: str
    chunk_id: str
    doc_id: str
    name: str
    type: str
    description: str


@dataclass
class RelationRow:
    source: str
    target: str
    chunk_id: str
    doc_id: str
    keywords: list[str]
    description: str
    weight: float


@dataclass
class ImportPlan:
    documents: list[PlannedDocument]
    entities: list[MergedEntity]
    relations: list[MergedRelation]
    entity_fragments: dict[str, list[EntityRow]]
    relation_fragments: dict[tuple[str, str], list[RelationRow]]
    lightrag_names: dict[str, str]  # entity key -> LightRAG's entity name
    lightrag_tokens: dict[str, int]  # chunk id -> LightRAG's token count

    def chunks(self) -> list[Chunk]:
        return [c for d in self.documents if d.imported for c in d.chunks]


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def keywords_of(value: str) -> list[str]:
    """LightRAG's keywords field ("a,b<SEP>c") as a list, order kept, duplicates dropped."""
    return list(dict.fromkeys(k.strip() for k in re.split(r",|" + re.escape(SEP), value or "") if k.strip()))


def place_chunks(doc_id: str, text: str, chunks: list) -> list[Chunk]:
    """RAGScope chunks of one document in LightRAG's order, with their offsets in the text when found."""
    out = []
    cursor = 0
    for lr in sorted(chunks, key=lambda c: (c.order, c.chunk_id)):
        start = text.find(lr.text, cursor) if lr.text else -1
        if start < 0:
            start = text.find(lr.text) if lr.text else -1
        chunk = Chunk(lr.chunk_id, doc_id, lr.order, lr.text, count_tokens(lr.text),
                      count_tokens(text[:start]) if start >= 0 else 0, start_char=start)
        if start >= 0:
            cursor = start + 1
        out.append(chunk)
    if any(c.start_char < 0 for c in out):  # offsets unknown: the tree then counts the overlap in tokens
        for c in out:
            c.start_char = -1
    return out


def entity_keys(names: list[str]) -> dict[str, str]:
    """LightRAG entity name -> a unique RAGScope key (normalize_name, disambiguated, never merged)."""
    keys: dict[str, str] = {}
    used: set[str] = set()
    for name in sorted(names, key=lambda n: (normalize_name(n) or n.casefold(), n)):
        base = normalize_name(name) or name.strip().casefold() or "entity"
        key, n = base, 1
        while key in used:
            n += 1
            key = f"{base} #{n}"
        used.add(key)
        keys[name] = key
    return keys


def _parts(description: str, sources: list[str]) -> list[str]:
    """The fragment text of each source chunk (see the module docstring)."""
    parts = split_sep(description)
    if len(parts) == len(sources) and parts:
        return parts
    whole = " ".join(parts)
    return [whole] + [""] * (len(sources) - 1)


def map_index(index: LightRAGIndex) -> ImportPlan:
    """Turn a read LightRAG index into the rows RAGScope stores."""
    by_doc: dict[str, list] = {}
    for lr in index.chunks:
        by_doc.setdefault(lr.doc_id, []).append(lr)
    documents = []
    for doc in index.documents:
        planned = PlannedDocument(doc.doc_id, doc.file_path, doc.text, content_hash(doc.text), count_tokens(doc.text),
                                  doc.status)
        if doc.status == "processed":
            planned.chunks = place_chunks(doc.doc_id, doc.text, by_doc.get(doc.doc_id, []))
        documents.append(planned)
    chunk_doc = {c.chunk_id: c.doc_id for d in documents if d.imported for c in d.chunks}
    keys = entity_keys([e.name for e in index.entities])
    entities: list[MergedEntity] = []
    fragments: dict[str, list[EntityRow]] = {}
    for ent in index.entities:
        key = keys[ent.name]
        rows = [EntityRow(key, cid, chunk_doc[cid], ent.name, ent.type, part)
                for cid, part in zip(ent.source_chunk_ids, _parts(ent.description, ent.source_chunk_ids))
                if cid in chunk_doc]
        if not rows:
            continue  # all its chunks belong to documents LightRAG did not finish
        description = " ".join(split_sep(ent.description))
        text = entity_vector_text(ent.name, description)
        entities.append(MergedEntity(key, ent.name, ent.type, description, [r.chunk_id for r in rows], text,
                                     entity_vector_id(key, text), [], {ent.type: 1}))
        fragments[key] = rows
    names = {keys[e.name]: e.name for e in index.entities}
    relations: list[MergedRelation] = []
    rel_fragments: dict[tuple[str, str], list[RelationRow]] = {}
    for rel in index.relations:
        if rel.source not in keys or rel.target not in keys or keys[rel.source] == keys[rel.target]:
            continue
        pair = node_pair(keys[rel.source], keys[rel.target])
        keywords = keywords_of(rel.keywords)
        live = [cid for cid in rel.source_chunk_ids if cid in chunk_doc]
        if not live or pair[0] not in fragments or pair[1] not in fragments:
            continue
        parts = dict(zip(rel.source_chunk_ids, _parts(rel.description, rel.source_chunk_ids)))
        rel_rows = [RelationRow(pair[0], pair[1], cid, chunk_doc[cid], keywords if i == 0 else [], parts[cid],
                                rel.weight / len(live)) for i, cid in enumerate(live)]
        description = " ".join(split_sep(rel.description))
        text = relation_vector_text(keywords, names[pair[0]], names[pair[1]], description)
        relations.append(MergedRelation(pair[0], pair[1], keywords, description, rel.weight, live, text,
                                        relation_vector_id(pair[0], pair[1], text)))
        rel_fragments[pair] = rel_rows
    tokens = {c.chunk_id: c.tokens for c in index.chunks}
    return ImportPlan(documents, entities, relations, fragments, rel_fragments, names, tokens)
