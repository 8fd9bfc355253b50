"""Re-type a workspace's entities with the current typing rule, without re-indexing
(``python -m core repair --types``).

An entity's type is derived at every merge from what its stored fragments hold — the mentions' labels
and the name (``core.indexing.profiles.vote_type``) — so a workspace merged under an older rule keeps
its old types until each entity is merged again. This recomputes every entity's type from the same
fragments and writes only the type column: names, descriptions, sources and vectors are untouched
(types are not embedded). An entity named in an active hand edit (``core.editing``) keeps its type:
a hand retype, merge or rename wins over the rule. Running it twice changes nothing the second time.
"""
from __future__ import annotations

from typing import Any, Iterable

from core.extraction.names import normalize_name
from core.indexing.profiles import fragment_type
from core.storage.records import GraphEdit
from core.workspace import Workspace


def _edited_keys(edits: Iterable[GraphEdit]) -> set[str]:
    """Entity keys an active edit names (any string or list of strings among its arguments)."""
    keys: set[str] = set()
    for edit in edits:
        for value in edit.args.values():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item.strip():
                    keys.add(normalize_name(item))
    return keys


def retype_entities(ws: Workspace, wait: bool = False) -> dict[str, Any]:
    """Recompute every entity's type from its stored fragments; write the changed ones in one
    transaction. Returns the counts and each change as ``{"name", "from", "to"}`` (sorted by name)."""
    with ws.writer(wait=wait):
        records = ws.records
        names = records.entity_names()
        kept = _edited_keys(records.graph_edits(include_undone=False)) & set(names)
        keys = sorted(k for k in names if k not in kept)
        rows = records.entity_rows(keys)
        fragments = records.entity_fragments(keys)
        changes: list[dict[str, str]] = []
        with records.unit_of_work():
            for key in keys:
                row, parts = rows.get(key), fragments.get(key)
                if row is None or not parts:
                    continue
                etype = fragment_type(parts)
                if etype == row["type"]:
                    continue
                records.write_entity(key, row["name"], etype, row["description"], row["source_chunk_ids"],
                                     row["vector_id"], row["aliases"])
                changes.append({"name": row["name"], "from": row["type"], "to": etype})
            if changes:
                ws.bump_generation()
    return {"entities": len(names), "retyped": len(changes), "kept_by_hand_edits": len(kept),
            "changes": sorted(changes, key=lambda c: c["name"])}
