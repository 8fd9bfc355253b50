"""Build LightRAG working directories with the real ``lightrag-hku`` 1.5.7 package, offline and deterministic.

Runs INSIDE the LightRAG virtual environment (``scripts/install-lightrag.sh`` prints its python):

    PY=$(bash scripts/install-lightrag.sh)
    $PY scripts/make_lightrag_fixtures.py                       # regenerate tests/fixtures/lightrag/
    $PY scripts/make_lightrag_fixtures.py --corpus ../shared/data/dev_musique_full/corpus.jsonl \\
        --workdir /tmp/lightrag_musique                          # one ainsert index of any JSONL corpus
    $PY scripts/make_lightrag_fixtures.py --query DIR --questions Q.jsonl   # LightRAG's own `local` entities

No LLM and no model: LightRAG's own prompts are answered by ``StandInLLM`` (below), which reads the chunk
out of LightRAG's extraction prompt and answers in LightRAG's record format (``entity<|#|>name<|#|>type<|#|>
description``, ``relation<|#|>source<|#|>target<|#|>keywords<|#|>description``, then ``<|COMPLETE|>``);
embeddings come from ``HashEmbedder`` (signed feature hashing of lower-cased words). LightRAG's default
tokenizer (tiktoken ``o200k_base``) is kept: its BPE file is copied into tiktoken's cache from the
``bpe-openai`` package, under tiktoken's own cache key, after checking tiktoken's sha256.

Fixture directories written under ``--out`` (the LLM response cache is removed from the copies kept there:
it only replays prompts and is not read by the importer):

* ``ainsert/``          the five documents of ``corpus.jsonl`` inserted with ``ainsert`` (default workspace:
                        the files lie in the directory itself);
* ``ainsert_deleted/``  a copy of it after ``adelete_by_doc_id`` of ``calder-bay.md``;
* ``ainsert_updated/``  a copy of ``ainsert/`` with ``calder-bay.md`` deleted, ``greer-ironworks.md`` deleted and
                        inserted again, changed, under the same doc id, and ``corpus_added.jsonl`` inserted;
* ``custom_kg/``        the same corpus through ``ainsert_custom_kg`` (one call per document, ``full_doc_id`` set)
                        into the LightRAG workspace ``demo``: the files lie in ``custom_kg/demo/``;
* ``manifest.json``     what each directory holds, as LightRAG's own storages report it (the tests compare
                        the importer's counts with these).
"""
from __future__ import annotations

import argparse
import asyncio
import gzip
import hashlib
import importlib.util
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "lightrag"
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
DIM = 64
CHUNK_TOKENS, CHUNK_OVERLAP = 90, 15  # small chunks: every fixture document has two or three
TUPLE, COMPLETE = "<|#|>", "<|COMPLETE|>"
CHANGED_FILE, DELETED_FILE = "greer-ironworks.md", "calder-bay.md"
CHANGED_TEXT_SUFFIX = " In 1990 the old foundry hall of Greer Ironworks became the Linmouth Museum of Industry."

# the fixture corpus's names and their types (the stand-in's "knowledge"); other corpora use capitalised runs
GAZETTEER = {
    "Brennock Observatory": "organization", "Tarn Ridge": "location", "Harlow Valley": "location",
    "Ada Vell": "person", "Greer Ironworks": "organization", "Linmouth University": "organization",
    "Orrin Pell": "person", "Harlow Valley Railway": "organization", "Tomas Greer": "person",
    "Linmouth": "location", "River Lin": "location", "Vell Library": "organization",
    "Calder Bay Marine Station": "organization", "Calder Bay": "location", "Mara Oduya": "person",
    "Calder Bay Lifeboat Station": "organization", "Wren": "artifact", "Elin Greer": "person",
    "Linmouth Museum of Industry": "organization",
}
STOP = set("a an the and or of in on at to for from by with as is was were be been its his her their this that "
           "it he she they there which who whom whose also then than into over under each every before after "
           "until since".split())
CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:of\s+|the\s+)?[A-Z][a-z]+)*\b")
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


# --- offline set-up -------------------------------------------------------------------------------
def seed_tiktoken(cache_dir: Path) -> None:
    """Put o200k_base where tiktoken looks first (TIKTOKEN_CACHE_DIR/sha1(url)), from the bpe-openai package."""
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == O200K_SHA256:
        return
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("bpe-openai is not installed in this environment (run bash scripts/install-lightrag.sh)")
    packed = Path(list(spec.submodule_search_locations)[0]) / "data" / "o200k_base.tiktoken.gz"
    data = gzip.decompress(packed.read_bytes())
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        sys.exit(f"{packed} does not match tiktoken's sha256 for o200k_base")
    target.write_bytes(data)


