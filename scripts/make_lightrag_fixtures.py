"""Build LightRAG working directories with the real ``lightrag-hku`` 1.5.7 package, offline and deterministic.

Runs INSIDE the LightRAG virtual environment (``scripts/install-lightrag.sh`` prints its python):

    PY=$(bash scripts/install-lightrag.sh)
    $PY scripts/make_lightrag_fixtures.py                       # regenerate tests/fixtures/lightrag/
    $PY scripts/make_lightrag_fixtures.py --corpus ../shared/data/dev_musique_full/corpus.jsonl \\
        --workdir /tmp/lightrag_musique                          # one ainsert index of any JSONL corpus
    $PY scripts/make_lightrag_fixtures.py --query DIR --questions Q.jsonl   # LightRAG's own `local` entities

No LLM and no model: LightRAG's own prompts are answered by ``StandInLLM``
(``lightrag_fixtures/standin_llm.py``), which reads the chunk out of LightRAG's extraction prompt and answers in LightRAG's record format (``entity<|#|>name<|#|>type<|#|>
description``, ``relation<|#|>source<|#|>target<|#|>keywords<|#|>description``, then ``<|COMPLETE|>``);
embeddings come from ``HashEmbedder`` (``lightrag_fixtures/corpus.py``) (signed feature hashing of lower-cased words). LightRAG's default
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
* ``custom_kg_vectors/`` two documents through ``ainsert_custom_kg`` whose stored vector texts are the ones RAGScope
                        embeds (chunks of one window, single-chunk entities, no relations): the accept case of
                        ``import-lightrag --reuse-vectors``;
* ``manifest.json``     what each directory holds, as LightRAG's own storages report it (the tests compare
                        the importer's counts with these).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

from lightrag_fixtures.corpus import (CHANGED_FILE, CHANGED_TEXT_SUFFIX, CHUNK_OVERLAP, CHUNK_TOKENS, DELETED_FILE,
                                      DIM, GAZETTEER, read_jsonl, seed_tiktoken)
from lightrag_fixtures.standin_llm import StandInLLM
from lightrag_fixtures.writer import (build_corpus_custom_kg, build_corpus_index, custom_kg_payload, delete,
                                      doc_id_of, insert, keep, local_entities, manifest_of, vectors_payload,
                                      with_rag)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "lightrag"


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
        elif step in ("custom_kg", "custom_kg_vectors"):
            payloads = custom_kg_payload if step == "custom_kg" else vectors_payload
            for doc_id, payload in payloads(corpus, rag.tokenizer):
                await rag.ainsert_custom_kg(payload, full_doc_id=doc_id)
        else:
            raise ValueError(step)

    await with_rag(workdir, llm, job, workspace="demo" if step == "custom_kg" else "")
    print(json.dumps({"step": step, "stand_in_llm_calls": llm.calls}))


FIXTURE_DIRS = ("ainsert", "ainsert_deleted", "ainsert_updated", "custom_kg", "custom_kg_vectors")


def build_fixtures(out: Path, only: Optional[str] = None) -> dict:
    """Every fixture directory (or ``only`` the one named, leaving the others and their manifest entries)."""
    old = out / "manifest.json"
    manifest: dict[str, Any] = json.loads(old.read_text(encoding="utf-8")) if only and old.exists() else {}
    manifest |= {"lightrag": "1.5.7", "chunk_token_size": CHUNK_TOKENS,
                                "chunk_overlap_token_size": CHUNK_OVERLAP, "embedding_dim": DIM,
                                "embedding": "HashEmbedder (scripts/make_lightrag_fixtures.py)"}

    def step(name: str, workdir: Path) -> None:
        done = subprocess.run([sys.executable, __file__, "--step", name, "--workdir", str(workdir), "--out", str(out)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"step {name} failed:\n{done.stderr[-3000:]}")

    wanted = [only] if only else list(FIXTURE_DIRS)
    with tempfile.TemporaryDirectory(prefix="lightrag_fixtures_") as tmp:
        base = Path(tmp) / "ainsert"
        if {"ainsert", "ainsert_deleted", "ainsert_updated"} & set(wanted):
            step("insert", base)
        for name, change in (("ainsert_deleted", "delete"), ("ainsert_updated", "update")):
            if name in wanted:
                shutil.copytree(base, Path(tmp) / name)
                step(change, Path(tmp) / name)
        for name in ("custom_kg", "custom_kg_vectors"):
            if name in wanted:
                step(name, Path(tmp) / name)
        for name in wanted:
            keep(Path(tmp) / name, out / name)
            storage = out / name / ("demo" if name == "custom_kg" else "")
            manifest[name] = manifest_of(storage)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


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
    parser.add_argument("--only", choices=FIXTURE_DIRS, help="regenerate this one fixture directory")
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
        result = build_fixtures(Path(args.out), args.only)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
