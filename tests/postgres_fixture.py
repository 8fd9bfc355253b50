"""PostgreSQL for the tests (imported by the test files that need it; not a conftest).

``postgres_server`` (session) starts one throw-away cluster with ``scripts/start-postgres.sh`` (which
installs Debian's postgresql when missing) and stops and deletes it at the end of the session;
``RAGSCOPE_TEST_POSTGRES=postgresql://…`` uses a running server instead (nothing is started or
stopped; each test still gets a database of its own, dropped afterwards). ``pg_store`` (per test)
creates a fresh, empty database and yields its URL.

When PostgreSQL cannot be started the tests fail if ``RAGSCOPE_REQUIRE`` names ``postgres`` (or is
``all``) and skip otherwise.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "start-postgres.sh"

try:
    from conftest import require_or_skip  # added by the tests' conftest (RAGSCOPE_REQUIRE)
except ImportError:  # an older conftest: the same rule, locally
    def require_or_skip(name: str, reason: str) -> None:
        required = {p.strip() for p in os.environ.get("RAGSCOPE_REQUIRE", "").split(",") if p.strip()}
        if name in required or "all" in required:
            pytest.fail(reason)
        pytest.skip(reason)


def _with_database(dsn: str, database: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path="/" + database))


@pytest.fixture(scope="session")
def postgres_server():
    """The admin URL (…/postgres) of the session's PostgreSQL server."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        require_or_skip("postgres", "the PostgreSQL driver is not installed (pip install -r requirements.txt)")
    given = os.environ.get("RAGSCOPE_TEST_POSTGRES", "").strip()
    if given:
        yield given
        return
    folder = Path(tempfile.mkdtemp(prefix="ragscope-pg-", dir="/tmp"))
    env = dict(os.environ, RAGSCOPE_PG_FSYNC="off")
    try:
        done = subprocess.run(["bash", str(SCRIPT), "start", str(folder)], capture_output=True, text=True,
                              timeout=600, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(folder, ignore_errors=True)
        require_or_skip("postgres", f"scripts/start-postgres.sh could not run: {exc}")
    if done.returncode != 0 or not done.stdout.strip():
        subprocess.run(["bash", str(SCRIPT), "stop", str(folder)], capture_output=True, timeout=120)
        require_or_skip("postgres", f"PostgreSQL could not be started (scripts/start-postgres.sh exited "
                                    f"{done.returncode}): {done.stderr.strip()[-1500:]}")
    dsn = done.stdout.strip().splitlines()[-1]
    try:
        yield dsn
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(folder)], capture_output=True, timeout=120)


def create_database(admin_dsn: str) -> str:
    """A new empty database on the server of ``admin_dsn``; returns its URL."""
    import psycopg

    name = "rs_" + uuid.uuid4().hex[:12]
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return _with_database(admin_dsn, name)


def drop_database(dsn: str) -> None:
    import psycopg

    name = urlsplit(dsn).path.lstrip("/")
    with psycopg.connect(_with_database(dsn, "postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture()
def pg_store(postgres_server):
    """The URL of a fresh database for one test (dropped afterwards)."""
    dsn = create_database(postgres_server)
    try:
        yield dsn
    finally:
        drop_database(dsn)
