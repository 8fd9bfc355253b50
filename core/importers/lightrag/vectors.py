"""Reusing LightRAG's stored vectors (``--reuse-vectors``, opt-in) instead of re-embedding.

A vector is only worth reusing when it is the vector RAGScope's embedder would compute for the text RAGScope
embeds. Three things are compared, all before anything is written; any mismatch refuses the import with a
message naming it (and what to do), nothing is reused partly:

1. **dimension** — the ``embedding_dim`` of each NanoVectorDB file (``vdb_chunks.json``, ``vdb_entities.json``,
   ``vdb_relationships.json``) equals the workspace embedder's ``dim``;
2. **model** — LightRAG's files do not record the embedding model, so the caller names it
   (``--vectors-model NAME``); it must equal the workspace embedder's name (case-insensitive; a leading
   ``owner/`` as in ``sentence-transformers/all-MiniLM-L6-v2`` is ignored). Not named: refused;
3. **embedded text** — for every chunk, entity and relation RAGScope will embed, LightRAG's row exists (chunk:
   its chunk id; entity: ``entity_name``; relation: the pair ``src_id``/``tgt_id``, either order) and its stored
   ``content`` (the text LightRAG embedded) is exactly RAGScope's text: the chunk's one window (a chunk RAGScope
   embeds window by window never matches), keywords and endpoints for a relation, for an entity one of the
   texts an entity vector may come from (``entity_vector_texts`` in ``core.indexing.profiles``: today's name +
   profile start, or the earlier ``name\\n`` + the first 32 tokens of the description, which is LightRAG's own
   text for a short description). Exact string equality, whitespace included. A reused entity keeps the text
   its vector came from: its vector id is made from that text (``adopt_reused_texts``), so a re-import, a
   repair and the next merge of the entity all know which text the stored vector is.

LightRAG 1.5.7 writes ``name\\ndescription`` (the whole, ``<SEP>``-joined description) per entity and
``keywords\\tsource\\ntarget\\ndescription`` per relation, so a directory with relations, or with entities
seen in more than one chunk, is refused on the text check: reuse fits directories whose records already
carry RAGScope's texts. The summary tree (which LightRAG does not have) is always embedded.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from core.embeddings import chunk_pieces
from core.errors import RAGScopeError
from core.importers.lightrag.mapping import ImportPlan
from core.importers.lightrag.reader import LightRAGFormatError, LightRAGIndex, load_json
from core.indexing.profiles import entity_vector_id, entity_vector_texts

COLLECTIONS = {"chunks": "vdb_chunks.json", "entities": "vdb_entities.json", "relations": "vdb_relationships.json"}
EXAMPLE_CHARS = 80


class LightRAGImportError(RAGScopeError, ValueError):
    """The import cannot run as asked; the message says why and what to do."""


@dataclass
class ReusedVectors:
    """LightRAG's vectors by RAGScope record: chunk id, entity key, relation (source, target) key."""

    chunks: dict[str, np.ndarray] = field(default_factory=dict)
    entities: dict[str, np.ndarray] = field(default_factory=dict)
    relations: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    entity_texts: dict[str, str] = field(default_factory=dict)  # entity key -> the text LightRAG embedded

    def counts(self) -> dict[str, int]:
        return {"chunks": len(self.chunks), "entities": len(self.entities), "relations": len(self.relations)}


def _model_key(name: str) -> str:
    return name.strip().rsplit("/", 1)[-1].casefold()


def read_vdb(folder: Path, name: str) -> tuple[int, list[dict[str, Any]], np.ndarray]:
    """(embedding_dim, rows, unit vectors in row order) of one NanoVectorDB file."""
    import base64
    import binascii

    data = load_json(folder / name)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise LightRAGFormatError(f"{name}: field 'data' is missing (expected a NanoVectorDB object)")
    dim, rows = data.get("embedding_dim"), data["data"]
    if not isinstance(dim, int) or dim <= 0:
        raise LightRAGFormatError(f"{name}: field 'embedding_dim' is not a positive integer")
    try:
        flat = np.frombuffer(base64.b64decode(str(data.get("matrix", ""))), dtype=np.float32)
    except (binascii.Error, ValueError):
        raise LightRAGFormatError(f"{name}: field 'matrix' is not base64 float32 data") from None
    if flat.size != dim * len(rows):
        raise LightRAGFormatError(f"{name}: field 'matrix' holds {flat.size} numbers, expected {len(rows)} rows "
                                  f"x {dim}")
    matrix = flat.reshape(len(rows), dim).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return dim, rows, matrix / norms


