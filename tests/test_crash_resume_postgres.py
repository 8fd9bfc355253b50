"""The crash-resume test of ``test_crash_resume.py`` on a PostgreSQL store: ``python -m core index`` is
SIGKILLed between the ChromaDB upsert and the commit, then at random points, run again to completion, and
the final records and vector ids must equal a clean single run's — with every record in PostgreSQL
(``RAGSCOPE_STORE`` names one fresh database per workspace) and no SQLite file in the folders.

The scenario and its assertions are ``test_crash_resume``'s own; only how its helpers reach the
records changes (``read_db`` and ``processed_count`` query PostgreSQL; every CLI run gets the store).
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

import test_crash_resume as crash
from postgres_fixture import create_database, drop_database, postgres_server  # noqa: F401 - fixture
from test_crash_resume import corpus  # noqa: F401 - fixture

psycopg = pytest.importorskip("psycopg")


@pytest.fixture(scope="module")
def on_postgres(postgres_server):
    """Point the crash test's helpers at one PostgreSQL database per workspace folder (restored afterwards)."""
    stores: dict[str, str] = {}

    def store_of(workspace: Path) -> str:
        key = str(Path(workspace).resolve())
        if key not in stores:
            stores[key] = create_database(postgres_server)
        return stores[key]

    def read_db(workspace: Path, sql: str) -> list[tuple]:
        with psycopg.connect(store_of(workspace), autocommit=True) as conn:
            try:
                return [tuple(r) for r in conn.execute(sql).fetchall()]
            except psycopg.errors.UndefinedTable:  # no schema yet
                return []

    def processed_count(workspace: Path) -> int:
        rows = read_db(workspace, "SELECT count(*) FROM documents WHERE status='processed'")
        return int(rows[0][0]) if rows else 0

    def with_store(args: list[str], env: dict) -> dict:
        return dict(env, RAGSCOPE_STORE=store_of(Path(args[args.index("--workspace") + 1])))

    original = {name: getattr(crash, name) for name in ("read_db", "processed_count", "run_cli", "dump", "kill_at")}

    def run_cli(args: list[str], env: dict = crash.ENV, timeout: float = 3600):
        return original["run_cli"](args, env=with_store(args, env), timeout=timeout)

    def dump(workspace: Path) -> dict:
        saved = crash.ENV.get("RAGSCOPE_STORE")
        crash.ENV["RAGSCOPE_STORE"] = store_of(workspace)
        try:
            return original["dump"](workspace)
        finally:
            crash.ENV.pop("RAGSCOPE_STORE", None) if saved is None else crash.ENV.update(RAGSCOPE_STORE=saved)

    def kill_at(workspace: Path, *args, **kwargs) -> dict:
        saved = crash.ENV.get("RAGSCOPE_STORE")
        crash.ENV["RAGSCOPE_STORE"] = store_of(workspace)  # the Popen inside reads the module's ENV
        try:
            return original["kill_at"](workspace, *args, **kwargs)
        finally:
            crash.ENV.pop("RAGSCOPE_STORE", None) if saved is None else crash.ENV.update(RAGSCOPE_STORE=saved)

    for name, function in (("read_db", read_db), ("processed_count", processed_count), ("run_cli", run_cli),
                           ("dump", dump), ("kill_at", kill_at)):
        setattr(crash, name, function)
    try:
        yield store_of
    finally:
        for name, function in original.items():
            setattr(crash, name, function)
        crash.ENV.pop("RAGSCOPE_STORE", None)
        for dsn in stores.values():
            drop_database(dsn)


@pytest.fixture(scope="module")
def pg_clean_run(on_postgres, corpus, tmp_path_factory) -> dict:  # noqa: F811 - the imported fixture
    workspace = tmp_path_factory.mktemp("pg_crash_clean") / "ws"
    started = time.time()
    proc = crash.run_cli(crash.index_cmd(workspace, corpus), env=crash.CLEAN_ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    snap = crash.snapshot(workspace)
    assert snap["counts"]["processed"] == crash.N_DOCS and snap["counts"]["tree_nodes"] > 0
    assert not list(workspace.glob("*.sqlite3"))
    return {"snapshot": snap, "seconds": time.time() - started,
            "batches": len(crash.read_db(workspace, "SELECT id FROM run_log WHERE event='batch_indexed'"))}


@pytest.mark.slow
@pytest.mark.timeout(7200)  # several full indexing runs of the corpus
@pytest.mark.parametrize("seed", crash.SEEDS)
def test_sigkilled_indexing_resumes_on_postgres(seed, corpus, pg_clean_run, on_postgres, tmp_path):  # noqa: F811
    # the scenario's first run is a plain subprocess with the module's ENV: it gets this workspace's store
    crash.ENV["RAGSCOPE_STORE"] = on_postgres(tmp_path / "ws")
    try:
        crash.test_sigkilled_indexing_resumes_to_the_same_workspace(seed, corpus, pg_clean_run, tmp_path)
    finally:
        crash.ENV.pop("RAGSCOPE_STORE", None)
    assert not list((tmp_path / "ws").glob("*.sqlite3"))  # every record was in PostgreSQL
