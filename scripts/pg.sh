#!/usr/bin/env bash
# Local PostgreSQL cluster for development and tests, kept under .data/ in the repository.
#
#   scripts/pg.sh start        create the cluster if missing, start it if not running
#   scripts/pg.sh stop         stop it (fast shutdown) if running
#   scripts/pg.sh restart      stop then start (used by the outage tests)
#   scripts/pg.sh crash        immediate shutdown: no checkpoint, so the next start recovers from the
#                              WAL as after a crash (used by the reliability crash test)
#   scripts/pg.sh status       exit 0 when running
#   scripts/pg.sh port         print the port it runs on (when stopped: the port it would start on)
#   scripts/pg.sh pick-port    print the port it runs on, or when stopped a free one (scripts/free-port.py):
#                              what a script exports as COUNTERSIGN_PG_PORT for its private cluster
#   scripts/pg.sh createdb DB [--fresh]   create database DB owned by the owner role
#   scripts/pg.sh url DB       print the runtime role's URL for DB: what `serve`, `keys`, `export` use
#   scripts/pg.sh owner-url DB print the owner role's URL for DB: what `migrate` uses (MIGRATION_DATABASE_URL)
#   scripts/pg.sh admin-url DB print the superuser's URL for DB (cluster set-up and tests that tamper)
#
# Two roles, as in production (docs/decisions/0017-two-database-roles.md): `countersign` owns the
# databases and everything `countersign migrate` creates in them; `countersign_app` (the runtime
# role, made here so `migrate` finds it: operator-managed, no password under trust auth) is what
# the service connects as, with only what `migrate` grants it. Neither is a superuser.
#
# Port and folder: COUNTERSIGN_PG_PORT (default 5544) and COUNTERSIGN_PG_DIR (default .data/); extra server
# settings: COUNTERSIGN_PG_OPTIONS ("-c name=value ...", after the checkpoint settings below). Test and
# benchmark scripts export both for a private cluster on a free port (scripts/free-port.py), so every
# start, stop, restart, crash and url of one run agrees on them. A start fails, naming the port, when
# another process listens there, or when this folder's cluster is already running on another port.
#
# PostgreSQL refuses to run as root: when we are root the cluster belongs to the unprivileged
# `postgres` system user (created by Debian's postgresql package).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PORT="${COUNTERSIGN_PG_PORT:-5544}"
DATA_ROOT="${COUNTERSIGN_PG_DIR:-$ROOT/.data}"
OWNER_ROLE=countersign
RUNTIME_ROLE=countersign_app

