"""The graph edit log: make an edit (validated, under the writer lock, one unit of work, the touched
vectors re-embedded), list the log, undo an edit, export and import the log as JSON.

Every edit is one row of ``graph_edits`` (who, when, the operation, its arguments, a summary of what
it changed). ``core.indexing.remerge.merge_touched`` applies the active log again after every re-merge
(``core.editing.replay``), so edits survive re-indexing. Undo marks the edit undone, re-merges every
entity and relation any edit of the log named from their fragments and replays the other edits: the
graph is the one the log without that edit gives.

The store commits the rows first-hand; the touched vectors are upserted inside the unit of work and the
replaced ones deleted after it commits. A crash between the two leaves vectors the rows do not name (or
rows whose vector is missing): ``repair`` reconciles them, as after an interrupted indexing batch.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from core.editing.replay import OPS, EditError, GraphEditor, key_of
from core.indexing.remerge import merge_touched
from core.indexing.vector_writes import delete_vectors, upsert_graph_vectors
from core.storage.records import GraphEdit, Pair
from core.workspace import Workspace

MAX_NAME_CHARS = 300
MAX_TEXT_CHARS = 4000
MAX_NAMES = 50
MAX_EXPORT_BYTES = 2_000_000
MAX_IMPORT_EDITS = 5000
FORMAT = "ragscope-graph-edits"

# the arguments of each operation: name -> kind ("name", "names", "text", "keywords", "flag")
ARGS: dict[str, dict[str, str]] = {
    "merge": {"names": "names", "into": "name"},
    "rename": {"name": "name", "to": "name"},
    "retype": {"name": "name", "type": "name"},
    "describe": {"name": "name", "description": "text"},
    "delete_entity": {"name": "name"},
    "delete_relation": {"source": "name", "target": "name"},
    "relate": {"source": "name", "target": "name", "description": "text", "keywords": "keywords",
               "chunk_id": "name"},
}
# what each required argument is, for the message naming a missing one ("rename needs to" read as a cut sentence)
MEANING = {"names": "the entities to merge", "into": "the entity they merge into", "name": "the entity",
           "to": "the new name", "type": "the new type", "source": "the first entity", "target": "the second entity"}
REQUIRED = {"merge": ("names", "into"), "rename": ("name", "to"), "retype": ("name", "type"),
            "describe": ("name",), "delete_entity": ("name",), "delete_relation": ("source", "target"),
            "relate": ("source", "target")}


@dataclass
class EditResult:
    """What one edit did: its log id and a summary of the change (counts), with the vectors it wrote."""

    edit_id: int
    op: str
    summary: dict[str, Any]
    embedded: int = 0
    deleted_vectors: int = 0


@dataclass
class ImportReport:
    applied: list[int] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (position in the file, reason)


def _text(value: Any, limit: int, what: str) -> str:
    text = " ".join(str(value if value is not None else "").split()) if limit == MAX_NAME_CHARS else str(value or "").strip()
    if len(text) > limit:
        raise EditError(f"{what} is longer than {limit} characters")
    return text


def clean_args(op: str, args: dict[str, Any]) -> dict[str, Any]:
    """The edit's arguments checked and normalised (strings trimmed and capped); raises ``EditError``."""
    if op not in OPS:
        raise EditError(f"unknown edit {op!r} (one of {', '.join(OPS)})")
    if not isinstance(args, dict):
        raise EditError("an edit's arguments are an object")
    spec = ARGS[op]
    unknown = sorted(set(args) - set(spec))
    if unknown:
        raise EditError(f"unknown argument(s) for {op}: {', '.join(map(str, unknown))}")
    out: dict[str, Any] = {}
    for name, kind in spec.items():
        if name not in args:
            continue
        value = args[name]
        if kind in ("names", "keywords"):
            if not isinstance(value, (list, tuple)) or len(value) > MAX_NAMES:
                raise EditError(f"{name} is a list of at most {MAX_NAMES} strings")
            out[name] = [_text(v, MAX_NAME_CHARS, name) for v in value if _text(v, MAX_NAME_CHARS, name)]
        elif kind == "text":
            out[name] = _text(value, MAX_TEXT_CHARS, name)
        else:
            out[name] = _text(value, MAX_NAME_CHARS, name)
    for name in REQUIRED[op]:
        if not out.get(name):
            raise EditError(f"{op} needs {name} ({MEANING[name]})")
    for name in ("into", "name", "to", "source", "target"):
        if name in out:
            key_of(out[name])
    if op == "merge":  # an entity merged into itself changes nothing: not logged as an edit
        others = [n for n in out["names"] if key_of(n) != key_of(out["into"])]
        if not others:
            raise EditError("merge needs at least one entity other than the one they merge into")
        out["names"] = others
    return out


def _apply_vectors(ws: Workspace, editor: GraphEditor) -> tuple[int, list[str]]:
    entities, relations, removed = editor.vector_changes()
    upsert_graph_vectors(ws, entities, relations, [])
    live = {e.vector_id for e in entities} | {r.vector_id for r in relations}
    return len(entities) + len(relations), [v for v in removed if v not in live]


