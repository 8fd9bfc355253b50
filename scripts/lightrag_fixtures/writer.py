"""LightRAG sessions that write working directories: the real ``lightrag-hku`` package with the stand-in LLM
and the hash embedder (``ainsert``, ``adelete_by_doc_id``, ``ainsert_custom_kg``, LightRAG's own ``local``
retrieval), and what LightRAG's own files hold (the manifest)."""
from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from pathlib import Path
from typing import Any, Optional

from lightrag_fixtures.corpus import (CHUNK_OVERLAP, CHUNK_TOKENS, DIM, GAZETTEER, HashEmbedder, doc_text,
                                      read_jsonl)
from lightrag_fixtures.standin_llm import TUPLE, StandInLLM, extraction_answer, find_names


def make_rag(workdir: Path, llm: StandInLLM, workspace: str = "") -> Any:
    from lightrag import LightRAG
    from lightrag.utils import EmbeddingFunc

    logging.getLogger("lightrag").setLevel(logging.WARNING)
    logging.getLogger("nano-vectordb").setLevel(logging.WARNING)

    return LightRAG(working_dir=str(workdir), workspace=workspace, llm_model_func=llm, llm_model_name="stand-in",
                    embedding_func=EmbeddingFunc(embedding_dim=DIM, max_token_size=512, func=HashEmbedder()),
                    chunk_token_size=CHUNK_TOKENS, chunk_overlap_token_size=CHUNK_OVERLAP,
                    entity_extract_max_gleaning=1, llm_model_max_async=1, max_parallel_insert=1)


async def with_rag(workdir: Path, llm: StandInLLM, job, workspace: str = "") -> Any:
    rag = make_rag(workdir, llm, workspace)
    await rag.initialize_storages()
    try:
        return await job(rag)
    finally:
        await rag.finalize_storages()


def doc_id_of(workdir: Path, file_path: str) -> str:
    status = json.loads((workdir / "kv_store_doc_status.json").read_text(encoding="utf-8"))
    ids = [k for k, v in status.items() if v.get("file_path") == file_path]
    if len(ids) != 1:
        raise RuntimeError(f"{file_path}: {len(ids)} documents in {workdir}")
    return ids[0]


async def insert(rag: Any, rows: list[dict], ids: Optional[list[str]] = None) -> None:
    await rag.ainsert([doc_text(r) for r in rows], ids=ids, file_paths=[r["file_path"] for r in rows])


async def delete(rag: Any, doc_id: str) -> None:
    result = await rag.adelete_by_doc_id(doc_id)
    if result.status != "success":
        raise RuntimeError(f"adelete_by_doc_id({doc_id}): {result.status} {result.message}")


def custom_kg_payload(rows: list[dict], tokenizer: Any) -> list[tuple[str, dict]]:
    """Per document: (full_doc_id, the ``ainsert_custom_kg`` payload of its chunks, entities, relations)."""
    from lightrag.chunker.token_size import chunking_by_token_size

    out = []
    for row in rows:
        text = doc_text(row)
        doc_id = "doc-" + hashlib.md5(text.encode()).hexdigest()
        pieces = chunking_by_token_size(tokenizer, text, None, False, CHUNK_OVERLAP, CHUNK_TOKENS)
        chunks, entities, relationships = [], [], []
        for i, piece in enumerate(pieces):
            alias = f"{row['file_path']}#{i}"
            chunks.append({"content": piece["content"], "source_id": alias, "file_path": row["file_path"],
                           "chunk_order_index": i})
            for line in extraction_answer(piece["content"], GAZETTEER, 40, 100).splitlines():
                fields = line.split(TUPLE)
                if fields[0] == "entity":
                    entities.append({"entity_name": fields[1], "entity_type": fields[2], "description": fields[3],
                                     "source_id": alias, "file_path": row["file_path"]})
                elif fields[0] == "relation":
                    relationships.append({"src_id": fields[1], "tgt_id": fields[2], "keywords": fields[3],
                                          "description": fields[4], "weight": 1.0, "source_id": alias,
                                          "file_path": row["file_path"]})
        out.append((doc_id, {"chunks": chunks, "entities": entities, "relationships": relationships}))
    return out


