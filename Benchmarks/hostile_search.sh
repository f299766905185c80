#!/usr/bin/env bash
# Texts without a trigram (issue 41, finding 3) at N deliveries: a private cluster (its own folder
# and a free port), N deliveries made in one SQL statement (delivery_search_text is filled by its
# trigger; these searches read nothing else), one server, then Benchmarks/search_latency.py on the
# four hostile shapes and, as the peer in the same run on the same rows, the common trigram text
# "main street" (every delivery's address).
#
#   Benchmarks/hostile_search.sh BINARY [N] [REQUESTS]      (defaults 1000000 and 200)
#
# PEER_BINARY=… serves the same rows too, in alternating rounds (ROUNDS, default 2): the comparison
# in one run (a build from before issue 41 shows what these texts cost then). Leaves nothing
# behind: the cluster's folder is removed at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
binary="$1"
count="${2:-1000000}"
requests="${3:-200}"
export COUNTERSIGN_PG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/countersign-hostile.XXXXXX")"
PG=scripts/pg.sh
export COUNTERSIGN_PG_PORT="$($PG pick-port)"
port="$(python3 scripts/free-port.py)"
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    $PG stop >/dev/null 2>&1 || true
    rm -rf "$COUNTERSIGN_PG_DIR"
}
trap cleanup EXIT
$PG start >&2
$PG createdb countersign_hostile >&2
MIGRATION_DATABASE_URL="$($PG owner-url countersign_hostile)" "$binary" migrate >/dev/null
started=$(date +%s)
psql -q "$($PG owner-url countersign_hostile)" -c "
    INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon)
    SELECT 'HS-' || i, 'Recipient ' || i, i || ' Main Street', 52.52, 13.40 FROM generate_series(1, $count) i" \
    -c "VACUUM ANALYZE deliveries" -c "VACUUM ANALYZE delivery_search_text"
echo "hostile_search: $count deliveries in $(( $(date +%s) - started )) s" >&2
url="$($PG url countersign_hostile)"
token="$(DATABASE_URL="$url" "$binary" keys create --name bench --role auditor | grep -o 'cs_[A-Za-z0-9_-]*' | head -1)"
measure() {
    DATABASE_URL="$url" PORT="$port" CHECKPOINT_KEY_GENERATE=true DATA_KEY_GENERATE=true DATA_DIR="$COUNTERSIGN_PG_DIR/data" RATE_LIMIT_PER_SECOND=0 \
        LOG_LEVEL=error "$1" serve >/dev/null 2>&1 &
    server=$!
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.2; done
    echo "== $1 ($("$1" --version 2>/dev/null || echo build))"
    python3 Benchmarks/search_latency.py --url "http://127.0.0.1:$port" --token "$token" --requests "$requests" \
        --only "q %%%,q ---,q emoji,q e s,q common"
    kill "$server"; wait "$server" 2>/dev/null || true; server=""
}
for _ in $(seq 1 "${ROUNDS:-2}"); do
    measure "$binary"
    if [ -n "${PEER_BINARY:-}" ]; then measure "$PEER_BINARY"; fi
done
