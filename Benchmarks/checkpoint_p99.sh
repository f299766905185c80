#!/usr/bin/env bash
# Upload latency across PostgreSQL checkpoints (issue 23, item 5): the same upload load against a
# private cluster twice, once with PostgreSQL's checkpoint defaults (checkpoint_timeout=5min,
# max_wal_size=1GB, wal_compression=off, backend_flush_after=0) and once with the settings scripts/pg.sh starts clusters
# with (10min, 8GB, completion 0.9, lz4), each for SECONDS (default 600: the acceptance run, long
# enough for several checkpoints). For each it prints wrk's p50/p99/max, the checkpoints PostgreSQL
# ran (timed and requested by WAL volume, from pg_stat_bgwriter), WAL bytes per upload, and the
# checkpoint log lines (log_checkpoints), so a latency spike can be matched with a checkpoint.
#
#   Benchmarks/checkpoint_p99.sh [SECONDS] [CONNECTIONS]        (defaults 600 and 8)
#   CHECKPOINT_RUNS=local,frequent Benchmarks/checkpoint_p99.sh  (which configurations, in order)
#   CHECKPOINT_EXTRA_OPTIONS='-c name=value' …   added to every run's settings (an experiment)
#   CHECKPOINT_SLOW_MS=100 …      also list statements slower than 100 ms and autovacuum runs, by minute
#
# Environment: BENCH_BINARY (default: `swift build -c release` here), COUNTERSIGN_CORPUS (default
# ../shared/corpus; synthetic signatures without it). The cluster lives in .data/checkpoint on a
# free port and is stopped at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# wrk drives the load; a fresh machine gets it the way it gets every other package.
command -v wrk >/dev/null || COUNTERSIGN_EXTRA_PACKAGES=wrk scripts/deps.sh >&2
seconds="${1:-600}"
connections="${2:-8}"
corpus="${COUNTERSIGN_CORPUS:-../shared/corpus}"
export COUNTERSIGN_PG_DIR="${CHECKPOINT_PG_DIR:-$PWD/.data/checkpoint}"
PG=scripts/pg.sh
port="$(python3 scripts/free-port.py)"
work="$(mktemp -d "${TMPDIR:-/tmp}/countersign-checkpoint.XXXXXX")"
server=""
stop_server() { if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; server=""; fi; }
cleanup() { stop_server; $PG stop >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
if [ -n "${BENCH_BINARY:-}" ]; then
    binary="$BENCH_BINARY"
else
    swift build -c release --product countersign 2>&1 | grep -E "error|Build complete" >&2
    binary="$(swift build -c release --show-bin-path)/countersign"
fi
python3 Benchmarks/api_load.py --mode bodies --out "$work/bodies.jsonl" --token unused --corpus "$corpus" >&2
export MIGRATIONS_DIR="$PWD/migrations"

run() {  # run LABEL "PG OPTIONS"
    # CHECKPOINT_SLOW_MS: also log every statement slower than that and every autovacuum run, and
    # print them after the checkpoints, so a latency spike can be placed (database or not).
    local slow=""
    [ -z "${CHECKPOINT_SLOW_MS:-}" ] || slow="-c log_min_duration_statement=${CHECKPOINT_SLOW_MS} -c log_autovacuum_min_duration=0"
    export COUNTERSIGN_PG_PORT="$(python3 scripts/free-port.py)" COUNTERSIGN_PG_OPTIONS="-c log_checkpoints=on $slow $2 ${CHECKPOINT_EXTRA_OPTIONS:-}"
    $PG stop >/dev/null 2>&1 || true
    $PG start >&2
    $PG createdb countersign_checkpoint --fresh >&2
    local url; url="$($PG url countersign_checkpoint)"
    MIGRATION_DATABASE_URL="$($PG owner-url countersign_checkpoint)" "$binary" migrate >/dev/null
    local token; token="$(DATABASE_URL="$url" "$binary" keys create --role admin --name checkpoint 2>&1 | grep -o 'cs_[A-Za-z0-9_-]*' | head -1)"
    psql -X -q "$url" -c "INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon)
                          SELECT 'C-' || g, 'Load Test', 'Somewhere', 52.52, 13.405 FROM generate_series(0, $((seconds * 2000))) g"
    env DATABASE_URL="$url" PORT="$port" HOST=127.0.0.1 LOG_LEVEL=warning RATE_LIMIT_PER_SECOND=0 CHECKPOINT_KEY_GENERATE=true DATA_KEY_GENERATE=true \
        DATA_DIR="$work" "$binary" serve >"$work/server.log" 2>&1 &
    server=$!
    for _ in $(seq 1 300); do curl -fs --max-time 2 "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
    local admin; admin="$($PG admin-url countersign_checkpoint)"
    local log; log="$(readlink -f "$COUNTERSIGN_PG_DIR/pg")/server.log"
    local log_start; log_start=$(wc -l <"$log")
    psql -X -q "$admin" -c "CHECKPOINT"
    local before; before="$(psql -X -tA "$admin" -c "SELECT checkpoints_timed || ' ' || checkpoints_req || ' ' || pg_current_wal_lsn() FROM pg_stat_bgwriter")"
    echo "== $1: $(psql -X -tA "$admin" -c "SELECT string_agg(name || '=' || current_setting(name), ' ' ORDER BY name) FROM pg_settings
          WHERE name IN ('checkpoint_timeout', 'checkpoint_completion_target', 'max_wal_size', 'wal_compression', 'backend_flush_after')"), load $(cut -d' ' -f1-3 /proc/loadavg)"
    # 2,000 deliveries per second of run: more than the host uploads, so no request finds its delivery missing.
    wrk -t1 -c"$connections" -d"${seconds}s" --latency -s Benchmarks/upload.lua "http://127.0.0.1:$port" -- "$work/bodies.jsonl" "$token" C- \
        | grep -E "Requests/sec|Latency  |^ +(50|99)%|Non-2xx|requests in" | sed 's/^/   /'
    local uploads; uploads="$(psql -X -tA "$admin" -c "SELECT count(*) FROM proofs")"
    read -r timed requested lsn <<<"$before"
    psql -X -tA "$admin" -c "SELECT '   checkpoints: ' || (checkpoints_timed - $timed) || ' timed, ' || (checkpoints_req - $requested) || ' requested; WAL '
        || pg_size_pretty(pg_current_wal_lsn() - '$lsn'::pg_lsn) || ', ' || round((pg_current_wal_lsn() - '$lsn'::pg_lsn) / greatest($uploads, 1) / 1024.0, 1)
        || ' KB per upload (' || $uploads || ' uploads)' FROM pg_stat_bgwriter"
    tail -n +"$((log_start + 1))" "$log" | grep -E "checkpoint (starting|complete)" | sed 's/^/   /' | cut -c1-220 || true
    if [ -n "$slow" ]; then
        echo "   statements over ${CHECKPOINT_SLOW_MS} ms: $(tail -n +"$((log_start + 1))" "$log" | grep -c "duration:" || true); per minute:"
        tail -n +"$((log_start + 1))" "$log" | grep "duration:" | cut -c1-16 | uniq -c | sed 's/^/     /' || true
        tail -n +"$((log_start + 1))" "$log" | grep -E "automatic (vacuum|analyze)" | sed 's/^/   /' | cut -c1-160 || true
    fi
    stop_server
    $PG stop >/dev/null
}

# CHECKPOINT_RUNS picks and orders the configurations (default: defaults,local). `frequent` is the
# local settings with a checkpoint every 2 minutes: a 10-minute run then spans several complete
# checkpoints, which the local settings' 10-minute interval alone would not.
for which in $(tr ',' ' ' <<<"${CHECKPOINT_RUNS:-defaults,local}"); do
    case "$which" in
        defaults) run "PostgreSQL defaults" "-c checkpoint_timeout=5min -c checkpoint_completion_target=0.9 -c max_wal_size=1GB -c min_wal_size=80MB -c wal_compression=off -c backend_flush_after=0" ;;
        local) run "scripts/pg.sh settings" "" ;;
        frequent) run "scripts/pg.sh settings, checkpoint every 2 min" "-c checkpoint_timeout=2min" ;;
        *) echo "checkpoint_p99: unknown run '$which' (defaults, local, frequent)" >&2; exit 2 ;;
    esac
done
