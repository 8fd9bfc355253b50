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
from typing import Any, Iterable, Optional

import numpy as np

from core.embeddings import chunk_windows, embed_chunk_windows
import core.importers.lightrag.writer as writer
from core.importers.lightrag.mapping import ImportPlan, map_index
from core.importers.lightrag.reader import LightRAGIndex, read_index_isolated
from core.importers.lightrag.vectors import LightRAGImportError, ReusedVectors, adopt_reused_texts, reusable_vectors
from core.indexing.batch import progress_slices
from core.indexing.common import SpacyExtractor, progress_event
from core.indexing.vector_writes import graph_texts
from core.parsing.limits import ParseLimits
from core.types import Chunk, ChunkExtraction, ProgressCallback, no_progress
from core.workspace import Workspace

PROVENANCE = "imported from LightRAG"
LIGHTRAG_VERSION = "1.5.7"
PROBE_TEXTS = 32  # texts timed before embedding to say the expected time


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
    timings: dict[str, float] = field(default_factory=dict)  # seconds per step (read_map, nlp, write, embed…)
    ragscope: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def check_vector_reuse(ws: Workspace, index: LightRAGIndex, plan: Optional[ImportPlan] = None,
                       vectors_model: Optional[str] = None) -> ReusedVectors:
    """LightRAG's stored vectors when dimension, model and embedded text all match what RAGScope would embed
    (``core.importers.lightrag.vectors``), else ``LightRAGImportError`` naming every mismatch."""
    return reusable_vectors(index, plan if plan is not None else map_index(index), ws.embedder.name,
                            ws.embedder.dim, vectors_model, ws.settings.chunk_vector_windows)


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


def _embed(ws: Workspace, chunks: list[Chunk], graph: tuple[list, list, list], reused: Optional[ReusedVectors],
           progress: ProgressCallback, report: ImportReport) -> tuple[list[np.ndarray], Optional[np.ndarray]]:
    """Chunk vectors (windows when the setting says so) and the vectors of ``graph`` (entities, relations, tree
    nodes, in ``graph_texts`` order): LightRAG's own where ``reused`` has them, the rest embedded in slices."""
    windows = ws.settings.chunk_vector_windows
    reused = reused or ReusedVectors()
    entities, relations, nodes = graph
    known: list[Optional[np.ndarray]] = ([reused.entities.get(e.key) for e in entities] +
                                         [reused.relations.get((r.source, r.target)) for r in relations] +
                                         [None] * len(nodes))
    texts = [t for t, v in zip(graph_texts(entities, relations, nodes), known) if v is None]
    to_embed = [c for c in chunks if c.chunk_id not in reused.chunks]
    all_texts = [c.text for c in to_embed] + texts
    tokens, expected = _estimate(ws, all_texts)
    report.expected_embed_s = expected
    total = len(all_texts)
    when = f"about {expected:.0f} s at this machine's current speed" if expected else \
        "time depends on the embeddings server"
    kept = sum(reused.counts().values())
    progress_event(progress, "embed", 0, total, f"re-embedding {total} texts ({tokens} tokens) with "
                                                f"{ws.embedder.name}: {when}" +
                   (f"; {kept} of LightRAG's vectors reused" if kept else ""))
    started = time.perf_counter()
    fresh: dict[str, np.ndarray] = {}
    for start, end in progress_slices(len(to_embed)):
        part = to_embed[start:end]
        fresh.update(zip((c.chunk_id for c in part), embed_chunk_windows(ws.embedder, [c.text for c in part], windows)))
        progress_event(progress, "embed", end, total, _eta(started, end, total))
    per_chunk = [fresh[c.chunk_id] if c.chunk_id in fresh else reused.chunks[c.chunk_id][None, :] for c in chunks]
    parts = []
    for start, end in progress_slices(len(texts)):
        parts.append(ws.embedder.embed(texts[start:end]))
        progress_event(progress, "embed", len(to_embed) + end, total, _eta(started, len(to_embed) + end, total))
    embedded = iter(np.concatenate(parts) if parts else [])
    rows = [v if v is not None else next(embedded) for v in known]
    report.embedded = {"texts": total, "tokens": tokens, "seconds": round(time.perf_counter() - started, 2),
                       "reused": kept}
    return per_chunk, (np.stack(rows).astype(np.float32) if rows else None)


