#!/usr/bin/env bash
# The proof API under load (issue 4), end to end and reproducible with one command:
# a release build, a private PostgreSQL cluster (its own port and folder; synchronous_commit on),
# then on loopback
#   1. proof uploads of real SVC2004 corpus signatures, 8 connections: wrk with Benchmarks/upload.lua
#      (one proof per delivery; bodies converted from the corpus beforehand by Benchmarks/api_load.py
#      --mode bodies, so the load generator costs about 0.1 ms of CPU per upload instead of 0.3-0.6);
#   2. stored-PNG fetches of one proof (wrk, 1 thread x 32 connections, 10 s) three ways: the
#      the defaults (PNG cache on, API-key cache on: 60 s, emptied by revocations), AUTH_CACHE_SECONDS=0
#      (every request looks its key up), and PNG_CACHE_MB=0.
#
#   Benchmarks/api_bench.sh [UPLOAD_SECONDS]        (default 60)
#
# Environment: BENCH_BINARY (default: `swift build -c release` here), BENCH_PG_PORT and BENCH_PORT
# (default: free ports), COUNTERSIGN_CORPUS (../shared/corpus; synthetic signatures without it).
# The load generator, the server and PostgreSQL share the machine, as the issue asks.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# wrk drives the load; a fresh machine gets it the way it gets every other package.
command -v wrk >/dev/null || COUNTERSIGN_EXTRA_PACKAGES=wrk scripts/deps.sh >&2
seconds="${1:-60}"
port="${BENCH_PORT:-$(python3 scripts/free-port.py)}"
corpus="${COUNTERSIGN_CORPUS:-../shared/corpus}"
export COUNTERSIGN_PG_DIR="${BENCH_PG_DIR:-$PWD/.data/bench}"
PG=scripts/pg.sh
export COUNTERSIGN_PG_PORT="${BENCH_PG_PORT:-$($PG pick-port)}"
server=""
stop_server() { if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; server=""; fi; }
cleanup() { stop_server; $PG stop >/dev/null 2>&1 || true; rm -f "${bodies:-}"; }
trap cleanup EXIT
$PG start >&2
$PG createdb countersign_bench --fresh >&2
url="$($PG url countersign_bench)"
if [ -n "${BENCH_BINARY:-}" ]; then
    binary="$BENCH_BINARY"
else
    swift build -c release --product countersign 2>&1 | grep -E "error|Build complete" >&2
    binary="$(swift build -c release --show-bin-path)/countersign"
fi
MIGRATION_DATABASE_URL="$($PG owner-url countersign_bench)" "$binary" migrate >/dev/null
token="$(DATABASE_URL="$url" "$binary" keys create --role admin --name bench 2>&1 | grep -o 'cs_[A-Za-z0-9_-]*' | head -1)"
psql -q "$url" -c "INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon)
                   SELECT 'L-' || g, 'Load Test', 'Somewhere', 52.52, 13.405 FROM generate_series(0, 59999) g"

serve() {  # serve [VAR=value ...]
    env DATABASE_URL="$url" PORT="$port" HOST=127.0.0.1 LOG_LEVEL=warning RATE_LIMIT_PER_SECOND=0 CHECKPOINT_KEY_GENERATE=true DATA_KEY_GENERATE=true "$@" "$binary" serve \
        >"${TMPDIR:-/tmp}/countersign-bench-server.log" 2>&1 &
    server=$!
    for _ in $(seq 1 200); do curl -fs --max-time 2 "http://127.0.0.1:$port/readyz" >/dev/null && return; sleep 0.1; done
    echo "api_bench: the server did not become ready" >&2; exit 1
}
load() { echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }
# The host's steal share over a run (this VM's speed moves the rates by a quarter; steal is the
# part of that the guest can see).
cpu_times() { awk '/^cpu /{s = 0; for (i = 2; i <= NF; i++) s += $i; print $9, s}' /proc/stat; }
steal_since() {
    local before=($1) after=($(cpu_times))
    echo "host steal during the run: $(( (after[0] - before[0]) * 100 / (after[1] - before[1]) )) %"
}

bodies="${TMPDIR:-/tmp}/countersign-bench-bodies.jsonl"
python3 Benchmarks/api_load.py --mode bodies --out "$bodies" --token unused --corpus "$corpus" >&2
serve
load
echo "== proof uploads, wrk -t1 -c8 -d${seconds}s, $(wc -l <"$bodies") upload bodies round-robin"
times="$(cpu_times)"
wrk -t1 -c8 -d"${seconds}s" --latency -s Benchmarks/upload.lua "http://127.0.0.1:$port" -- "$bodies" "$token" L- \
    | grep -E "Requests/sec|Latency|^ +(50|90|99)%|Non-2xx|Socket errors|requests in"
steal_since "$times"
echo "proofs stored: $(psql -tAq "$url" -c 'SELECT count(*) FROM proofs')"
wrk_png() {
    load
    local times
    times="$(cpu_times)"
    wrk -t1 -c32 -d10s -H "Authorization: Bearer $token" "http://127.0.0.1:$port/v1/deliveries/L-5/proof/signature.png" \
        | grep -E "Requests/sec|Latency|Non-2xx|Socket errors"
    steal_since "$times"
}
echo "== stored-PNG fetch, defaults (PNG_CACHE_MB=32, AUTH_CACHE_SECONDS=60)"
wrk_png
stop_server; serve AUTH_CACHE_SECONDS=0
echo "== stored-PNG fetch, AUTH_CACHE_SECONDS=0 (every fetch looks its key up)"
wrk_png
stop_server; serve PNG_CACHE_MB=0
echo "== stored-PNG fetch, PNG_CACHE_MB=0 (every fetch reads the database)"
wrk_png
echo "audit events: $(psql -tAq "$url" -c 'SELECT count(*) FROM audit_events')"
