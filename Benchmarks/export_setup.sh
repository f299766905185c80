# Sourced by export_bench.sh and bundle_memory.sh: the private cluster, the template proof that
# export_fill.py copies, and the server they export from.
#
#   export_setup BINARY WORK    starts the cluster in $COUNTERSIGN_PG_DIR (database export_bench,
#                               created fresh), migrates with BINARY, creates an admin key ($token),
#                               uploads delivery TPL-0's proof and sets $key (the checkpoint key);
#                               WORK holds the checkpoint key file, the server's data and its log
#   start_server BINARY         serves on a free port ($port, $server); waits until healthy
#   stop_server
#   api CURL-ARGS…              curl with the admin token
# The caller traps EXIT with export_cleanup.

server=""
export_cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; server=""; fi
    scripts/pg.sh stop >/dev/null 2>&1 || true
}

start_server() {
    port="$(python3 scripts/free-port.py)"
    DATA_DIR="$export_work" PORT=$port "$1" serve >"$export_work/server.log" 2>&1 &
    server=$!
    for _ in $(seq 200); do curl -sf --max-time 2 "http://127.0.0.1:$port/healthz" >/dev/null && return; sleep 0.1; done
    echo "$(basename "$0"): the server did not start" >&2; cat "$export_work/server.log" >&2; exit 1
}
stop_server() { kill "$server"; wait "$server" 2>/dev/null || true; server=""; }
api() { curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' "$@"; }

export_setup() {
    local binary="$1"
    export_work="$2"
    mkdir -p "$export_work"
    scripts/pg.sh start >/dev/null
    scripts/pg.sh createdb export_bench --fresh >/dev/null
    export DATABASE_URL="$(scripts/pg.sh url export_bench)" LOG_LEVEL=warning RATE_LIMIT_PER_SECOND=0 MIGRATIONS_DIR="$PWD/migrations"
    openssl genpkey -algorithm ed25519 -out "$export_work/checkpoint.pem" 2>/dev/null
    export CHECKPOINT_KEY_FILE="$export_work/checkpoint.pem"
    printf 'bench-1 %s\n' "$(openssl rand -base64 32)" > "$export_work/data-keys"
    export DATA_KEY_FILE="$export_work/data-keys"
    MIGRATION_DATABASE_URL="$(scripts/pg.sh owner-url export_bench)" "$binary" migrate >/dev/null
    token="$("$binary" keys create --role admin --name bench | tail -1)"
    start_server "$binary"
    api -d '{"reference":"TPL-0","recipient":{"name":"Ada"},"address":"1 Main St","destination":{"lat":52.52,"lon":13.405}}' \
        "http://127.0.0.1:$port/v1/deliveries" >/dev/null
    api --data-binary @docs/examples/proof-upload.json "http://127.0.0.1:$port/v1/deliveries/TPL-0/proof" >/dev/null
    key="$(api "http://127.0.0.1:$port/v1/audit/checkpoint" | python3 -c 'import json, sys; print(json.load(sys.stdin)["public_key"])')"
    stop_server
}