def vectors_payload(rows: list[dict], tokenizer: Any) -> list[tuple[str, dict]]:
    """``ainsert_custom_kg`` payloads whose stored vector texts are the texts RAGScope embeds (the accept case of
    ``--reuse-vectors``): the first two documents' chunks (90 tokens: one embedding window), each name once,
    from the first chunk naming it, with a one-line description, and no relations (LightRAG embeds a relation
    with its description; RAGScope embeds keywords and endpoints only)."""
    from lightrag.chunker.token_size import chunking_by_token_size

    out, seen = [], set()
    for row in rows[:2]:
        text = doc_text(row)
        doc_id = "doc-" + hashlib.md5(text.encode()).hexdigest()
        pieces = chunking_by_token_size(tokenizer, text, None, False, CHUNK_OVERLAP, CHUNK_TOKENS)
        chunks, entities = [], []
        for i, piece in enumerate(pieces):
            alias = f"{row['file_path']}#{i}"
            chunks.append({"content": piece["content"], "source_id": alias, "file_path": row["file_path"],
                           "chunk_order_index": i})
            for _, name, kind in find_names(piece["content"], GAZETTEER):
                if name not in seen:
                    seen.add(name)
                    entities.append({"entity_name": name, "entity_type": kind, "source_id": alias,
                                     "description": f"{name} is a {kind} named in {row['file_path']}.",
                                     "file_path": row["file_path"]})
        out.append((doc_id, {"chunks": chunks, "entities": entities, "relationships": []}))
    return out


def manifest_of(storage: Path) -> dict:
    """What LightRAG's own files hold: documents, chunks, graph nodes and edges."""
    import networkx as nx

    def load(name: str) -> dict:
        path = storage / name
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

    graph = nx.read_graphml(storage / "graph_chunk_entity_relation.graphml")
    status = load("kv_store_doc_status.json")
    return {"documents": len(load("kv_store_full_docs.json")) or len({c["full_doc_id"] for c in
                                                                     load("kv_store_text_chunks.json").values()}),
            "doc_status": sorted({v.get("status", "") for v in status.values()}),
            "chunks": len(load("kv_store_text_chunks.json")), "entities": graph.number_of_nodes(),
            "relations": graph.number_of_edges(),
            "files": sorted({v.get("file_path", "") for v in status.values()})}


