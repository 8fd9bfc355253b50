"""Import (and re-import) a LightRAG working directory into a RAGScope workspace.

1. Read and validate every file, map the records, and parse the new chunks with spaCy — all before any
   write, so a malformed directory changes nothing (``LightRAGFormatError`` names the file and field).
2. Under the write lock: documents that vanished from LightRAG, or whose text or chunking changed, go
   through RAGScope's own deletion path (``core.indexing.deletion``); the rest stay untouched.
3. ONE transaction: new documents, chunks, their spaCy sentences and mentions (the E2GraphRAG mention graph),
   the entities and relations whose LightRAG record differs from the stored one (fragments and merged rows),
   entities/relations LightRAG no longer has removed, the summary subtrees of the new documents, the vectors
   (re-embedded with the workspace's embedder: the expected time is said first, progress per slice), and the
   import record with its provenance. Any failure rolls it back; vectors it left behind are orphans that the
   next run's reconciliation removes. (A failure after step 2 leaves the deletions applied: those documents
   are gone in LightRAG too, or come back with the next import.)
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from core.embeddings import chunk_windows, embed_chunk_windows
from core.errors import RAGScopeError
import core.importers.lightrag.writer as writer
from core.importers.lightrag.mapping import ImportPlan, map_index
from core.importers.lightrag.reader import LightRAGIndex, read_index
from core.indexing.batch import progress_slices
from core.indexing.common import SpacyExtractor, progress_event
from core.indexing.vector_writes import graph_texts
from core.types import Chunk, ChunkExtraction, ProgressCallback, no_progress
from core.workspace import Workspace

PROVENANCE = "imported from LightRAG"
LIGHTRAG_VERSION = "1.5.7"
PROBE_TEXTS = 32  # texts timed before embedding to say the expected time


class LightRAGImportError(RAGScopeError, ValueError):
    """The import cannot run as asked; the message says why and what to do."""


@dataclass
class ImportReport:
    source: str = ""
    lightrag_workspace: str = ""
    new_documents: int = 0
    replaced_documents: int = 0
    deleted_documents: int = 0
    unchanged_documents: int = 0
    not_indexed_by_lightrag: int = 0
    entities_written: int = 0
    relations_written: int = 0
    entities_removed: int = 0
    relations_removed: int = 0
    embedded: dict[str, float] = field(default_factory=dict)
    expected_embed_s: float = 0.0
    seconds: float = 0.0
    lightrag: dict[str, int] = field(default_factory=dict)
    ragscope: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def check_vector_reuse(ws: Workspace, index: LightRAGIndex) -> None:
    """LightRAG's stored vectors may be reused only when dimension, model and embedded text match. They
    never all do: the files do not record the model, and LightRAG embeds other texts ("name\\ndescription",
    whole chunks) than RAGScope (name + start of profile, keywords + endpoints, 200-token windows)."""
    reasons = []
    dims = set(index.vector_dims.values())
    if dims and dims != {ws.embedder.dim}:
        reasons.append(f"dimension: LightRAG's vectors are {'/'.join(map(str, sorted(dims)))}-d, the workspace "
                       f"embedder '{ws.embedder.name}' gives {ws.embedder.dim}-d")
    reasons.append("model: LightRAG's vector files do not record which embedding model wrote them")
    reasons.append("text: LightRAG embeds 'name\\ndescription' per entity and the description per relation, "
                   "RAGScope embeds the name with the start of the profile and keywords with endpoints")
    raise LightRAGImportError("LightRAG's stored vectors cannot be reused here (" + "; ".join(reasons) +
                              "); import without --reuse-lightrag-vectors to re-embed with the workspace's embedder")


def _nlp(ws: Workspace, chunks: list[Chunk], imported_keys: set[str]) -> list[ChunkExtraction]:
    """spaCy sentences and mentions of the chunks; a sentence mention points at an imported entity only."""
    if not chunks:
        return []
    extractions = SpacyExtractor(ws.settings.entity_types).extract([c.text for c in chunks])
    for ex in extractions:
        for sentence in ex.sentences:
            sentence.mentions = [[m[0], m[1], m[2] if len(m) > 2 and m[2] in imported_keys else ""]
                                 for m in sentence.mentions]
    return extractions


def _estimate(ws: Workspace, texts: list[str]) -> tuple[int, float]:
    """(tokens to embed, expected seconds): a local embedder is timed on a sample of the texts first (its
    speed on this machine now; the model loads then too); a remote one has no estimate (0)."""
    from core.tokens import count_tokens

    tokens = sum(count_tokens(t) for t in texts)
    if not texts or getattr(ws.embedder, "remote", False):
        return tokens, 0.0
    step = max(1, len(texts) // PROBE_TEXTS)
    sample = texts[::step][:PROBE_TEXTS]
    ws.embedder.embed(sample[:2])  # loads the model outside the timing
    started = time.perf_counter()
    ws.embedder.embed(sample)
    rate = max(1.0, sum(count_tokens(t) for t in sample) / max(time.perf_counter() - started, 1e-3))
    return tokens, round(tokens / rate, 1)


def _embed(ws: Workspace, chunks: list[Chunk], texts: list[str], progress: ProgressCallback,
           report: ImportReport) -> tuple[list[np.ndarray], Optional[np.ndarray]]:
    """Chunk vectors (windows when the setting says so) and graph vectors, in progress slices."""
    windows = ws.settings.chunk_vector_windows
    for chunk in chunks:
        chunk.windows = len(chunk_windows(chunk.text)) if windows else 1
    all_texts = [c.text for c in chunks] + texts
    tokens, expected = _estimate(ws, all_texts)
    report.expected_embed_s = expected
    total = len(all_texts)
    when = f"about {expected:.0f} s at this machine's current speed" if expected else \
        "time depends on the embeddings server"
    progress_event(progress, "embed", 0, total, f"re-embedding {total} texts ({tokens} tokens) with "
                                                f"{ws.embedder.name}: {when}")
    started = time.perf_counter()
    per_chunk: list[np.ndarray] = []
    done = 0
    for start, end in progress_slices(len(chunks)):
        per_chunk += embed_chunk_windows(ws.embedder, [c.text for c in chunks[start:end]], windows)
        done = end
        progress_event(progress, "embed", done, total, _eta(started, done, total))
    parts = []
    for start, end in progress_slices(len(texts)):
        parts.append(ws.embedder.embed(texts[start:end]))
        progress_event(progress, "embed", len(chunks) + end, total, _eta(started, len(chunks) + end, total))
    report.embedded = {"texts": total, "tokens": tokens, "seconds": round(time.perf_counter() - started, 2)}
    return per_chunk, (np.concatenate(parts) if parts else None)


def _eta(started: float, done: int, total: int) -> str:
    elapsed = time.perf_counter() - started
    left = elapsed / done * (total - done) if done else 0.0
    return f"{done}/{total} embedded, about {left:.0f} s left"


def import_lightrag(ws: Workspace, directory: Path | str, source_model: Optional[str] = None,
                    lightrag_workspace: Optional[str] = None, progress: ProgressCallback = no_progress,
                    reuse_vectors: bool = False, wait: bool = False) -> ImportReport:
    """Import (or re-import: only the difference is applied) a LightRAG working directory into ``ws``."""
    started = time.perf_counter()
    report = ImportReport(source=str(Path(directory).resolve()))
    progress_event(progress, "read", 0, 1, f"reading {directory}")
    index = read_index(directory, lightrag_workspace)
    report.lightrag_workspace, report.lightrag = index.workspace, index.counts()
    if reuse_vectors:
        check_vector_reuse(ws, index)
    plan = map_index(index)
    progress_event(progress, "read", 1, 1, "read {documents} documents, {chunks} chunks, {entities} entities, "
                                           "{relations} relations".format(**report.lightrag))
    with ws.writer(wait=wait):
        _apply(ws, index, plan, source_model or "unknown", progress, report)
    report.ragscope = writer.counts(ws)
    report.seconds = round(time.perf_counter() - started, 2)
    progress_event(progress, "import", 1, 1, "done")
    return report


def _apply(ws: Workspace, index: LightRAGIndex, plan: ImportPlan, source_model: str, progress: ProgressCallback,
           report: ImportReport) -> None:
    previous = writer.previous_import(ws)
    existing = writer.document_ids(ws)
    if existing and previous is None:
        raise LightRAGImportError(f"workspace '{ws.name}' already holds documents indexed by RAGScope; import a "
                                  "LightRAG directory into a new workspace (--workspace NEW), or into one it was "
                                  "imported into before")
    before = previous.get("documents", {}) if previous else {}
    planned = {d.doc_id: d for d in plan.documents}
    vanished = sorted(d for d in before if d not in planned)
    changed = sorted(d for d, doc in planned.items()
                     if d in existing and before.get(d, {}).get("signature") != doc.signature())
    fresh = [d for d in plan.documents if d.doc_id not in existing or d.doc_id in changed]
    report.deleted_documents, report.replaced_documents = len(vanished), len(changed)
    report.new_documents = len(fresh) - len(changed)
    report.unchanged_documents = len(plan.documents) - len(fresh)
    report.not_indexed_by_lightrag = sum(1 for d in plan.documents if not d.imported)
    new_chunks = [c for d in fresh if d.imported for c in d.chunks]
    progress_event(progress, "nlp", 0, len(new_chunks), f"spaCy mentions and sentences of {len(new_chunks)} chunks")
    nlp = _nlp(ws, new_chunks, {e.key for e in plan.entities})
    progress_event(progress, "nlp", len(new_chunks), len(new_chunks))
    ws.record_embedder()
    if vanished or changed:
        progress_event(progress, "delete", 0, len(vanished) + len(changed), "removing vanished and changed documents")
        writer.delete_documents(ws, vanished + changed)
    imported_docs = set(planned) | set(before)
    with writer.transaction(ws):
        for doc in fresh:
            writer.insert_document(ws, doc)
        writer.insert_chunks(ws, new_chunks, nlp)
        progress_event(progress, "write", 0, 1, "writing the graph")
        stored_e, stored_r = writer.stored_entities(ws), writer.stored_relations(ws)
        changed_e = [e for e in plan.entities if stored_e.get(e.key) != (e.name, e.type, e.description,
                                                                           e.source_chunk_ids, e.vector_id)]
        for entity in changed_e:
            writer.write_entity(ws, entity, plan.entity_fragments[entity.key], imported_docs)
        changed_r = [r for r in plan.relations if stored_r.get((r.source, r.target)) != (
            r.keywords, r.description, r.weight, r.source_chunk_ids, r.vector_id)]
        for relation in changed_r:
            writer.write_relation(ws, relation, plan.relation_fragments[(relation.source, relation.target)],
                                  imported_docs)
        gone_e = set(previous.get("entities", {}) if previous else {}) - {e.key for e in plan.entities}
        gone_r = {tuple(p) for p in (previous.get("relations", []) if previous else [])} - \
            {(r.source, r.target) for r in plan.relations}
        writer.drop_vanished(ws, gone_e, gone_r, imported_docs)
        report.entities_written, report.relations_written = len(changed_e), len(changed_r)
        report.entities_removed, report.relations_removed = len(gone_e), len(gone_r)
        progress_event(progress, "tree", 0, len(fresh), "summary tree")
        nodes = writer.build_tree(ws, [(d.doc_id, d.chunks) for d in fresh if d.imported])
        have = writer.graph_vector_ids(ws)
        embed_e = [e for e in plan.entities if e.vector_id not in have["entities"]]
        embed_r = [r for r in plan.relations if r.vector_id not in have["relations"]]
        per_chunk, vectors = _embed(ws, new_chunks, graph_texts(embed_e, embed_r, nodes), progress, report)
        writer.upsert_vectors(ws, new_chunks, per_chunk, embed_e, embed_r, nodes, vectors)
        writer.save_import(ws, _record(index, plan, source_model, report))
        writer.finish(ws, "lightrag_imported", {k: v for k, v in report.as_dict().items() if k != "ragscope"})
    writer.remove_orphan_vectors(ws)


def _record(index: LightRAGIndex, plan: ImportPlan, source_model: str, report: ImportReport) -> dict[str, Any]:
    return {"provenance": PROVENANCE, "source_model": source_model, "lightrag_version": LIGHTRAG_VERSION,
            "source": report.source, "lightrag_workspace": index.workspace, "imported_at": time.time(),
            "files": index.files, "vector_dims": index.vector_dims, "lightrag_counts": index.counts(),
            "documents": {d.doc_id: {"signature": d.signature(), "status": d.lightrag_status, "file_path": d.name}
                          for d in plan.documents},
            "entities": plan.lightrag_names,
            "relations": sorted([r.source, r.target] for r in plan.relations),
            "lightrag_chunk_tokens": plan.lightrag_tokens}


def provenance(ws: Workspace) -> Optional[dict[str, Any]]:
    """Where the workspace's graph came from ({provenance, source_model, source, imported_at, lightrag_counts}),
    or None for a workspace RAGScope indexed itself."""
    record = writer.previous_import(ws)
    if record is None:
        return None
    return {k: record.get(k) for k in ("provenance", "source_model", "source", "lightrag_workspace", "imported_at",
                                       "lightrag_version", "lightrag_counts")}