def _eta(started: float, done: int, total: int) -> str:
    elapsed = time.perf_counter() - started
    left = elapsed / done * (total - done) if done else 0.0
    return f"{done}/{total} embedded, about {left:.0f} s left"


def import_lightrag(ws: Workspace, directory: Path | str, source_model: Optional[str] = None,
                    lightrag_workspace: Optional[str] = None, progress: ProgressCallback = no_progress,
                    reuse_vectors: bool = False, wait: bool = False,
                    vectors_model: Optional[str] = None) -> ImportReport:
    """Import (or re-import: only the difference is applied) a LightRAG working directory into ``ws``.
    ``reuse_vectors``: use LightRAG's stored vectors instead of re-embedding, refused unless dimension, model
    (``vectors_model``: LightRAG does not record it) and embedded text match (``vectors.py``)."""
    started = time.perf_counter()
    report = ImportReport(source=str(Path(directory).resolve()))
    progress_event(progress, "read", 0, 1, f"reading {directory}")
    index = read_index_isolated(directory, lightrag_workspace, ParseLimits.from_settings(ws.settings))  # worker limits
    report.lightrag_workspace, report.lightrag = index.workspace, index.counts()
    plan = map_index(index)
    reused = check_vector_reuse(ws, index, plan, vectors_model) if reuse_vectors else None
    if reused is not None:
        adopt_reused_texts(plan, reused)
    report.timings["read_map"] = round(time.perf_counter() - started, 2)
    progress_event(progress, "read", 1, 1, "read {documents} documents, {chunks} chunks, {entities} entities, "
                                           "{relations} relations".format(**report.lightrag))
    with ws.writer(wait=wait):
        _apply(ws, index, plan, source_model or "unknown", progress, report, reused)
    report.ragscope = writer.counts(ws)
    report.seconds = round(time.perf_counter() - started, 2)
    progress_event(progress, "import", 1, 1, "done")
    return report


class _Clock:
    """Seconds per import step into ``report.timings`` (``lap(name)`` ends the step running since the last lap)."""

    def __init__(self, report: ImportReport) -> None:
        self.report, self.last = report, time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.report.timings[name] = round(self.report.timings.get(name, 0.0) + now - self.last, 2)
        self.last = now


