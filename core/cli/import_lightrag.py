"""``python -m core import-lightrag DIR``: open a LightRAG working directory as a RAGScope workspace (or
re-import it: only what LightRAG inserted, changed or deleted since is applied). See docs/lightrag-import.md."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from core.cli.base import add_embedding_flags, emit_json, open_workspace
from core.types import ProgressEvent


class _Progress:
    """One line per step change on stderr (and the embedding estimate/ETA as it moves)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.last = ""

    def __call__(self, event: ProgressEvent) -> None:
        if not self.enabled or not event.message or event.message == self.last:
            return
        self.last = event.message
        print(f"{event.step}: {event.message}", file=sys.stderr)


def cmd_import_lightrag(args: argparse.Namespace) -> int:
    from core.api import import_lightrag
    from core.auth import LOCAL_ADMIN

    ws = open_workspace(args)
    try:
        report = import_lightrag(LOCAL_ADMIN, ws, args.directory, source_model=args.source_model,
                                 lightrag_workspace=args.lightrag_workspace, progress=_Progress(not args.quiet),
                                 reuse_vectors=args.reuse_vectors, vectors_model=args.vectors_model, wait=args.wait)
    finally:
        ws.close()
    if args.json:
        emit_json(report.as_dict())
    lr, rs = report.lightrag, report.ragscope
    print(f"imported from LightRAG ({report.source}): {report.new_documents} new, {report.replaced_documents} "
          f"replaced, {report.deleted_documents} deleted, {report.unchanged_documents} unchanged document(s); "
          f"{report.entities_written} entities and {report.relations_written} relations written; in "
          f"{report.seconds:.1f}s (" + ", ".join(f"{k} {v:.1f}s" for k, v in report.timings.items()) + ")",
          file=sys.stderr)
    print(f"LightRAG: {lr['documents']} documents, {lr['chunks']} chunks, {lr['entities']} entities, "
          f"{lr['relations']} relations | workspace: {rs['documents']} documents, {rs['chunks']} chunks, "
          f"{rs['entities']} entities, {rs['relations']} relations, {rs['mention_nodes']} mention nodes, "
          f"{rs['tree_nodes']} summary nodes", file=sys.stderr)
    return 0


def add_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register ``import-lightrag``."""
    p = sub.add_parser("import-lightrag", parents=[common],
                       help="import a LightRAG working directory (lightrag-hku 1.5.7 file storages)")
    p.add_argument("directory", help="the LightRAG working_dir (or its per-workspace subfolder)")
    p.add_argument("--source-model", default=None,
                   help="the LLM that built the LightRAG index (recorded as provenance; default: unknown)")
    p.add_argument("--lightrag-workspace", default=None,
                   help="LightRAG workspace subfolder to read when the directory holds several")
    p.add_argument("--reuse-vectors", "--reuse-lightrag-vectors", dest="reuse_vectors", action="store_true",
                   help="reuse LightRAG's stored vectors instead of re-embedding (refused unless their dimension, "
                        "the model named by --vectors-model and every embedded text match what the workspace "
                        "embedder would embed; docs/lightrag-import.md)")
    p.add_argument("--vectors-model", default=None,
                   help="the embedding model that wrote LightRAG's vectors (its files do not record it)")
    add_embedding_flags(p)
    p.set_defaults(run=cmd_import_lightrag)
