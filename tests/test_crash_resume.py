"""Crash safety: ``python -m core index`` is SIGKILLed at several points (one deterministic kill between
the ChromaDB upsert and the SQLite commit, then kills at random points drawn from fixed seeds), run
again to completion, and the final workspace must equal a clean single run (one process, default batch
size): status counts, documents, chunks, entity/relation/mention rows, summary tree and the ChromaDB ids
of every collection.

A fast in-process test checks the property the resume relies on: the result does not depend on
where the batch boundaries fall.

Knobs (environment): RAGSCOPE_CRASH_DOCS (documents of dev_musique_full, default 40),
RAGSCOPE_CRASH_BATCH_TOKENS (tokens per batch of the interrupted runs, default 500), RAGSCOPE_CRASH_SEEDS (default "7").
"""
from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import ROOT, HashEmbedder, shared_dataset

N_DOCS = int(os.environ.get("RAGSCOPE_CRASH_DOCS", "40"))
BATCH_TOKENS = os.environ.get("RAGSCOPE_CRASH_BATCH_TOKENS", "500")
SEEDS = [int(s) for s in os.environ.get("RAGSCOPE_CRASH_SEEDS", "7").split(",") if s.strip()]
RANDOM_KILLS = 3
# the interrupted runs index in small batches; the clean reference run in the default (one) batch
CLEAN_ENV = {k: v for k, v in os.environ.items() if k != "RAGSCOPE_BATCH_TOKENS"}
CLEAN_ENV.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False", PYTHONUNBUFFERED="1")
ENV = dict(CLEAN_ENV, RAGSCOPE_BATCH_TOKENS=BATCH_TOKENS)
COUNT_KEYS = ("documents", "processed", "failed", "pending", "chunks", "entities", "relations", "mention_nodes",
              "mention_edges", "tree_nodes")

# The real CLI, SIGKILLing itself right after the tree vectors of batch argv[1] were upserted into
# ChromaDB, i.e. before that batch's SQLite transaction commits: its vectors become orphans.
KILL_AFTER_UPSERT = textwrap.dedent("""
    import os, signal, sys
    import core.storage.vectors as vectors
    target, seen = int(sys.argv[1]), [0]
    original = vectors.VectorStore.upsert
    def upsert(self, name, *args, **kwargs):
        original(self, name, *args, **kwargs)
        if name == "tree":
            seen[0] += 1
            if seen[0] == target:
                os.kill(os.getpid(), signal.SIGKILL)
    vectors.VectorStore.upsert = upsert
    from core.cli.main import main
    sys.exit(main(sys.argv[2:]))
""")

# Status and vector ids per collection, as ChromaDB holds them and as SQLite expects them (read in a
# fresh process, so that no client of this test process caches an older view of the store).
DUMP = textwrap.dedent("""
    import json, sys
    from core.storage.vectors import COLLECTIONS
    from core.workspace import Workspace
    ws = Workspace(sys.argv[1])
    expected = ws.store.expected_vector_ids()
    vectors = {c: {"have": sorted(ws.vectors.all_ids(c)), "want": sorted(expected[c])} for c in COLLECTIONS}
    print(json.dumps({"status": ws.status(), "vectors": vectors}, default=str))
""")


def index_cmd(workspace: Path, corpus: Path) -> list[str]:
    return ["index", "--quiet", "--workspace", str(workspace), str(corpus)]


