#!/usr/bin/env bash
# A throw-away PostgreSQL cluster on 127.0.0.1 for the tests and for trying the PostgreSQL store.
#
#   scripts/start-postgres.sh [DIR]        start (installing Debian's postgresql when missing); prints the DSN
#   scripts/start-postgres.sh stop [DIR]   stop the cluster and delete DIR
#   scripts/start-postgres.sh restart [DIR]  restart the running cluster (same port and data; every
#                                            client session is dropped: the reconnection test uses it)
#
# DIR defaults to $RAGSCOPE_PG_DIR or /tmp/ragscope-pg. The cluster trusts local connections (user
# "postgres", no password), listens on 127.0.0.1 only, on a free port (or $RAGSCOPE_PG_PORT), and keeps
# its socket in DIR; RAGSCOPE_PG_FSYNC=off trades durability for speed (the test fixture sets it).
# It is for tests: never point it at data you want to keep.
# The last line on stdout is the DSN (postgresql://postgres@127.0.0.1:PORT/postgres); DIR/dsn holds it too.
set -euo pipefail

action=start
if [[ "${1:-}" == "stop" || "${1:-}" == "start" || "${1:-}" == "restart" ]]; then
    action=$1
    shift
fi
DIR=${1:-${RAGSCOPE_PG_DIR:-/tmp/ragscope-pg}}
DATA=$DIR/data

find_bin() {
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    if [[ -n "$found" && -x "$found/initdb" ]]; then
        echo "$found"
        return 0
    fi
    if command -v initdb >/dev/null 2>&1; then
        dirname "$(command -v initdb)"
        return 0
    fi
    return 1
}

# Run a command as the cluster's OS user: initdb and postgres refuse to run as root.
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

if [[ $action == stop ]]; then
    if BIN=$(find_bin) && [[ -f $DATA/postmaster.pid ]]; then
        as_owner "$BIN/pg_ctl" -D "$DATA" stop -m fast -w >&2 || true
    fi
    rm -rf "$DIR"
    echo "stopped; removed $DIR" >&2
    exit 0
fi

if [[ $action == restart ]]; then
    if ! BIN=$(find_bin) || [[ ! -f $DATA/postmaster.pid ]]; then
        echo "error: no cluster runs in $DIR (start it first)" >&2
        exit 1
    fi
    as_owner "$BIN/pg_ctl" -D "$DATA" restart -m fast -w -l "$DIR/server.log" >&2
    cat "$DIR/dsn"
    exit 0
fi

if ! BIN=$(find_bin); then
    echo "postgresql is not installed: installing Debian's package" >&2
    if [[ $(id -u) -ne 0 ]]; then
        echo "error: installing postgresql needs root (apt-get install postgresql)" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends postgresql >&2
    BIN=$(find_bin) || { echo "error: postgresql installed but initdb not found" >&2; exit 1; }
fi
if [[ $(id -u) -eq 0 ]] && ! id postgres >/dev/null 2>&1; then
    useradd --system --home-dir /var/lib/postgresql --shell /bin/sh postgres
fi

if [[ -f $DATA/postmaster.pid ]] && as_owner "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    cat "$DIR/dsn"
    exit 0
fi

PORT=${RAGSCOPE_PG_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')}
rm -rf "$DIR"
mkdir -p "$DIR"
if [[ $(id -u) -eq 0 ]]; then
    chown postgres "$DIR"
fi
as_owner "$BIN/initdb" -D "$DATA" -A trust -U postgres --encoding=UTF8 --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1 || {
    cat "$DIR/initdb.log" >&2
    exit 1
}
as_owner "$BIN/pg_ctl" -D "$DATA" -l "$DIR/server.log" \
    -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=${RAGSCOPE_PG_FSYNC:-on} -c max_connections=200" start -w >&2 || {
    cat "$DIR/server.log" >&2
    exit 1
}
DSN="postgresql://postgres@127.0.0.1:$PORT/postgres"
echo "$DSN" >"$DIR/dsn"
echo "$DSN"