def make_edit(ws: Workspace, op: str, args: dict[str, Any], who: str = "") -> EditResult:
    """Make one edit: refused (``WorkspaceBusyError``) while another writer holds the workspace,
    ``EditError`` when its target does not exist or an argument is wrong."""
    args = clean_args(op, args)
    with ws.writer():
        records = ws.records
        with records.unit_of_work():
            records.ensure_edit_tables()
            editor = GraphEditor(records, ws.settings)
            editor.learn(records.graph_edits(include_undone=False))
            before = snapshot(ws, args)
            summary = editor.apply(op, args)
            embedded, stale = _apply_vectors(ws, editor)
            edit_id = records.append_edit(time.time(), who, op, args, before, summary)
            records.log("graph_edit", {"id": edit_id, "op": op, "who": who})
            ws.bump_generation()
        delete_vectors(ws, stale)
    return EditResult(edit_id, op, summary, embedded, len(stale))


def snapshot(ws: Workspace, args: dict[str, Any]) -> dict[str, Any]:
    """The named entities as they are (name, type, counts of sources, aliases and relations)."""
    keys = _keys_of(args)
    rows = ws.records.entity_rows(keys)
    return {key: {"name": row["name"], "type": row["type"], "chunks": len(row["source_chunk_ids"]),
                  "aliases": len(row["aliases"]), "relations": len(ws.records.relations_touching(key))}
            for key, row in sorted(rows.items())}


def _keys_of(args: dict[str, Any]) -> list[str]:
    names = list(args.get("names", [])) + [args[n] for n in ("into", "name", "to", "source", "target") if n in args]
    keys = []
    for name in names:
        try:
            keys.append(key_of(name))
        except EditError:
            continue
    return list(dict.fromkeys(keys))


def edit_log(ws: Workspace, include_undone: bool = True) -> list[GraphEdit]:
    """The workspace's edits, oldest first (an older workspace without the table has none)."""
    records = ws.records
    try:
        return records.graph_edits(include_undone)
    except Exception:  # a workspace opened read-only before the table was created
        return []


def undo(ws: Workspace, edit_id: Optional[int] = None, who: str = "") -> GraphEdit:
    """Undo one edit (the last active one when ``edit_id`` is None): the graph becomes the one the log
    without it gives. Returns the edit undone."""
    with ws.writer():
        records = ws.records
        with records.unit_of_work():
            records.ensure_edit_tables()
            active = records.graph_edits(include_undone=False)
            chosen = [e for e in active if edit_id is None or e.id == edit_id]
            if not chosen:
                raise EditError("no edit to undo" if edit_id is None else f"no active edit with id {edit_id}")
            edit = chosen[-1]
            records.set_edit_undone(edit.id, True)
            changed_e, changed_r, removed = rebuild(ws, records.graph_edits(include_undone=True))
            upsert_graph_vectors(ws, changed_e, changed_r, [])
            live = {e.vector_id for e in changed_e} | {r.vector_id for r in changed_r}
            stale = [v for v in removed if v not in live]
            records.log("graph_edit_undone", {"id": edit.id, "op": edit.op, "who": who})
            ws.bump_generation()
        delete_vectors(ws, stale)
    return edit


def rebuild(ws: Workspace, edits: Iterable[GraphEdit]) -> tuple[list, list, list[str]]:
    """Re-merge from their fragments every entity and relation the given edits named (and the
    relations around them); ``merge_touched`` then replays the active log."""
    records = ws.records
    keys: set[str] = set()
    for edit in edits:
        keys.update(_keys_of(edit.args))
    pairs: set[Pair] = set(records.fragment_pairs_touching(keys))
    for key in keys:
        pairs.update(records.relations_touching(key))
    return merge_touched(ws, keys, pairs)


def export_log(ws: Workspace) -> str:
    """The active edits as JSON (what ``import_log`` reads on another workspace)."""
    edits = [{"op": e.op, "args": e.args, "principal": e.principal, "ts": e.ts}
             for e in edit_log(ws, include_undone=False)]
    return json.dumps({"format": FORMAT, "version": 1, "edits": edits}, ensure_ascii=False, indent=1)


def parse_export(text: str | bytes) -> list[tuple[str, dict[str, Any]]]:
    """The (op, args) of an exported log, validated; raises ``EditError`` on anything else."""
    if len(text) > MAX_EXPORT_BYTES:
        raise EditError(f"the edit file is larger than {MAX_EXPORT_BYTES // 1_000_000} MB")
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise EditError(f"the edit file is not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("edits"), list):
        raise EditError(f"not a RAGScope edit file (expected an object with format {FORMAT!r} and edits)")
    if len(data["edits"]) > MAX_IMPORT_EDITS:
        raise EditError(f"the edit file holds more than {MAX_IMPORT_EDITS} edits")
    out = []
    for i, item in enumerate(data["edits"], 1):
        if not isinstance(item, dict):
            raise EditError(f"edit {i} is not an object")
        try:
            out.append((str(item.get("op")), clean_args(str(item.get("op")), item.get("args"))))  # type: ignore[arg-type]
        except EditError as exc:
            raise EditError(f"edit {i}: {exc}") from None
    return out


def import_log(ws: Workspace, text: str | bytes, who: str = "") -> ImportReport:
    """Apply an exported log to this workspace, edit by edit; edits whose targets do not exist here are
    reported in ``skipped`` (their position in the file and why), the others logged as new edits."""
    report = ImportReport()
    for position, (op, args) in enumerate(parse_export(text), 1):
        try:
            report.applied.append(make_edit(ws, op, args, who).edit_id)
        except EditError as exc:
            report.skipped.append((position, str(exc)))
    return report