def run_cli(args: list[str], env: dict = ENV, timeout: float = 3600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def dump(workspace: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", DUMP, str(workspace)], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def read_db(workspace: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{workspace / 'ragscope.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:  # the database does not exist yet
        return []
    finally:
        conn.close()


def processed_count(workspace: Path) -> int:
    if not (workspace / "ragscope.sqlite3").exists():
        return 0
    rows = read_db(workspace, "SELECT count(*) FROM documents WHERE status='processed'")
    return int(rows[0][0]) if rows else 0


def snapshot(workspace: Path) -> dict:
    """Everything that must not depend on crashes: counts, documents, graphs, tree and vector ids."""
    dumped = dump(workspace)
    status, vectors = dumped["status"], dumped["vectors"]
    return {
        "counts": {k: status[k] for k in COUNT_KEYS},
        "documents": read_db(workspace, "SELECT doc_id, name, status, error, seq, tokens FROM documents ORDER BY seq"),
        "chunks": read_db(workspace, "SELECT chunk_id, doc_id, ord, text FROM chunks ORDER BY chunk_id"),
        "entities": read_db(workspace, "SELECT entity_key, name, type, description, source_chunk_ids, vector_id "
                                       "FROM entities ORDER BY entity_key"),
        "relations": read_db(workspace, "SELECT source_key, target_key, keywords, description, weight, "
                                        "source_chunk_ids, vector_id FROM relations ORDER BY source_key, target_key"),
        "mention_edges": read_db(workspace, "SELECT a, b, weight FROM mention_edges ORDER BY a, b"),
        "mentions": read_db(workspace, "SELECT term, chunk_id, count, label FROM mentions ORDER BY term, chunk_id"),
        "tree": read_db(workspace, "SELECT node_id, scope, doc_id, level, ord, parent_id, child_ids, leaf_chunk_ids, "
                                   "text, vector_id FROM tree_nodes ORDER BY node_id"),
        "doc_roots": read_db(workspace, "SELECT doc_id, root_id, corpus_parent FROM doc_roots ORDER BY doc_id"),
        "vector_ids": {c: v["have"] for c, v in vectors.items()},
        "orphans": {c: sorted(set(v["have"]) - set(v["want"])) for c, v in vectors.items()},
        "missing": {c: sorted(set(v["want"]) - set(v["have"])) for c, v in vectors.items()},
    }


def assert_same(got: dict, want: dict) -> None:
    for key in want:
        if got[key] != want[key]:
            if isinstance(want[key], list):
                extra = [r for r in got[key] if r not in want[key]][:3]
                lost = [r for r in want[key] if r not in got[key]][:3]
                raise AssertionError(f"{key} differ: {len(got[key])} vs {len(want[key])} rows; "
                                     f"unexpected {extra}; expected but absent {lost}")
            raise AssertionError(f"{key} differ: {got[key]} != {want[key]}")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    source = shared_dataset("dev_musique_full") / "corpus.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()[:N_DOCS]
    path = tmp_path_factory.mktemp("crash_corpus") / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def clean_run(corpus, tmp_path_factory) -> dict:
    workspace = tmp_path_factory.mktemp("crash_clean") / "ws"
    started = time.time()
    proc = run_cli(index_cmd(workspace, corpus), env=CLEAN_ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"{N_DOCS} indexed" in proc.stderr
    snap = snapshot(workspace)
    assert snap["counts"]["processed"] == N_DOCS and snap["counts"]["entities"] > 0
    assert snap["counts"]["tree_nodes"] > 0 and snap["counts"]["relations"] > 0
    return {"snapshot": snap, "seconds": time.time() - started,
            "batches": len(read_db(workspace, "SELECT id FROM run_log WHERE event='batch_indexed'"))}


def kill_at(workspace: Path, corpus: Path, after_processed: int, extra_delay: float, timeout: float) -> dict:
    """Start an indexing run; SIGKILL it ``extra_delay`` s after ``after_processed`` documents are committed."""
    proc = subprocess.Popen([sys.executable, "-m", "core", *index_cmd(workspace, corpus)], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + timeout
    try:
        while proc.poll() is None and processed_count(workspace) < after_processed and time.time() < deadline:
            time.sleep(0.05)
        end = time.time() + extra_delay
        while proc.poll() is None and time.time() < end:
            time.sleep(0.02)
        killed = proc.poll() is None
        if killed:
            proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return {"killed": killed, "returncode": proc.returncode, "stderr": err,
            "processed_after": processed_count(workspace)}


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_sigkilled_indexing_resumes_to_the_same_workspace(seed, corpus, clean_run, tmp_path):
    workspace = tmp_path / "ws"
    rng = random.Random(seed)
    log: list[str] = []

    # 1. deterministic crash: batch 2's vectors are in ChromaDB, its SQLite transaction never commits
    proc = subprocess.run([sys.executable, "-c", KILL_AFTER_UPSERT, "2", *index_cmd(workspace, corpus)], cwd=ROOT,
                          env=ENV, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    interrupted = read_db(workspace, "SELECT count(*) FROM documents WHERE status='processing'")[0][0]
    assert interrupted > 0, "the killed batch should be left 'processing'"
    crashed = dump(workspace)["vectors"]
    orphans = {c: set(v["have"]) - set(v["want"]) for c, v in crashed.items()}
    assert orphans["chunks"] and orphans["tree"], orphans  # vectors of the uncommitted batch
    log.append(f"kill after upsert of batch 2: {processed_count(workspace)} processed, {interrupted} interrupted, "
               f"orphans {{{', '.join(f'{c}: {len(o)}' for c, o in orphans.items())}}}")

    # 2. kills at random points: after a random number of further committed documents, plus a random delay
    resume_stderr: list[str] = []
    for _ in range(RANDOM_KILLS):
        done = processed_count(workspace)
        if done >= N_DOCS:
            break
        target = done + rng.randint(1, max(1, (N_DOCS - done) // 3))
        delay = round(rng.uniform(0.0, 4.0), 2)
        outcome = kill_at(workspace, corpus, target, delay, timeout=3600)
        resume_stderr.append(outcome["stderr"])
        log.append(f"kill after >= {target} processed + {delay}s: killed={outcome['killed']}, "
                   f"processed {done} -> {outcome['processed_after']}")
        assert outcome["killed"] or outcome["returncode"] == 0, outcome["stderr"][-3000:]

    # the first restart reconciled ChromaDB with SQLite and said what it repaired (the orphans)
    assert "repaired vectors" in resume_stderr[0] and "'removed'" in resume_stderr[0], resume_stderr[0][-3000:]

    # 3. run again to completion
    final = run_cli(index_cmd(workspace, corpus))
    assert final.returncode == 0, final.stderr[-3000:]
    log.append(f"final run: {final.stderr.strip().splitlines()[-1]}")
    batches = len(read_db(workspace, "SELECT id FROM run_log WHERE event='batch_indexed'"))
    print(f"seed {seed}: " + "; ".join(log) + f"; {batches} batches committed (clean run: {clean_run['batches']} "
          f"batch(es) in {clean_run['seconds']:.0f}s)")
    assert batches >= 4, "the corpus must span several batches for the kills to fall between them"

    snap = snapshot(workspace)
    assert snap["orphans"] == {c: [] for c in orphans} and snap["missing"] == {c: [] for c in orphans}
    assert snap["counts"]["processed"] == N_DOCS and snap["counts"]["pending"] == 0
    # batch boundaries differ from the clean run too: merges and the tree must not depend on them
    assert_same(snap, clean_run["snapshot"])



# --------------------------------------------------------------------------- batch-boundary independence
class ScriptedExtractor:
    """Finds known names in a chunk; consecutive names are related (no spaCy needed)."""

    name = "scripted"
    VOCAB = {"ACME Corp": "ORG", "Acme Corp": "ORG", "Bob Smith": "PERSON", "Jane Doe": "PERSON"}

    def extract(self, texts):
        from core.extraction.nlp import normalize_name
        from core.types import ChunkExtraction, EntityRecord, MentionRecord, RelationRecord

        out = []
        for text in texts:
            found = sorted((text.index(n), n) for n in self.VOCAB if n in text)
            names = [n for _, n in found]
            entities = [EntityRecord(n, self.VOCAB[n], text) for n in names]
            relations = [RelationRecord(a, b, ["works"], text) for a, b in zip(names, names[1:])]
            keys = [normalize_name(n) for n in names]
            mentions = MentionRecord(counts={k: 1 for k in keys}, labels={k: "ENT" for k in keys},
                                     cooccurrence={tuple(sorted(p)): 1 for p in zip(keys, keys[1:])})
            out.append(ChunkExtraction(entities, relations, mentions))
        return out


def _index_in_batches(path: Path, batch_tokens: int):
    from core.indexing.pipeline import process_pending, register_documents
    from core.types import SourceDocument
    from core.workspace import Workspace

    # "acme corp" is first seen as "ACME Corp"; later documents make "Acme Corp" its display name
    docs = [SourceDocument("d1.txt", "ACME Corp works with Bob Smith on the harbour."),
            SourceDocument("d2.txt", "Acme Corp hired Jane Doe in March."),
            SourceDocument("d3.txt", "Acme Corp opened an office with Jane Doe.")]
    ws = Workspace(path, embedder=HashEmbedder())
    with ws.writer():
        register_documents(ws, docs)
        report = process_pending(ws, extractor=ScriptedExtractor(), batch_tokens=batch_tokens)
    assert report.processed == 3 and not report.failed
    conn = ws.store.conn
    rows = {
        "entities": conn.execute("SELECT * FROM entities ORDER BY entity_key").fetchall(),
        "relations": conn.execute("SELECT * FROM relations ORDER BY source_key, target_key").fetchall(),
        "tree": conn.execute("SELECT * FROM tree_nodes ORDER BY node_id").fetchall(),
        "vectors": {c: sorted(ws.vectors.all_ids(c)) for c in ("chunks", "entities", "relations", "tree")},
        "batches": conn.execute("SELECT count(*) FROM run_log WHERE event='batch_indexed'").fetchone()[0],
    }
    ws.close()
    return rows, report


def test_batch_boundaries_do_not_change_the_result(tmp_path):
    one_by_one, _ = _index_in_batches(tmp_path / "small-batches", batch_tokens=1)
    together, _ = _index_in_batches(tmp_path / "one-batch", batch_tokens=10**9)
    assert (one_by_one["batches"], together["batches"]) == (3, 1)
    assert [tuple(r) for r in one_by_one["entities"]] == [tuple(r) for r in together["entities"]]
    acme = next(r for r in together["entities"] if r[0] == "acme corp")
    assert acme[1] == "Acme Corp"
    # the relation first merged under the old display name is refreshed when the name changes
    assert [tuple(r) for r in one_by_one["relations"]] == [tuple(r) for r in together["relations"]]
    assert [tuple(r) for r in one_by_one["tree"]] == [tuple(r) for r in together["tree"]]
    assert one_by_one["vectors"] == together["vectors"]