class HashEmbedder:
    """Deterministic bag-of-words vectors: each lower-cased word adds ±1 at sha1-chosen positions."""

    def __init__(self, dim: int = DIM) -> None:
        self.dim = dim

    def vector(self, text: str) -> np.ndarray:
        out = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            if word in STOP:
                continue
            digest = hashlib.sha1(word.encode()).digest()
            for k in range(2):
                out[digest[2 * k] % self.dim] += 1.0 if digest[2 * k + 1] % 2 else -1.0
        norm = float(np.linalg.norm(out))
        if not norm:  # nothing but stop words: a fixed unit vector (NanoVectorDB divides by the norm)
            out[0], norm = 1.0, 1.0
        return out / norm

    async def __call__(self, texts: list[str], **_: Any) -> np.ndarray:
        return np.stack([self.vector(t) for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)


# --- the stand-in LLM -----------------------------------------------------------------------------
def find_names(text: str, gazetteer: Optional[dict[str, str]]) -> list[tuple[int, str, str]]:
    """(offset, name, type) of the names in ``text``: gazetteer names (longest first, no overlaps), else
    capitalised runs that are not sentence-initial function words."""
    found: list[tuple[int, str, str]] = []
    taken: list[tuple[int, int]] = []
    if gazetteer:
        for name in sorted(gazetteer, key=len, reverse=True):
            for m in re.finditer(r"\b" + re.escape(name) + r"\b", text):
                if all(m.end() <= a or m.start() >= b for a, b in taken):
                    taken.append((m.start(), m.end()))
                    found.append((m.start(), name, gazetteer[name]))
    else:
        for m in CAPITALISED.finditer(text):
            name = m.group(0)
            if name.lower() in STOP or len(name) < 3:
                continue
            kind = "organization" if re.search(r"(University|Company|Club|Party|Records|Band|Council)$", name) \
                else "concept"
            found.append((m.start(), name, kind))
    return sorted(found)


def extraction_answer(chunk: str, gazetteer: Optional[dict[str, str]], max_entities: int, max_rows: int) -> str:
    """LightRAG's record format for one chunk: entities (first sentence naming each as description), then
    a relation for each pair named in one sentence (keywords: the content words between them)."""
    sentences = [" ".join(s.split()) for s in SENTENCE.split(chunk) if s.strip()]
    entities: dict[str, tuple[str, str]] = {}
    relations: dict[tuple[str, str], tuple[str, str]] = {}
    for sentence in sentences:
        names = find_names(sentence, gazetteer)
        for _, name, kind in names:
            if name not in entities and len(entities) < max_entities:
                entities[name] = (kind, sentence)
        for i, (pos_a, a, _) in enumerate(names):
            for pos_b, b, _ in names[i + 1:]:
                if a == b or a not in entities or b not in entities or (a, b) in relations or (b, a) in relations:
                    continue
                between = re.findall(r"[a-z]+", sentence[pos_a + len(a):pos_b].lower())
                words = [w for w in between if w not in STOP][:3] or ["related"]
                relations[(a, b)] = (", ".join(words), sentence)
    rows = [TUPLE.join(["entity", n, k, d]) for n, (k, d) in entities.items()]
    rows += [TUPLE.join(["relation", a, b, kw, d]) for (a, b), (kw, d) in relations.items()]
    return "\n".join(rows[:max_rows] + [COMPLETE])


class StandInLLM:
    """Answers LightRAG's indexing prompts deterministically; any other prompt is an error."""

    def __init__(self, gazetteer: Optional[dict[str, str]]) -> None:
        self.gazetteer = gazetteer
        self.calls: dict[str, int] = {"extraction": 0, "gleaning": 0, "summary": 0}

    async def __call__(self, prompt: str, system_prompt: Optional[str] = None, history_messages: Any = None,
                       **_: Any) -> str:
        text = str(prompt)
        if "---Task---\nExtract entities and relationships" in text:
            self.calls["extraction"] += 1
            body = text.split("---Input Text---\n```\n", 1)[1].rsplit("\n```", 1)[0]
            limits = re.search(r"at most (\d+) total rows and at most (\d+) entity rows", text)
            rows, ents = (int(limits.group(1)), int(limits.group(2))) if limits else (100, 40)
            return extraction_answer(body, self.gazetteer, ents, rows)
        if "Based on the last extraction task" in text:
            self.calls["gleaning"] += 1
            return COMPLETE
        if "synthesize a list of descriptions" in text:
            self.calls["summary"] += 1
            name = re.search(r"Name: (.*)", text)
            listed = text.split("Description List:", 1)[1]
            parts = [json.loads(line).get("description", "") for line in listed.splitlines()
                     if line.strip().startswith("{")]
            head = (name.group(1).strip() + ": ") if name else ""
            return head + " ".join(parts[:2])
        raise RuntimeError(f"the stand-in LLM got a prompt it does not answer: {text[:120]!r}")


# --- LightRAG runs --------------------------------------------------------------------------------
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


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def doc_text(row: dict) -> str:
    title, text = row.get("title", ""), row.get("text", "")
    return f"{title}\n{text}" if title else text


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


async def run_step(step: str, workdir: Path, out: Path) -> None:
    """One LightRAG session on ``workdir``. LightRAG keeps its storages in process-wide shared state keyed
    by workspace name, so every session runs in its own process (``build_fixtures``)."""
    corpus = read_jsonl(out / "corpus.jsonl")
    llm = StandInLLM(GAZETTEER)

    async def job(rag: Any) -> None:
        if step == "insert":
            await insert(rag, corpus)
        elif step in ("delete", "update"):
            changed = doc_id_of(workdir, CHANGED_FILE)
            await delete(rag, doc_id_of(workdir, DELETED_FILE))
            if step == "update":
                await delete(rag, changed)
                row = next(dict(r) for r in corpus if r["file_path"] == CHANGED_FILE)
                row["text"] += CHANGED_TEXT_SUFFIX
                await insert(rag, [row], ids=[changed])
                await insert(rag, read_jsonl(out / "corpus_added.jsonl"))
        elif step == "custom_kg":
            for doc_id, payload in custom_kg_payload(corpus, rag.tokenizer):
                await rag.ainsert_custom_kg(payload, full_doc_id=doc_id)
        else:
            raise ValueError(step)

    await with_rag(workdir, llm, job, workspace="demo" if step == "custom_kg" else "")
    print(json.dumps({"step": step, "stand_in_llm_calls": llm.calls}))


def build_fixtures(out: Path) -> dict:
    manifest: dict[str, Any] = {"lightrag": "1.5.7", "chunk_token_size": CHUNK_TOKENS,
                                "chunk_overlap_token_size": CHUNK_OVERLAP, "embedding_dim": DIM,
                                "embedding": "HashEmbedder (scripts/make_lightrag_fixtures.py)"}

    def step(name: str, workdir: Path) -> None:
        done = subprocess.run([sys.executable, __file__, "--step", name, "--workdir", str(workdir), "--out", str(out)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"step {name} failed:\n{done.stderr[-3000:]}")

    with tempfile.TemporaryDirectory(prefix="lightrag_fixtures_") as tmp:
        base = Path(tmp) / "ainsert"
        step("insert", base)
        for name, change in (("ainsert_deleted", "delete"), ("ainsert_updated", "update")):
            shutil.copytree(base, Path(tmp) / name)
            step(change, Path(tmp) / name)
        step("custom_kg", Path(tmp) / "custom_kg")
        for name in ("ainsert", "ainsert_deleted", "ainsert_updated", "custom_kg"):
            keep(Path(tmp) / name, out / name)
            storage = out / name / ("demo" if name == "custom_kg" else "")
            manifest[name] = manifest_of(storage)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


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


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(FIXTURES), help="fixture folder (holds corpus.jsonl): %(default)s")
    parser.add_argument("--corpus", help="build one ainsert index of this JSONL corpus instead of the fixtures")
    parser.add_argument("--workdir", help="LightRAG working directory for --corpus / --query")
    parser.add_argument("--limit", type=int, default=None, help="first N documents of --corpus")
    parser.add_argument("--custom-kg", action="store_true", help="--corpus through one ainsert_custom_kg call")
    parser.add_argument("--query", help="print LightRAG's local entities per question of --questions for this dir")
    parser.add_argument("--questions", help="JSONL with question and names (--query)")
    parser.add_argument("--lightrag-workspace", default="", help="LightRAG workspace name inside --query's dir")
    parser.add_argument("--step", help=argparse.SUPPRESS)  # one LightRAG session of build_fixtures
    args = parser.parse_args(argv)
    logging.getLogger("lightrag").setLevel(logging.ERROR)
    seed_tiktoken(Path(tempfile.gettempdir()) / "ragscope_tiktoken_cache")
    if args.step:
        asyncio.run(run_step(args.step, Path(args.workdir), Path(args.out)))
        return 0
    if args.query:
        result: Any = asyncio.run(local_entities(Path(args.query), Path(args.questions), args.lightrag_workspace))
    elif args.corpus:
        if not args.workdir:
            parser.error("--corpus needs --workdir")
        build = build_corpus_custom_kg if args.custom_kg else build_corpus_index
        result = asyncio.run(build(Path(args.corpus), Path(args.workdir), args.limit))
    else:
        result = build_fixtures(Path(args.out))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