pg_bin() {
    local dir
    dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
    [ -n "$dir" ] || { echo "pg.sh: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }
    echo "$dir"
}

as_owner() {
    # From /, so the postgres user never needs access to the caller's working directory.
    if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

# When root, the postgres user must be able to reach the data folder; if a parent directory is
# closed to it (a checkout under /root, say), keep the cluster in /var/tmp and link it from .data.
prepare_dirs() {
    mkdir -p "$DATA_ROOT"
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || { echo "pg.sh: no 'postgres' user; install Debian's postgresql package" >&2; exit 1; }
        if ! runuser -u postgres -- test -x "$DATA_ROOT"; then
            local alt="/var/tmp/countersign-pg-$(echo -n "$DATA_ROOT" | sha256sum | cut -c1-12)"
            mkdir -p "$alt"
            [ -L "$DATA_ROOT/pg" ] || ln -sfn "$alt/pg" "$DATA_ROOT/pg"
            [ -L "$DATA_ROOT/run" ] || ln -sfn "$alt/run" "$DATA_ROOT/run"
            mkdir -p "$alt/pg" "$alt/run"
            chown postgres: "$alt" "$alt/pg" "$alt/run"
        fi
        mkdir -p "$DATA_ROOT/pg" "$DATA_ROOT/run"
        chown postgres: "$(readlink -f "$DATA_ROOT/pg")" "$(readlink -f "$DATA_ROOT/run")"
    else
        mkdir -p "$DATA_ROOT/pg" "$DATA_ROOT/run"
    fi
    chmod 700 "$(readlink -f "$DATA_ROOT/pg")"
}

# Resolved paths: when the cluster lives in /var/tmp (see prepare_dirs) the postgres user must not
# have to pass through the link in a directory it cannot enter.
PGDATA_DIR() { readlink -f "$DATA_ROOT/pg"; }
SOCKET_DIR() { readlink -f "$DATA_ROOT/run"; }

# The port the running cluster listens on (postmaster.pid, line 4).
running_port() { sed -n 4p "$(PGDATA_DIR)/postmaster.pid" 2>/dev/null || true; }

# True when something (PostgreSQL of another checkout, any service) listens on 127.0.0.1:$1; probed
# the way the postmaster binds, with SO_REUSEADDR, so our own closed connections do not count.
port_taken() {
    python3 -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try: s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError: sys.exit(0)
sys.exit(1)' "$1"
}

is_running() {
    [ -f "$(PGDATA_DIR)/PG_VERSION" ] || return 1
    as_owner "$(pg_bin)/pg_ctl" -D "$(PGDATA_DIR)" status >/dev/null 2>&1
}

psql_admin() {
    export PGOPTIONS="-c client_min_messages=warning"
    local db="$1"; shift
    as_owner psql -X -q -v ON_ERROR_STOP=1 -h "$(SOCKET_DIR)" -p "$PORT" -U postgres -d "$db" "$@"
}

# Checkpoints spread over most of a 10-minute interval and started by time rather than by WAL
# volume (an upload writes about 36 KB of WAL, measured by Benchmarks/checkpoint_p99.sh: at 400
# uploads/s the default 1 GB max_wal_size forces a checkpoint every 70 s, each followed by a burst
# of full-page images; 8 GB lasts 9 minutes at that rate), with those images compressed. Benchmarks/checkpoint_p99.sh compares these with PostgreSQL's defaults;
# docs/operations.md has the production settings. Backends write out the pages they evict soon
# after (backend_flush_after): an upload's TOAST pages mostly leave shared buffers that way, and
# left to the kernel they pile up as gigabytes of dirty cache that the checkpoint's fsync then
# writes at once, stalling commits behind it. COUNTERSIGN_PG_OPTIONS (more `-c name=value`)
# comes after, so a script can override any of them.
# log_parameter_max_length=0: a statement logged for its duration is logged without its bound
# values, among them the bearer token the definer functions hash to find the acting key (decision 0041).
LOG_OPTIONS="-c log_parameter_max_length=0"
CHECKPOINT_OPTIONS="-c checkpoint_timeout=10min -c checkpoint_completion_target=0.9 -c max_wal_size=8GB -c min_wal_size=512MB -c wal_compression=lz4 -c backend_flush_after=256kB"

cmd_start() {
    prepare_dirs
    local bin; bin="$(pg_bin)"
    if [ ! -f "$(PGDATA_DIR)/PG_VERSION" ]; then
        echo "pg.sh: creating a PostgreSQL cluster in $(PGDATA_DIR)"
        as_owner "$bin/initdb" -D "$(PGDATA_DIR)" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    fi
    if is_running; then
        local running; running="$(running_port)"
        if [ -n "$running" ] && [ "$running" != "$PORT" ]; then
            echo "pg.sh: the cluster in $(PGDATA_DIR) already runs on port $running, not $PORT:" \
                 "stop it first, or set COUNTERSIGN_PG_PORT=$running" >&2
            exit 1
        fi
        return 0
    fi
    if port_taken "$PORT"; then
        echo "pg.sh: 127.0.0.1:$PORT is in use by another process (another PostgreSQL?);" \
             "set COUNTERSIGN_PG_PORT to a free port (scripts/free-port.py prints one)" >&2
        exit 1
    fi
    echo "pg.sh: starting PostgreSQL on 127.0.0.1:$PORT (socket in $(SOCKET_DIR))"
    as_owner "$bin/pg_ctl" -D "$(PGDATA_DIR)" -l "$(PGDATA_DIR)/server.log" -w -t 30 start \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -k $(SOCKET_DIR) -c max_connections=400 -c fsync=${COUNTERSIGN_PG_FSYNC:-on} $LOG_OPTIONS $CHECKPOINT_OPTIONS ${COUNTERSIGN_PG_OPTIONS:-}" >/dev/null
    psql_admin postgres -c "DO \$\$ BEGIN
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$OWNER_ROLE') THEN CREATE ROLE $OWNER_ROLE LOGIN CREATEDB; END IF;
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$RUNTIME_ROLE') THEN CREATE ROLE $RUNTIME_ROLE LOGIN; END IF;
        END \$\$;"
}

cmd_stop() {  # cmd_stop [fast|immediate]
    local mode="${1:-fast}"
    if is_running; then
        echo "pg.sh: stopping PostgreSQL ($mode shutdown)"
        as_owner "$(pg_bin)/pg_ctl" -D "$(PGDATA_DIR)" -m "$mode" -w -t 60 stop >/dev/null
    fi
}

cmd_createdb() {
    local db="$1" fresh="${2:-}"
    if [ "$fresh" = "--fresh" ]; then
        psql_admin postgres -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)"
    fi
    if [ -z "$(psql_admin postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" ]; then
        psql_admin postgres -c "CREATE DATABASE \"$db\" OWNER $OWNER_ROLE"
    fi
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    restart) cmd_stop; cmd_start ;;
    crash) cmd_stop immediate ;;
    status) is_running ;;
    createdb) shift; cmd_createdb "$@" ;;
    url) echo "postgres://$RUNTIME_ROLE@127.0.0.1:$PORT/${2:-countersign}" ;;
    owner-url) echo "postgres://$OWNER_ROLE@127.0.0.1:$PORT/${2:-countersign}" ;;
    admin-url) echo "postgres://postgres@127.0.0.1:$PORT/${2:-countersign}" ;;
    socket-dir) SOCKET_DIR ;;
    port) if is_running && [ -n "$(running_port)" ]; then running_port; else echo "$PORT"; fi ;;
    pick-port) if is_running && [ -n "$(running_port)" ]; then running_port; else python3 "$ROOT/scripts/free-port.py"; fi ;;
    *) echo "usage: scripts/pg.sh start|stop|restart|crash|status|port|pick-port|createdb DB [--fresh]|url DB|owner-url DB|admin-url DB|socket-dir" >&2; exit 2 ;;
esac
