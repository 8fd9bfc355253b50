"""Connecting to a PostgreSQL store: the store spec as a libpq URL, the URL without its password (for
messages), and ``connect`` — a ``PgConnection`` whose database has the current schema, or an error
that says what to check."""
from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import psycopg

from core.errors import CorruptWorkspaceError
from core.storage.postgres_dialect import PgConnection
from core.storage.postgres_schema import migrate


def connection_string(spec: str) -> str:
    """The libpq connection string of a store spec (``postgresql+psycopg://`` and ``postgres://`` accepted)."""
    scheme, rest = spec.strip().split("://", 1)
    return "postgresql://" + rest if scheme.split("+", 1)[0].lower() in ("postgresql", "postgres") else spec


def redacted(spec: str) -> str:
    """The spec without its password (for messages, logs and the Settings page)."""
    parts = urlsplit(connection_string(spec))
    if parts.password is None:
        return urlunsplit(parts)
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def connect(dsn: str, application_name: str = "ragscope") -> PgConnection:
    """A connection to the store's database, schema created or migrated; a clear error when it cannot."""
    try:
        conn = PgConnection(dsn, application_name)
    except psycopg.Error as exc:
        raise CorruptWorkspaceError(
            f"cannot connect to the PostgreSQL store {redacted(dsn)}: {str(exc).strip()}. Check that the "
            "server runs and the URL (host, port, database, user, password) is right; for a test server "
            "run scripts/start-postgres.sh") from None
    try:
        migrate(conn.raw)
    except psycopg.Error as exc:
        conn.close()
        raise CorruptWorkspaceError(f"the PostgreSQL store {redacted(dsn)} cannot hold a RAGScope workspace "
                                    f"(creating its schema failed: {str(exc).strip()})") from None
    return conn