def _texts(plan: ImportPlan, windows: bool) -> dict[str, dict[Any, tuple[Any, list[str]]]]:
    """Per collection: LightRAG row key -> (RAGScope record key, the texts RAGScope accepts for it, the one
    it embeds today first)."""
    out: dict[str, dict[Any, tuple[Any, list[str]]]] = {"chunks": {}, "entities": {}, "relations": {}}
    for chunk in plan.chunks():
        pieces = chunk_pieces([chunk.text], windows)[0]
        out["chunks"][chunk.chunk_id] = (chunk.chunk_id, [pieces[0] if len(pieces) == 1 else "\x00windows"])
    for entity in plan.entities:
        out["entities"][plan.lightrag_names[entity.key]] = (entity.key, entity_vector_texts(entity.name,
                                                                                            entity.description))
    for rel in plan.relations:
        a, b = plan.lightrag_names[rel.source], plan.lightrag_names[rel.target]
        out["relations"][frozenset((a, b))] = ((rel.source, rel.target), [rel.vector_text])
    return out


def adopt_reused_texts(plan: ImportPlan, reused: ReusedVectors) -> None:
    """Give each entity whose LightRAG vector is reused the text that vector came from (and the vector id made
    from it), in place."""
    for entity in plan.entities:
        text = reused.entity_texts.get(entity.key)
        if text is not None and text != entity.vector_text:
            entity.vector_text, entity.vector_id = text, entity_vector_id(entity.key, text)


def _row_key(collection: str, row: dict[str, Any]) -> Any:
    if collection == "chunks":
        return row.get("__id__")
    if collection == "entities":
        return row.get("entity_name")
    return frozenset((str(row.get("src_id")), str(row.get("tgt_id"))))


def _short(text: str) -> str:
    text = text.replace("\n", "\\n").replace("\t", "\\t")
    return text if len(text) <= EXAMPLE_CHARS else text[:EXAMPLE_CHARS] + "…"


def reusable_vectors(index: LightRAGIndex, plan: ImportPlan, embedder_name: str, embedder_dim: int,
                     vectors_model: Optional[str], windows: bool) -> ReusedVectors:
    """LightRAG's vectors for every record RAGScope embeds, or ``LightRAGImportError`` naming each mismatch."""
    folder = index.storage_dir
    problems: list[str] = []
    if not vectors_model:
        problems.append("model: LightRAG's vector files do not record which embedding model wrote them; name it "
                        f"with --vectors-model (it must be the workspace embedder '{embedder_name}')")
    elif _model_key(vectors_model) != _model_key(embedder_name):
        problems.append(f"model: LightRAG's vectors were written by '{vectors_model}', the workspace embedder is "
                        f"'{embedder_name}'")
    wanted = _texts(plan, windows)
    loaded: dict[str, tuple[list[dict[str, Any]], np.ndarray]] = {}
    for collection, name in COLLECTIONS.items():
        if not wanted[collection]:
            continue
        if not (folder / name).is_file():
            problems.append(f"{collection}: {name} is missing, so there are no vectors to reuse")
            continue
        dim, rows, matrix = read_vdb(folder, name)
        if dim != embedder_dim:
            problems.append(f"dimension: {name} holds {dim}-d vectors, the workspace embedder '{embedder_name}' "
                            f"gives {embedder_dim}-d")
            continue
        loaded[collection] = (rows, matrix)
    reused = ReusedVectors()
    for collection, (rows, matrix) in loaded.items():
        by_key = {_row_key(collection, row): i for i, row in enumerate(rows)}
        missing, differ, example = 0, 0, ""
        for lr_key, (key, texts) in wanted[collection].items():
            i = by_key.get(lr_key)
            if i is None:
                missing += 1
                continue
            stored, text = str(rows[i].get("content", "")), texts[0]
            if stored not in texts:
                differ += 1
                if not example:
                    shown = "several windows" if text == "\x00windows" else repr(_short(text))
                    example = (f" (first: {_short(str(lr_key if collection != 'relations' else ' - '.join(sorted(lr_key))))}"
                               f": LightRAG embedded {_short(stored)!r}, RAGScope embeds {shown})")
                continue
            getattr(reused, collection)[key] = matrix[i]
            if collection == "entities":
                reused.entity_texts[key] = stored
        total = len(wanted[collection])
        if missing:
            problems.append(f"text: {missing} of {total} {collection} have no row in {COLLECTIONS[collection]}")
        if differ:
            problems.append(f"text: {differ} of {total} {collection} were embedded from another text than RAGScope "
                            f"embeds{example}")
    if problems:
        raise LightRAGImportError("LightRAG's stored vectors cannot be reused here: " + "; ".join(problems) +
                                  ". Import without --reuse-vectors to re-embed with the workspace's embedder.")
    return reused
