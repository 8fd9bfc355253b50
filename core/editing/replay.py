"""Applying hand edits of the knowledge graph to the merged rows, in the caller's unit of work.

Each edit names its target by identity (entity names, compared by their normalised key, so case and
spacing do not matter) and says the state it asks for (``core.editing.ops`` lists the operations and
their arguments). Applying an edit is idempotent, and a merge or a rename is recomputed from the
source entities' fragments as well as their rows, so the same log applied after any re-merge of the
fragments (incremental index, delete, re-add, repair, LightRAG re-import: every path goes through
``core.indexing.remerge.merge_touched``, which calls ``replay_active``) gives the same graph.

What an edit touches: the merged ``entities`` and ``relations`` rows and their vectors. It does not
touch the fragments (the extraction's record, kept so that undo can rebuild), the E2GraphRAG mention
graph (its nodes are the surface terms of the text, not entities) nor the summary tree (built from the
chunks' text).

This module sits in the indexing layer (``merge_touched`` replays through it); the edit log, undo,
export and import are in ``core.editing.log`` above it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from core.errors import RAGScopeError
from core.extraction.names import normalize_name
from core.indexing.profiles import (MergedEntity, MergedRelation, entity_vector_id, entity_vector_text,
                                    merge_entity, merge_relation, relation_vector_id, relation_vector_text)
from core.settings import Settings
from core.storage.ports import RecordStore
from core.storage.records import GraphEdit, Pair, node_pair

OPS = ("merge", "rename", "retype", "describe", "delete_entity", "delete_relation", "relate")


class EditError(RAGScopeError, ValueError):
    """An edit that cannot be made (unknown entity, bad argument); the message says why."""


def key_of(name: str) -> str:
    key = normalize_name(str(name or ""))
    if not key:
        raise EditError(f"{name!r} is not an entity name")
    return key


def _join(base: str, extra: str) -> str:
    extra = (extra or "").strip()
    if not extra or extra in (base or ""):
        return base or ""
    return f"{base.strip()}\n{extra}" if (base or "").strip() else extra


@dataclass
class GraphEditor:
    """Applies edits to one store; remembers each touched row's vector id as it was first seen, so
    ``vector_changes`` can say which vectors to embed and which to delete."""

    records: RecordStore
    settings: Settings
    old_entity_vectors: dict[str, Optional[str]] = field(default_factory=dict)
    old_relation_vectors: dict[Pair, Optional[str]] = field(default_factory=dict)
    skipped: list[tuple[int, str]] = field(default_factory=list)
    replaying: bool = False  # a replay folds a renamed entity into the new name's entity a re-merge made
    owner: dict[str, str] = field(default_factory=dict)  # fragment key -> the entity it was merged into

    # --- reads and writes that remember what they touched ------------------------------------
    def entity(self, key: str) -> Optional[dict[str, Any]]:
        row = self.records.entity_rows([key]).get(key)
        self.old_entity_vectors.setdefault(key, row["vector_id"] if row else None)
        return row

    def relation(self, pair: Pair) -> Optional[dict[str, Any]]:
        row = self.records.relation_row(pair)
        self.old_relation_vectors.setdefault(pair, row["vector_id"] if row else None)
        return row

    def write_entity(self, key: str, row: dict[str, Any]) -> None:
        self.entity(key)
        aliases = [a for a in dict.fromkeys(row["aliases"]) if a != row["name"]]
        embedded = [a for a in aliases if normalize_name(a) != key]
        text = entity_vector_text(row["name"], row["description"], embedded)
        self.records.write_entity(key, row["name"], row["type"], row["description"], list(row["source_chunk_ids"]),
                                  entity_vector_id(key, text), aliases)

    def delete_entity(self, key: str) -> None:
        self.entity(key)
        self.records.delete_entity(key)

    def write_relation(self, pair: Pair, row: dict[str, Any]) -> None:
        self.relation(pair)
        names = {key: (found or {}).get("name", key) for key, found in self.records.entity_rows(pair).items()}
        text = relation_vector_text(row["keywords"], names.get(pair[0], pair[0]), names.get(pair[1], pair[1]),
                                    row["description"])
        self.records.write_relation(pair, list(row["keywords"]), row["description"], float(row["weight"]),
                                    list(row["source_chunk_ids"]), relation_vector_id(pair[0], pair[1], text))

    def delete_relation(self, pair: Pair) -> None:
        self.relation(pair)
        self.records.delete_relation(pair)

    def touching(self, key: str) -> set[Pair]:
        return set(self.records.relations_touching(key))

    # --- the operations -------------------------------------------------------------------------
    def apply(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        """Apply one edit; a summary of what it changed (counts). Raises ``EditError`` when its target
        does not exist."""
        handler = getattr(self, f"_op_{op}", None)
        if op not in OPS or handler is None:
            raise EditError(f"unknown edit {op!r} (one of {', '.join(OPS)})")
        return dict(handler(args))

    def learn(self, edits: list[GraphEdit]) -> None:
        """Which keys the active merges and renames of ``edits`` folded into which entity (no writes)."""
        for edit in edits:
            if edit.undone or edit.op not in ("merge", "rename"):
                continue
            into, names = ((edit.args.get("into", ""), edit.args.get("names", [])) if edit.op == "merge"
                           else (edit.args.get("to", ""), [edit.args.get("name", "")]))
            try:
                target = self.owner.get(key_of(into), key_of(into))
                sources = [self.owner.get(key_of(n), key_of(n)) for n in names]
            except EditError:
                continue
            for source in sources:
                if source != target:
                    for member in self.members(source):
                        self.owner[member] = target

    def _existing(self, name: str) -> tuple[str, dict[str, Any]]:
        key = self.owner.get(key_of(name), key_of(name))
        row = self.entity(key)
        if row is None:
            raise EditError(f"no entity named {name!r}")
        return key, row

    def members(self, key: str) -> list[str]:
        """The fragment keys whose extraction feeds entity ``key``: its own and those merged into it."""
        return [key] + sorted(k for k, owner in self.owner.items() if owner == key and k != key)

    def _profile(self, key: str, base: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
        """Entity ``key`` merged from the fragments of all its members (name and type kept from ``base``,
        the row as it stands, when there is one); None when nothing feeds it."""
        by_key = self.records.entity_fragments(self.members(key))
        fragments = [f for k in self.members(key) for f in by_key.get(k, [])]
        if not fragments:
            return None
        merged = merge_entity(key, fragments, self.settings)
        name = base["name"] if base else merged.name
        aliases = list(dict.fromkeys(merged.aliases + [f.name for f in fragments] + (base or {}).get("aliases", [])))
        return {"name": name, "type": base["type"] if base else merged.type, "description": merged.description,
                "source_chunk_ids": merged.source_chunk_ids, "aliases": [a for a in aliases if a != name]}

    def _op_merge(self, args: dict[str, Any]) -> dict[str, Any]:
        target_name = " ".join(str(args.get("into", "")).split())
        target = self.owner.get(key_of(target_name), key_of(target_name))
        sources = [k for k in dict.fromkeys(self.owner.get(key_of(n), key_of(n)) for n in args.get("names", []))
                   if k != target]
        base = self.entity(target)
        if base is None and not args.get("create") and not self.records.entity_fragments([target]).get(target):
            raise EditError(f"no entity named {target_name!r}")
        rows = {key: self.entity(key) for key in sources}
        present = [k for k in sources if rows[k] is not None or self.records.entity_fragments([k]).get(k)]
        if not present:
            return {"merged": 0, "relations": 0, "dropped_self_loops": 0}
        if base is None and args.get("create") and present:  # a rename: the renamed entity's row, new name
            base = dict(rows[present[0]] or {}, name=target_name) if rows[present[0]] else None
        for key in present:
            for member in self.members(key):
                self.owner[member] = target
        profile = self._profile(target, base) or dict(base or {}, aliases=list((base or {}).get("aliases", [])))
        if args.get("create"):
            profile["name"] = target_name
        for key in present:  # rows a previous edit made (no fragments) still give their aliases and sources
            row = rows[key]
            if row is not None:
                profile["aliases"] = list(dict.fromkeys(profile["aliases"] + row["aliases"] + [row["name"]]))
                profile["source_chunk_ids"] = list(dict.fromkeys(profile["source_chunk_ids"] + row["source_chunk_ids"]))
        profile["aliases"] = [a for a in profile["aliases"] if a != profile["name"]]
        for key in present:
            self.delete_entity(key)
        self.write_entity(target, profile)
        moved, loops = self._move_relations(set(present), target)
        return {"merged": len(present), "relations": moved, "dropped_self_loops": loops}

    def _move_relations(self, sources: set[str], target: str) -> tuple[int, int]:
        """Re-key every relation of ``sources`` onto ``target`` and re-merge the target's relations from
        the fragments of all members: self-loops dropped, parallel relations merged (keywords and
        sources united, weights summed); a relation an edit made (no fragment) keeps its row."""
        members = self.members(target)
        old_pairs = set(self.records.fragment_pairs_touching(members))
        for key in set(members) | sources:
            old_pairs |= self.touching(key)
        groups: dict[Pair, set[Pair]] = {}
        loops = 0
        for pair in sorted(old_pairs):
            a, b = (self.owner.get(k, k) for k in pair)
            if a == b:
                loops += pair[0] in sources or pair[1] in sources
                self.delete_relation(pair)
                continue
            groups.setdefault(node_pair(a, b), set()).add(pair)
        names = self.records.entity_names()
        for new, pairs in sorted(groups.items()):
            pairs.add(new)
            rows = {pair: self.relation(pair) for pair in sorted(pairs)}
            for pair in pairs - {new}:
                if rows[pair] is not None:
                    self.delete_relation(pair)
            if len(self.records.entity_rows(new)) < 2:  # an endpoint deleted by an earlier edit
                self.delete_relation(new)
                continue
            by_pair = self.records.relation_fragments(sorted(pairs))
            fragments = [f for pair in sorted(pairs, key=lambda p: (p != new, p)) for f in by_pair.get(pair, [])]
            if fragments:
                merged = merge_relation(new, fragments, names, self.settings)
                row = {"keywords": merged.keywords, "description": merged.description, "weight": merged.weight,
                       "source_chunk_ids": merged.source_chunk_ids}
            else:
                made = [r for r in rows.values() if r is not None]
                if not made:
                    continue
                row = dict(made[0], weight=max(float(r["weight"]) for r in made))
            self.write_relation(new, row)
        return len(groups), loops
    def _op_rename(self, args: dict[str, Any]) -> dict[str, Any]:
        key, row = self._existing(str(args.get("name", "")))
        new_name = " ".join(str(args.get("to", "")).split())
        new_key = key_of(new_name)
        if new_key == key:
            if row["name"] != new_name:
                aliases = list(dict.fromkeys(row["aliases"] + [row["name"]]))
                self.write_entity(key, dict(row, name=new_name, aliases=aliases))
                for pair in self.touching(key):
                    found = self.relation(pair)
                    if found is not None:
                        self.write_relation(pair, found)
            return {"renamed": 1, "relations": len(self.touching(key))}
        if self.entity(new_key) is not None and not self.replaying:
            raise EditError(f"an entity named {new_name!r} exists: merge the two instead")
        summary = self._op_merge({"names": [row["name"]], "into": new_name, "create": True})
        return {"renamed": 1, "relations": summary["relations"]}

    def _op_retype(self, args: dict[str, Any]) -> dict[str, Any]:
        key, row = self._existing(str(args.get("name", "")))
        etype = str(args.get("type", "")).strip()
        if row["type"] != etype:
            self.write_entity(key, dict(row, type=etype))
        return {"retyped": 1}

    def _op_describe(self, args: dict[str, Any]) -> dict[str, Any]:
        key, row = self._existing(str(args.get("name", "")))
        description = str(args.get("description", "")).strip()
        if row["description"] != description:
            self.write_entity(key, dict(row, description=description))
        return {"described": 1}

    def _op_delete_entity(self, args: dict[str, Any]) -> dict[str, Any]:
        key, _ = self._existing(str(args.get("name", "")))
        pairs = self.touching(key)
        for pair in pairs:
            self.delete_relation(pair)
        self.delete_entity(key)
        return {"deleted": 1, "relations": len(pairs)}

    def _pair(self, args: dict[str, Any]) -> Pair:
        a, _ = self._existing(str(args.get("source", "")))
        b, _ = self._existing(str(args.get("target", "")))
        if a == b:
            raise EditError("a relation needs two different entities")
        return node_pair(a, b)

    def _op_delete_relation(self, args: dict[str, Any]) -> dict[str, Any]:
        pair = self._pair(args)
        if self.relation(pair) is None:
            raise EditError(f"no relation between {args.get('source')!r} and {args.get('target')!r}")
        self.delete_relation(pair)
        return {"deleted": 1}

    def _op_relate(self, args: dict[str, Any]) -> dict[str, Any]:
        pair = self._pair(args)
        description = str(args.get("description", "")).strip()
        keywords = [str(k).strip() for k in args.get("keywords", []) if str(k).strip()]
        chunk = str(args.get("chunk_id", "") or "")
        row = self.relation(pair) or {"keywords": [], "description": "", "weight": 1.0, "source_chunk_ids": []}
        new = dict(row, keywords=list(dict.fromkeys(row["keywords"] + keywords)),
                   description=_join(row["description"], description),
                   source_chunk_ids=list(dict.fromkeys(row["source_chunk_ids"] + ([chunk] if chunk else []))))
        if new != row or self.records.relation_row(pair) is None:
            self.write_relation(pair, new)
        return {"related": 1}

    # --- what changed ---------------------------------------------------------------------------
    def vector_changes(self) -> tuple[list[MergedEntity], list[MergedRelation], list[str]]:
        """(entities to embed, relations to embed, vector ids to delete) for every touched row."""
        entities: list[MergedEntity] = []
        relations: list[MergedRelation] = []
        removed: list[str] = []
        rows = self.records.entity_rows(self.old_entity_vectors)
        for key, old in sorted(self.old_entity_vectors.items()):
            row = rows.get(key)
            if row is not None and row["vector_id"] != old:
                embedded = [a for a in row["aliases"] if normalize_name(a) != key]
                entities.append(MergedEntity(key, row["name"], row["type"], row["description"],
                                             row["source_chunk_ids"],
                                             entity_vector_text(row["name"], row["description"], embedded),
                                             row["vector_id"], row["aliases"]))
            if old and (row is None or row["vector_id"] != old):
                removed.append(old)
        names = self.records.entity_names()
        for pair, old in sorted(self.old_relation_vectors.items()):
            found = self.records.relation_row(pair)
            if found is not None and found["vector_id"] != old:
                text = relation_vector_text(found["keywords"], names.get(pair[0], pair[0]),
                                            names.get(pair[1], pair[1]), found["description"])
                relations.append(MergedRelation(pair[0], pair[1], found["keywords"], found["description"],
                                                found["weight"], found["source_chunk_ids"], text, found["vector_id"]))
            if old and (found is None or found["vector_id"] != old):
                removed.append(old)
        return entities, relations, removed


def replay(editor: GraphEditor, edits: list[GraphEdit]) -> None:
    """Apply the edits in order; an edit whose target no longer exists is recorded in
    ``editor.skipped`` (id, reason), not raised."""
    for edit in edits:
        if edit.undone:
            continue
        try:
            editor.apply(edit.op, edit.args)
        except EditError as exc:
            editor.skipped.append((edit.id, str(exc)))


def replay_active(records: RecordStore, settings: Settings, entities: list[MergedEntity],
                  relations: list[MergedRelation], removed: list[str]
                  ) -> tuple[list[MergedEntity], list[MergedRelation], list[str]]:
    """After a re-merge (``merge_touched``): apply the workspace's edit log again and fold its vector
    changes into the re-merge's (the lists it returns); unchanged when the log is empty."""
    edits = records.graph_edits(include_undone=False)
    if not edits:
        return entities, relations, removed
    editor = GraphEditor(records, settings, replaying=True)
    replay(editor, edits)
    more_e, more_r, gone = editor.vector_changes()
    stale = set(gone)  # the re-merge's own vectors an edit replaced or deleted
    entities = [e for e in entities if e.vector_id not in stale] + more_e
    relations = [r for r in relations if r.vector_id not in stale] + more_r
    live = {e.vector_id for e in entities} | {r.vector_id for r in relations}
    removed = [v for v in dict.fromkeys(removed + gone) if v not in live]
    return entities, relations, removed
