"""Re-embed a workspace with another embedder (``python -m core repair --reembed``).

Vectors are derived data: every chunk, entity, relation and tree node is embedded again from the
texts SQLite holds, into a new set of Chroma collections; only when all of them are filled does the
workspace switch to them (and record the new embedder's name and dimension) in one commit, and the old
collections are dropped. An interrupted re-embedding (a failed server, Ctrl-C) leaves the workspace on
its old embedder and vectors; running the command again continues where it stopped.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from core.indexing.reconcile import reconcile
from core.settings import Settings, read_settings
from core.workspace import Workspace, new_namespace


def build_embedder(settings: Settings, api_key: Optional[str] = None) -> Any:
    """The embedder ``settings`` select, with no expectation about its dimension."""
    if settings.embedder == "openai":
        from core.remote_embeddings import remote_embedder

        return remote_embedder(settings, api_key)
    if settings.embedder == "local-minilm-int8":
        from core.onnx_embeddings import int8_embedder

        return int8_embedder(settings.embedding_batch_size)
    from core.embeddings import local_embedder

    return local_embedder(settings.embedding_batch_size)


def reembed(path: Path | str, settings: Settings, wait: bool = False, api_key: Optional[str] = None
            ) -> dict[str, Any]:
    """Embed every vector of the workspace at ``path`` with the embedder of ``settings`` and switch to it.
    Returns {from, to, dimension, vectors: {collection: count}}."""
    embedder = build_embedder(settings, api_key)
    ws = Workspace(path, settings=settings, embedder=embedder, check_embedder=False)
    try:
        with ws.writer(wait=wait):
            store = ws.records
            old_name, old_namespace = store.get_meta("embedder_name"), store.get_meta("namespace")
            target = store.get_meta("reembed_namespace")
            if not target or store.get_meta("reembed_embedder") != embedder.name:
                target = new_namespace(ws.name)  # a fresh start (or another embedder than last time)
                store.set_meta("reembed_namespace", target)
                store.set_meta("reembed_embedder", embedder.name)
                store.commit()
            ws.use_namespace(target)
            reconcile(ws)  # the new collections get every vector that is missing from them
            counts = {c: ws.vectors.count(c) for c in ("chunks", "entities", "relations", "tree")}
            with store.unit_of_work():
                store.set_meta("namespace", target)
                store.set_meta("embedder_name", embedder.name)
                store.set_meta("embedder_dim", str(embedder.dim))
                store.delete_meta("reembed_namespace", "reembed_embedder")
                store.log("reembedded", {"from": old_name, "to": embedder.name, "vectors": counts})
                ws.bump_generation()
            saved = read_settings(ws.path)
            if settings.embedder != "openai" and (saved.embedder != settings.embedder
                                                  or "embedder" not in saved.model_fields_set):
                # a local model is chosen by the settings file alone: name it there, with the vectors it built
                ws.save_settings(saved.with_overrides({"embedder": settings.embedder}))
            if old_namespace and old_namespace != target:
                ws.backend.open_vectors(old_namespace).drop_all()
        return {"from": old_name or None, "to": embedder.name, "dimension": embedder.dim, "vectors": counts}
    finally:
        ws.close()