def keep(src: Path, dst: Path) -> None:
    """Copy a working directory into the fixtures without LightRAG's LLM response cache."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("kv_store_llm_response_cache.json", "*.lock"))



async def build_corpus_index(corpus: Path, workdir: Path, limit: Optional[int]) -> dict:
    """One ``ainsert`` of a JSONL corpus ({title, text, doc_id?}) with the stand-in (capitalised runs as names)."""
    rows = read_jsonl(corpus)[:limit]
    for row in rows:
        row.setdefault("file_path", str(row.get("doc_id") or row.get("id") or row.get("title", "doc")))
    llm = StandInLLM(None)
    ids = [str(r["doc_id"]) for r in rows] if all(r.get("doc_id") for r in rows) else None  # keep the corpus's ids
    started = time.perf_counter()
    await with_rag(workdir, llm, lambda rag: insert(rag, rows, ids))
    return {"seconds": round(time.perf_counter() - started, 1), "llm_calls": llm.calls, **manifest_of(workdir)}


async def build_corpus_custom_kg(corpus: Path, workdir: Path, limit: Optional[int]) -> dict:
    """A JSONL corpus through ONE ``ainsert_custom_kg`` call (minutes, where ``ainsert`` flushes every store after
    every document): LightRAG's own chunker (1200/100), the stand-in's records per chunk, the chunk alias = the
    corpus doc id (so ``full_doc_id`` is the doc id for one-chunk documents; a longer document's later chunks
    become documents ``id#i``). ``ainsert_custom_kg`` keeps one source chunk per entity/relation (an upsert), so
    the merged lists LightRAG's own merge would write (``<SEP>``-joined sources, descriptions, file paths) are
    written afterwards through its graph storage's batch upserts, then persisted."""
    from lightrag.chunker.token_size import chunking_by_token_size
    from lightrag.utils import compute_mdhash_id, normalize_entity_name, sanitize_text_for_encoding

    rows = read_jsonl(corpus)[:limit]
    started = time.perf_counter()

    async def job(rag: Any) -> dict:
        chunks, ents, rels = [], {}, {}
        for row in rows:
            doc_id = str(row.get("doc_id") or row.get("id"))
            for i, piece in enumerate(chunking_by_token_size(rag.tokenizer, doc_text(row), None, False, 100, 1200)):
                alias = doc_id if i == 0 else f"{doc_id}#{i}"
                real = compute_mdhash_id(sanitize_text_for_encoding(piece["content"]), prefix="chunk-")
                chunks.append({"content": piece["content"], "source_id": alias, "file_path": doc_id,
                               "chunk_order_index": i})
                for line in extraction_answer(piece["content"], None, 40, 100).splitlines():
                    f = line.split(TUPLE)
                    if f[0] == "entity":
                        ents.setdefault(f[1], []).append((alias, real, f[2], f[3], doc_id))
                    elif f[0] == "relation":
                        rels.setdefault(tuple(sorted((f[1], f[2]))), []).append((alias, real, f[3], f[4], doc_id))
        payload = {"chunks": chunks,
                   "entities": [{"entity_name": n, "entity_type": v[0][2], "description": v[0][3],
                                 "source_id": v[0][0], "file_path": v[0][4]} for n, v in ents.items()],
                   "relationships": [{"src_id": a, "tgt_id": b, "description": v[0][3], "keywords": v[0][2],
                                      "weight": float(len(v)), "source_id": v[0][0], "file_path": v[0][4]}
                                     for (a, b), v in rels.items()]}
        await rag.ainsert_custom_kg(payload)
        graph = rag.chunk_entity_relation_graph
        nodes = []
        for name, v in ents.items():
            node = await graph.get_node(normalize_entity_name(name))
            if node is not None and len(v) > 1:
                nodes.append((normalize_entity_name(name), dict(node) | {
                    "source_id": sep_join(x[1] for x in v), "description": sep_join(x[3] for x in v),
                    "file_path": sep_join(x[4] for x in v)}))
        edges = []
        for (a, b), v in rels.items():
            na, nb = normalize_entity_name(a), normalize_entity_name(b)
            edge = await graph.get_edge(na, nb)
            if edge is not None and len(v) > 1:
                edges.append((na, nb, dict(edge) | {
                    "source_id": sep_join(x[1] for x in v), "description": sep_join(x[3] for x in v),
                    "keywords": ",".join(dict.fromkeys(k for x in v for k in x[2].split(","))),
                    "file_path": sep_join(x[4] for x in v)}))
        await graph.upsert_nodes_batch(nodes)
        await graph.upsert_edges_batch(edges)
        await graph.index_done_callback()
        return {"patched_nodes": len(nodes), "patched_edges": len(edges)}

    patched = await with_rag(workdir, StandInLLM(None), job)
    return {"seconds": round(time.perf_counter() - started, 1), **patched, **manifest_of(workdir)}


def sep_join(values: Any) -> str:
    """LightRAG's multi-value join (`<SEP>`), duplicates dropped, order kept."""
    return "<SEP>".join(dict.fromkeys(values))


async def local_entities(workdir: Path, questions: Path, workspace: str) -> list[dict]:
    """LightRAG's own ``local`` retrieval (context only, keywords given: the question's names) per question."""
    from lightrag import QueryParam

    async def job(rag: Any) -> list[dict]:
        out = []
        for q in read_jsonl(questions):
            # keywords given (no keyword LLM): the question's names, else its capitalised runs, else the question
            names = q.get("names") or [n for _, n, _ in find_names(q["question"], None)] or [q["question"]]
            param = QueryParam(mode="local", only_need_context=True, ll_keywords=names, hl_keywords=names,
                               enable_rerank=False)
            context = await rag.aquery(q["question"], param=param)
            out.append({"question": q["question"], "entities": entity_names_in_context(str(context))})
        return out

    return await with_rag(workdir, StandInLLM(GAZETTEER), job, workspace=workspace)


def entity_names_in_context(context: str) -> list[str]:
    """The entity names of LightRAG's context (its entities section holds one JSON object per line)."""
    names = []
    for line in context.splitlines():
        line = line.strip()
        if line.startswith("{") and '"entity"' in line:
            try:
                names.append(json.loads(line)["entity"])
            except (ValueError, KeyError):
                continue
    return names