def _apply(ws: Workspace, index: LightRAGIndex, plan: ImportPlan, source_model: str, progress: ProgressCallback,
           report: ImportReport, reused: Optional[ReusedVectors] = None) -> None:
    clock = _Clock(report)
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
    for chunk in new_chunks:  # before the chunk rows are written: the row says how many window vectors it has
        chunk.windows = len(chunk_windows(chunk.text)) if ws.settings.chunk_vector_windows else 1
    progress_event(progress, "nlp", 0, len(new_chunks), f"spaCy mentions and sentences of {len(new_chunks)} chunks")
    nlp = _nlp(ws, new_chunks, {e.key for e in plan.entities})
    progress_event(progress, "nlp", len(new_chunks), len(new_chunks))
    clock.lap("nlp")
    ws.record_embedder()  # loads a local model the first time
    clock.lap("embedder_load")
    if vanished or changed:
        progress_event(progress, "delete", 0, len(vanished) + len(changed), "removing vanished and changed documents")
        writer.delete_documents(ws, vanished + changed)
    clock.lap("delete")
    with writer.transaction(ws):
        for doc in fresh:
            writer.insert_document(ws, doc)
        writer.insert_chunks(ws, new_chunks, nlp)
        progress_event(progress, "write", 0, 1, "writing the graph")
        stored_e, stored_r = writer.stored_entities(ws), writer.stored_relations(ws)
        changed_e = [e for e in plan.entities if stored_e.get(e.key) != (e.name, e.type, e.description,
                                                                           e.source_chunk_ids, e.vector_id)]
        writer.write_entities(ws, changed_e, plan.entity_fragments)
        changed_r = [r for r in plan.relations if stored_r.get((r.source, r.target)) != (
            r.keywords, r.description, r.weight, r.source_chunk_ids, r.vector_id)]
        writer.write_relations(ws, changed_r, plan.relation_fragments)
        gone_e = set(previous.get("entities", {}) if previous else {}) - {e.key for e in plan.entities}
        gone_r = {tuple(p) for p in (previous.get("relations", []) if previous else [])} - \
            {(r.source, r.target) for r in plan.relations}
        writer.drop_vanished(ws, gone_e, gone_r)
        report.entities_written, report.relations_written = len(changed_e), len(changed_r)
        report.entities_removed, report.relations_removed = len(gone_e), len(gone_r)
        clock.lap("write")
        progress_event(progress, "tree", 0, len(fresh), "summary tree")
        nodes = writer.build_tree(ws, [(d.doc_id, d.chunks) for d in fresh if d.imported])
        clock.lap("tree")
        have = writer.graph_vector_ids(ws)
        embed_e = [e for e in plan.entities if e.vector_id not in have["entities"]]
        embed_r = [r for r in plan.relations if r.vector_id not in have["relations"]]
        per_chunk, vectors = _embed(ws, new_chunks, (embed_e, embed_r, nodes), reused, progress, report)
        clock.lap("embed")
        writer.upsert_vectors(ws, new_chunks, per_chunk, embed_e, embed_r, nodes, vectors)
        clock.lap("vector_upsert")
        writer.save_import(ws, _record(index, plan, source_model, report))
        writer.finish(ws, "lightrag_imported", {k: v for k, v in report.as_dict().items() if k != "ragscope"})
    clock.lap("commit")
    writer.remove_orphan_vectors(ws)
    clock.lap("orphans")


def _record(index: LightRAGIndex, plan: ImportPlan, source_model: str, report: ImportReport) -> dict[str, Any]:
    return {"provenance": PROVENANCE, "source_model": source_model, "lightrag_version": LIGHTRAG_VERSION,
            "source": report.source, "lightrag_workspace": index.workspace, "imported_at": time.time(),
            "files": index.files, "vector_dims": index.vector_dims, "lightrag_counts": index.counts(),
            "documents": {d.doc_id: {"signature": d.signature(), "status": d.lightrag_status, "file_path": d.name}
                          for d in plan.documents},
            "entities": plan.lightrag_names,
            "relations": sorted([r.source, r.target] for r in plan.relations),
            "lightrag_chunk_tokens": plan.lightrag_tokens}


def provenance(ws: Workspace, origins: bool = False) -> Optional[dict[str, Any]]:
    """Where the workspace's graph came from ({provenance, source_model, source, imported_at, lightrag_counts}),
    or None for a workspace RAGScope indexed itself. ``origins``: also the parts by origin ("origins":
    documents and chunks imported / added by RAGScope's own indexing, entities and relations imported / added /
    both)."""
    record = writer.previous_import(ws)
    if record is None:
        return None
    out = {k: record.get(k) for k in ("provenance", "source_model", "source", "lightrag_workspace", "imported_at",
                                      "lightrag_version", "lightrag_counts")}
    if origins:
        out["origins"] = writer.origin_counts(ws)
    return out


def part_origins(ws: Workspace, entity_keys: Iterable[str] = (), relation_keys: Iterable[tuple[str, str]] = ()
                 ) -> dict[Any, str]:
    """"imported", "added" (by RAGScope's own indexing after the import) or "both", per entity key and
    (source, target) relation key of an imported workspace; {} for a workspace RAGScope indexed itself."""
    if writer.previous_import(ws) is None:
        return {}
    return writer.origins(ws, entity_keys, relation_keys)
