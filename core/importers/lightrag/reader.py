"""Read a LightRAG working directory written by its default file storages (lightrag-hku 1.5.7).

Files (``JsonKVStorage``, ``JsonDocStatusStorage``, ``NanoVectorDBStorage``, ``NetworkXStorage``), in the
directory itself (LightRAG's default workspace "") or in ``DIR/<workspace>/``:

* ``kv_store_text_chunks.json`` (required): chunk id -> {content, tokens, chunk_order_index, full_doc_id,
  file_path}
* ``graph_chunk_entity_relation.graphml`` (required): nodes (entity_id, entity_type, description, source_id,
  file_path) and undirected edges (description, keywords, weight, source_id, file_path); multi-valued fields
  are joined with ``<SEP>``, and ``source_id`` may be capped (``max_source_ids_per_entity``)
* ``kv_store_entity_chunks.json`` / ``kv_store_relation_chunks.json``: the full source-chunk lists (keys: the
  entity name, ``"source<SEP>target"``); used instead of the GraphML ``source_id`` when present
* ``kv_store_full_docs.json``: doc id -> {content, file_path}; ``kv_store_doc_status.json``: doc id -> {status,
  file_path, chunks_list, created_at}; ``kv_store_full_entities.json`` / ``kv_store_full_relations.json``:
  per-document lists (LightRAG's own delete uses them; counted, not needed here)
* ``vdb_entities.json``, ``vdb_relationships.json``, ``vdb_chunks.json``: NanoVectorDB files
  ({embedding_dim, data, matrix}); only their dimension and row counts are read (RAGScope re-embeds)

``ainsert_custom_kg`` writes chunks and graph but no documents: the documents are then the chunks'
``full_doc_id`` groups, their text the chunks joined in order, their status "processed".
Every problem raises ``LightRAGFormatError`` naming the file and the field.

``read_index_isolated`` (what the importer calls) reads the directory in the parsing worker
(``core.parsing.worker.call_isolated``) under the workspace's parsing limits: a GraphML or JSON file that
expands past ``parse_memory_mb`` (or takes longer than ``parse_cpu_seconds`` / ``parse_timeout_s``) is
refused with that limit named, and the app's process never holds the parse.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional

import networkx as nx

from core.errors import RAGScopeError

SEP = "<SEP>"
CHUNKS_FILE = "kv_store_text_chunks.json"
GRAPH_FILE = "graph_chunk_entity_relation.graphml"
MARKERS = (CHUNKS_FILE, GRAPH_FILE)
OPTIONAL_KV = ("kv_store_full_docs.json", "kv_store_doc_status.json", "kv_store_entity_chunks.json",
               "kv_store_relation_chunks.json", "kv_store_full_entities.json", "kv_store_full_relations.json")
VDB_FILES = ("vdb_entities.json", "vdb_relationships.json", "vdb_chunks.json")


class LightRAGFormatError(RAGScopeError, ValueError):
    """A LightRAG working directory cannot be read; the message names the file and the field."""


@dataclass
class LRDocument:
    doc_id: str
    file_path: str
    text: str
    status: str
    created: str = ""


@dataclass
class LRChunk:
    chunk_id: str
    doc_id: str
    order: int
    text: str
    tokens: int
    file_path: str


@dataclass
class LREntity:
    name: str
    type: str
    description: str
    source_chunk_ids: list[str]
    file_paths: list[str]


@dataclass
class LRRelation:
    source: str
    target: str
    keywords: str
    description: str
    weight: float
    source_chunk_ids: list[str]
    file_paths: list[str]


@dataclass
class LightRAGIndex:
    """Everything read from one LightRAG storage folder."""

    storage_dir: Path
    workspace: str
    documents: list[LRDocument]
    chunks: list[LRChunk]
    entities: list[LREntity]
    relations: list[LRRelation]
    vector_dims: dict[str, int] = field(default_factory=dict)
    vector_rows: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"documents": len(self.documents), "chunks": len(self.chunks), "entities": len(self.entities),
                "relations": len(self.relations)}


def split_sep(value: Any) -> list[str]:
    """A ``<SEP>``-joined LightRAG field as its parts (empty parts dropped, order kept)."""
    if value is None:
        return []
    return [part.strip() for part in str(value).split(SEP) if part.strip()]


def _plain_folder_name(name: str) -> bool:
    """One path component: not empty, '.', '..', absolute, a drive, or with a separator or a NUL."""
    return (bool(name) and name not in (".", "..") and not any(c in name for c in "/\\\x00:")
            and not Path(name).is_absolute())


MAX_IMPORT_FILE_BYTES = 128 * 2**20  # one JSON or GraphML file of an import (refused before it is parsed)


def _check_size(path: Path) -> None:
    try:
        size = path.stat().st_size
    except OSError:
        return  # the read reports it
    if size > MAX_IMPORT_FILE_BYTES:
        raise LightRAGFormatError(f"{path.name}: {size / 2**20:,.0f} MB; the importer reads files of at most "
                                  f"{MAX_IMPORT_FILE_BYTES // 2**20} MB")


def find_storage(path: Path, workspace: Optional[str] = None) -> tuple[Path, str]:
    """The folder holding the storages: ``path`` itself, ``path/workspace``, or the one subfolder that has them."""
    path = Path(path)
    if not path.is_dir():
        raise LightRAGFormatError(f"{path}: not a directory (expected a LightRAG working directory)")
    if workspace:
        if not _plain_folder_name(workspace):
            raise LightRAGFormatError(f"{workspace!r}: not a LightRAG workspace name (one folder name inside the "
                                      "working directory: no '/', '\\', '..' or absolute path)")
        folder = path / workspace
        if not folder.resolve().is_relative_to(path.resolve()):
            raise LightRAGFormatError(f"{workspace!r}: the LightRAG workspace links out of the working directory")
        if not all((folder / m).is_file() for m in MARKERS):
            raise LightRAGFormatError(f"{folder}: no LightRAG workspace '{workspace}' here "
                                      f"(expected {CHUNKS_FILE} and {GRAPH_FILE})")
        return folder, workspace
    if all((path / m).is_file() for m in MARKERS):
        return path, ""
    subs = sorted(p for p in path.iterdir() if p.is_dir() and all((p / m).is_file() for m in MARKERS))
    if len(subs) == 1:
        return subs[0], subs[0].name
    if subs:
        raise LightRAGFormatError(f"{path}: several LightRAG workspaces ({', '.join(p.name for p in subs)}); "
                                  "name one with --lightrag-workspace")
    missing = [m for m in MARKERS if not (path / m).is_file()]
    raise LightRAGFormatError(f"{path}: not a LightRAG working directory: {', '.join(missing)} missing")


def load_json(path: Path) -> Any:
    """A JSON file of the directory; unreadable or invalid JSON raises ``LightRAGFormatError`` naming it."""
    _check_size(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise LightRAGFormatError(f"{path.name}: JSON nested too deeply to be a LightRAG file") from None
    except UnicodeDecodeError as exc:
        raise LightRAGFormatError(f"{path.name}: not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise LightRAGFormatError(f"{path.name}: invalid JSON at line {exc.lineno}, column {exc.colno} "
                                  f"({exc.msg}); the file is truncated or damaged") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise LightRAGFormatError(f"{path.name}: a value cannot be read ({str(exc)[:120]})") from None
    except OSError as exc:
        raise LightRAGFormatError(f"{path.name}: cannot be read ({exc.strerror})") from None


def _kv(folder: Path, name: str, required: bool = False) -> dict[str, dict]:
    path = folder / name
    if not path.is_file():
        if required:
            raise LightRAGFormatError(f"{name}: missing")
        return {}
    data = load_json(path)
    if not isinstance(data, dict):
        raise LightRAGFormatError(f"{name}: expected a JSON object of records, got {type(data).__name__}")
    for key, value in data.items():
        if not isinstance(value, dict):
            raise LightRAGFormatError(f"{name}: record {key!r} is {type(value).__name__}, expected an object")
    return data


def _field(file: str, key: str, record: dict, name: str, kind: type | tuple, default: Any = ...) -> Any:
    """``record[name]`` checked for type; missing -> ``default`` or an error naming file, record and field."""
    if name not in record or record[name] is None:
        if default is ...:
            raise LightRAGFormatError(f"{file}: record {key!r}: field '{name}' is missing")
        return default
    value = record[name]
    if isinstance(value, bool) or not isinstance(value, kind):
        wanted = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise LightRAGFormatError(f"{file}: record {key!r}: field '{name}' is {type(value).__name__}, expected {wanted}")
    return value


def _read_chunks(folder: Path) -> list[LRChunk]:
    out = []
    for cid, rec in _kv(folder, CHUNKS_FILE, required=True).items():
        out.append(LRChunk(cid, _field(CHUNKS_FILE, cid, rec, "full_doc_id", str),
                           int(_field(CHUNKS_FILE, cid, rec, "chunk_order_index", (int, float))),
                           _field(CHUNKS_FILE, cid, rec, "content", str),
                           int(_field(CHUNKS_FILE, cid, rec, "tokens", (int, float), 0)),
                           str(_field(CHUNKS_FILE, cid, rec, "file_path", str, ""))))
    return out


def _read_documents(folder: Path, chunks: list[LRChunk]) -> list[LRDocument]:
    full = _kv(folder, "kv_store_full_docs.json")
    status = _kv(folder, "kv_store_doc_status.json")
    by_doc: dict[str, list[LRChunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    docs = []
    for doc_id in dict.fromkeys(list(status) + list(full) + list(by_doc)):
        st = status.get(doc_id, {})
        state = str(_field("kv_store_doc_status.json", doc_id, st, "status", str, "processed" if not st else ...))
        if doc_id in full:
            text = _field("kv_store_full_docs.json", doc_id, full[doc_id], "content", str)
        elif doc_id in by_doc:  # ainsert_custom_kg: no full document, the chunks in order
            text = "\n".join(c.text for c in sorted(by_doc[doc_id], key=lambda c: c.order))
        else:
            text = ""
        file_path = str(st.get("file_path") or full.get(doc_id, {}).get("file_path")
                        or next((c.file_path for c in by_doc.get(doc_id, []) if c.file_path), "") or doc_id)
        docs.append(LRDocument(doc_id, file_path, text, state, str(st.get("created_at", ""))))
    # LightRAG's insertion order: doc status creation time, then id (stable when it is absent)
    return sorted(docs, key=lambda d: (d.created, d.doc_id))


def _read_graph(folder: Path) -> nx.Graph:
    path = folder / GRAPH_FILE
    _check_size(path)
    try:
        graph = nx.read_graphml(path)
    except (ElementTree.ParseError, nx.NetworkXError, KeyError, ValueError) as exc:
        raise LightRAGFormatError(f"{GRAPH_FILE}: not a readable GraphML file ({exc}); the file is truncated "
                                  "or damaged") from None
    if graph.is_directed():
        graph = graph.to_undirected()
    return graph


def _source_lists(folder: Path, name: str) -> dict[str, list[str]]:
    out = {}
    for key, rec in _kv(folder, name).items():
        ids = _field(name, key, rec, "chunk_ids", list)
        out[key] = [str(i) for i in ids]
    return out


def _read_entities(graph: nx.Graph, full_lists: dict[str, list[str]]) -> list[LREntity]:
    out = []
    for node, data in graph.nodes(data=True):
        name = str(data.get("entity_id") or node)
        for required in ("entity_type", "description", "source_id"):
            if required not in data:
                raise LightRAGFormatError(f"{GRAPH_FILE}: node {node!r}: field '{required}' is missing")
        sources = full_lists.get(name) or full_lists.get(str(node)) or split_sep(data["source_id"])
        out.append(LREntity(name, str(data["entity_type"] or "UNKNOWN"), str(data["description"] or ""),
                            list(dict.fromkeys(sources)), split_sep(data.get("file_path"))))
    return out


def _read_relations(graph: nx.Graph, full_lists: dict[str, list[str]], names: dict[str, str]) -> list[LRRelation]:
    out = []
    for a, b, data in graph.edges(data=True):
        for required in ("description", "source_id"):
            if required not in data:
                raise LightRAGFormatError(f"{GRAPH_FILE}: edge {a!r} - {b!r}: field '{required}' is missing")
        try:
            weight = float(data.get("weight", 1.0))
        except (TypeError, ValueError):
            raise LightRAGFormatError(f"{GRAPH_FILE}: edge {a!r} - {b!r}: field 'weight' is not a number") from None
        src, tgt = names.get(a, a), names.get(b, b)
        sources = (full_lists.get(f"{src}{SEP}{tgt}") or full_lists.get(f"{tgt}{SEP}{src}")
                   or split_sep(data["source_id"]))
        out.append(LRRelation(src, tgt, str(data.get("keywords") or ""), str(data["description"] or ""), weight,
                              list(dict.fromkeys(sources)), split_sep(data.get("file_path"))))
    return out


def _vector_files(folder: Path) -> tuple[dict[str, int], dict[str, int]]:
    dims, rows = {}, {}
    for name in VDB_FILES:
        path = folder / name
        if not path.is_file():
            continue
        data = load_json(path)
        if not isinstance(data, dict):
            raise LightRAGFormatError(f"{name}: expected a NanoVectorDB object, got {type(data).__name__}")
        dims[name] = int(_field(name, "(file)", data, "embedding_dim", (int, float)))
        rows[name] = len(_field(name, "(file)", data, "data", list))
    return dims, rows


def read_index(path: Path | str, workspace: Optional[str] = None) -> LightRAGIndex:
    """Read and validate a whole LightRAG working directory (nothing is written anywhere)."""
    folder, ws_name = find_storage(Path(path), workspace)
    chunks = _read_chunks(folder)
    documents = _read_documents(folder, chunks)
    for name in OPTIONAL_KV[4:]:
        _kv(folder, name)  # validated (they must parse), not needed for the import
    graph = _read_graph(folder)
    names = {str(n): str(d.get("entity_id") or n) for n, d in graph.nodes(data=True)}
    entities = _read_entities(graph, _source_lists(folder, "kv_store_entity_chunks.json"))
    relations = _read_relations(graph, _source_lists(folder, "kv_store_relation_chunks.json"), names)
    dims, rows = _vector_files(folder)
    chunk_ids = {c.chunk_id for c in chunks}
    doc_ids = {d.doc_id for d in documents}
    for chunk in chunks:
        if chunk.doc_id not in doc_ids:
            raise LightRAGFormatError(f"{CHUNKS_FILE}: record {chunk.chunk_id!r}: field 'full_doc_id' names "
                                      f"an unknown document {chunk.doc_id!r}")
    for ent in entities:
        if not any(c in chunk_ids for c in ent.source_chunk_ids):
            raise LightRAGFormatError(f"{GRAPH_FILE}: node {ent.name!r}: field 'source_id' names no chunk of "
                                      f"{CHUNKS_FILE} ({', '.join(ent.source_chunk_ids[:3]) or 'empty'})")
    for rel in relations:
        if not any(c in chunk_ids for c in rel.source_chunk_ids):
            raise LightRAGFormatError(f"{GRAPH_FILE}: edge {rel.source!r} - {rel.target!r}: field 'source_id' names "
                                      f"no chunk of {CHUNKS_FILE} ({', '.join(rel.source_chunk_ids[:3]) or 'empty'})")
    files = sorted(p.name for p in folder.iterdir() if p.is_file())
    return LightRAGIndex(folder, ws_name, documents, chunks, entities, relations, dims, rows, files)


def _index_as_json(path: str, workspace: Optional[str]) -> dict[str, Any]:
    """``read_index`` as plain JSON values (what the parsing worker sends back)."""
    index = read_index(path, workspace)
    data = asdict(index)
    data["storage_dir"] = str(index.storage_dir)
    return data


def _index_from_json(data: dict[str, Any]) -> LightRAGIndex:
    return LightRAGIndex(Path(data["storage_dir"]), data["workspace"],
                         [LRDocument(**d) for d in data["documents"]], [LRChunk(**c) for c in data["chunks"]],
                         [LREntity(**e) for e in data["entities"]], [LRRelation(**r) for r in data["relations"]],
                         data["vector_dims"], data["vector_rows"], data["files"])


def read_index_isolated(path: Path | str, workspace: Optional[str] = None, limits: Any = None) -> LightRAGIndex:
    """``read_index`` in the parsing worker under ``limits`` (``core.parsing.limits.ParseLimits``; default
    caps when None). Format errors and the worker's limits both raise ``LightRAGFormatError``."""
    from core.parsing.limits import ParseLimits
    from core.parsing.worker import WorkerFailed, call_isolated

    find_storage(Path(path), workspace)  # path checks here first: a bad name never reaches the worker
    try:
        data = call_isolated(_index_as_json, (str(Path(path).resolve()), workspace), limits or ParseLimits())
    except WorkerFailed as exc:
        message = str(exc)
        if "limit" in message and "raise `" in message:
            message = f"reading the LightRAG files stopped: {message}"
        raise LightRAGFormatError(message) from None
    return _index_from_json(data)
