# Sourced by test scripts that need a live `countersign serve`: a fresh database on the running
# cluster (scripts/pg.sh), a free port, a generated development checkpoint key in a temporary data
# folder, and the server stopped on exit (also on failure).
#
#   . scripts/live-server.sh
#   live_server_start BINARY DATABASE LOG_FILE     sets LIVE_BASE (http://127.0.0.1:PORT) and LIVE_DATABASE_URL
#   live_server_key ROLE NAME                       prints a new API key of that role
#
# The caller's EXIT trap must call live_server_stop (set here when the caller has none).

LIVE_SERVER_PID=""

live_server_stop() {
    if [ -n "$LIVE_SERVER_PID" ] && kill -0 "$LIVE_SERVER_PID" 2>/dev/null; then
        kill "$LIVE_SERVER_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$LIVE_SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$LIVE_SERVER_PID" 2>/dev/null || true
        wait "$LIVE_SERVER_PID" 2>/dev/null || true
    fi
    [ -z "${LIVE_DATA_DIR:-}" ] || rm -rf "$LIVE_DATA_DIR"
}

live_server_start() {
    local binary="$1" database="$2" log="$3" port
    [ -x "$binary" ] || { echo "live-server: no server binary at $binary" >&2; return 1; }
    port="$(python3 scripts/free-port.py)"
    scripts/pg.sh createdb "$database" --fresh >/dev/null
    LIVE_DATABASE_URL="$(scripts/pg.sh url "$database")"
    # The owner migrates; the server connects as the runtime role (docs/decisions/0017-two-database-roles.md).
    MIGRATION_DATABASE_URL="$(scripts/pg.sh owner-url "$database")" "$binary" migrate >/dev/null
    LIVE_DATA_DIR="$(mktemp -d)"
    LIVE_BASE="http://127.0.0.1:$port"
    DATABASE_URL="$LIVE_DATABASE_URL" HOST=127.0.0.1 PORT="$port" PUBLIC_DIR="$PWD/public" LOG_LEVEL=notice \
        DATA_DIR="$LIVE_DATA_DIR" CHECKPOINT_KEY_GENERATE=true DATA_KEY_GENERATE=true "$binary" serve >"$log" 2>&1 &
    LIVE_SERVER_PID=$!
    LIVE_BINARY="$binary"
    for _ in $(seq 150); do
        if curl -fsS --max-time 2 "$LIVE_BASE/readyz" >/dev/null 2>&1; then return 0; fi
        if ! kill -0 "$LIVE_SERVER_PID" 2>/dev/null; then
            echo "live-server: the server exited; its log:" >&2
            cat "$log" >&2
            return 1
        fi
        sleep 0.2
    done
    echo "live-server: the server did not become ready on $LIVE_BASE" >&2
    return 1
}

live_server_key() {
    DATABASE_URL="$LIVE_DATABASE_URL" "$LIVE_BINARY" keys create --role "$1" --name "$2" 2>/dev/null
}
