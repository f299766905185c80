#!/usr/bin/env bash
# The service at growing size (issue 23, item 7): a private PostgreSQL cluster (its own folder and a
# free port) grown to N proofs, and at each step (the 640 seeds, 25k, 50k, 100k, 200k, … doubling, then N):
#   - upload rate and p50/p99 over HTTP (wrk -t1 -c8, real SVC2004 signatures, one proof per delivery),
#   - `countersign verify --database --from-checkpoint` over those uploads' events (a checkpoint is
#     witnessed just before them), then the full `verify --database`: wall time and peak RSS,
#   - `countersign export` of a day (SCALE_EXPORT_HOURS) as a ZIP: proofs/s, MB/s, peak RSS, then
#     `countersign verify` of that bundle: proofs/s, peak RSS; then the same for the step's own uploads,
#   - search latency p50/p95/p99 (Benchmarks/search_latency.py: world, country, city, antimeridian and
#     sparse bbox, near, q, flag; 200 requests each, one at a time, paging every tenth request).
#
#   Benchmarks/scale.sh [N] [UPLOAD_SECONDS]          (defaults 200000 and 20)
#
# Growth is fast because only the measured part goes through HTTP: 640 real uploads first (the
# seeds), then each step adds deliveries with proofs copied from the seeds in one SQL transaction
# (Benchmarks/scale/grow.sql: about 34 KB of disk per proof), and each copy's `proof_recorded` event,
# hashed into its chain (Benchmarks/proof_events.py): `verify --database`, the exporter's check and
# bundle verification hold over the grown history as over uploads.
#
# Environment: BENCH_BINARY (default: `swift build -c release` here), SEARCH_BINARY (the binary that
# serves the search measurements; default BENCH_BINARY), SEARCH_PEER_BINARY (another build whose
# searches are measured right after, on the same database: the comparison), SCALE_PG_DIR (default .data/scale),
# SCALE_PG_PORT and SCALE_PORT (default: free ports), SCALE_STEPS (only these steps, e.g. "1000000"),
# SCALE_ONLY_UPLOADS=1 (measure the uploads alone: `SCALE_STEPS=1000000 SCALE_ONLY_UPLOADS=1
# Benchmarks/scale.sh 1000000 600` is the 10-minute p99 at a million proofs), COUNTERSIGN_CORPUS (default ../shared/corpus;
# without it the script says so and exits 0: the corpus is never copied into the repository).
# Leaves the cluster's folder for a later, larger run (it continues from the proofs there); delete
# it to start again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# wrk drives the load; a fresh machine gets it the way it gets every other package.
command -v wrk >/dev/null || COUNTERSIGN_EXTRA_PACKAGES=wrk scripts/deps.sh >&2
target="${1:-200000}"
seconds="${2:-20}"
corpus="${COUNTERSIGN_CORPUS:-../shared/corpus}"
if [ ! -d "$corpus/svc2004-task2" ]; then
    echo "scale: no signature corpus at $corpus (see ../shared/corpus/README.md); skipped"
    exit 0
fi
export COUNTERSIGN_PG_DIR="${SCALE_PG_DIR:-$PWD/.data/scale}"
PG=scripts/pg.sh
export COUNTERSIGN_PG_PORT="${SCALE_PG_PORT:-$($PG pick-port)}"
port="${SCALE_PORT:-$(python3 scripts/free-port.py)}"
work="$(mktemp -d "${TMPDIR:-/tmp}/countersign-scale.XXXXXX")"
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
search_binary="${SEARCH_BINARY:-$binary}"
$PG start >&2
$PG createdb countersign_scale >&2
url="$($PG url countersign_scale)"
admin_url="$($PG admin-url countersign_scale)"
export MIGRATIONS_DIR="$PWD/migrations"
MIGRATION_DATABASE_URL="$($PG owner-url countersign_scale)" "$binary" migrate >/dev/null
token="$(DATABASE_URL="$url" "$binary" keys create --role admin --name "scale $$" 2>&1 | grep -o 'cs_[A-Za-z0-9_-]*' | head -1)"
openssl genpkey -algorithm ed25519 -out "$work/checkpoint.pem" 2>/dev/null
export CHECKPOINT_KEY_FILE="$work/checkpoint.pem"
printf 'bench-1 %s\n' "$(openssl rand -base64 32)" > "$work/data-keys"
export DATA_KEY_FILE="$work/data-keys"

mkdir -p "$work/witness"
serve() {  # serve BINARY; scheduled checkpoints only while $checkpoint_interval is set (witness_now)
    env DATABASE_URL="$url" PORT="$port" HOST=127.0.0.1 LOG_LEVEL=warning RATE_LIMIT_PER_SECOND=0 \
        CHECKPOINT_WITNESS_DIR="$work/witness" CHECKPOINT_INTERVAL_SECONDS="${checkpoint_interval:-0}" "$1" serve \
        >"$work/server.log" 2>&1 &
    server=$!
    for _ in $(seq 1 300); do curl -fs --max-time 2 "http://127.0.0.1:$port/readyz" >/dev/null && return; sleep 0.1; done
    echo "scale: the server did not become ready" >&2; cat "$work/server.log" >&2; exit 1
}
# A witnessed checkpoint of everything stored so far, so that the incremental verification after
# the measured uploads walks exactly those: the server runs with a 1 s schedule until a new
# witness file appears, then serves on with none.
witness_now() {  # witness_now BINARY
    local before; before="$(ls "$work/witness" | wc -l)"
    stop_server; checkpoint_interval=1 serve "$1"
    for _ in $(seq 1 150); do [ "$(ls "$work/witness" | wc -l)" -gt "$before" ] && break; sleep 0.2; done
    stop_server; serve "$1"
}
# Bulk growth writes as the owner (it sets sequences and copies audit rows the runtime role may not).
sql() { psql -X -tAq -v ON_ERROR_STOP=1 "$($PG owner-url countersign_scale)" "$@"; }
proofs() { sql -c "SELECT count(*) FROM proofs"; }
# Peak resident set of a command, from GNU time: "<seconds> <KB>" on the last line of $work/time.
timed() { /usr/bin/time -o "$work/time" -f "%e %M" "$@"; }
# Exports [since, until) as a ZIP with the CLI (proofs/s, MB/s, peak RSS), verifies the bundle
# (proofs/s, peak RSS, its last line), then deletes it.
export_and_verify() {
    local since="$1" until="$2" count elapsed rss size
    count="$(sql -c "SELECT count(*) FROM proofs WHERE received_at >= '$since' AND received_at < '$until'")"
    if ! timed env DATABASE_URL="$url" "$binary" export --since "$since" --until "$until" -o "$work/export.zip" >/dev/null 2>"$work/export.err"; then
        echo "   export failed: $(grep -v WARNING "$work/export.err" | tail -n 1 | cut -c1-200)"
        rm -f "$work/export.zip"
        return
    fi
    read -r elapsed rss < <(tail -n 1 "$work/time")
    size=$(stat -c %s "$work/export.zip" 2>/dev/null || echo 0)
    python3 -c "import sys; n,s,e,r=int(sys.argv[1]),int(sys.argv[2]),float(sys.argv[3]),int(sys.argv[4]); print(f'   export: {n} proofs, {s/1e6:.0f} MB in {e:.1f} s: {n/max(e,0.01):.0f} proofs/s, {s/1e6/max(e,0.01):.1f} MB/s, peak RSS {r//1024} MB')" \
        "$count" "$size" "$elapsed" "$rss"
    timed "$binary" verify "$work/export.zip" --trust-embedded-key >"$work/verify-bundle.txt" 2>&1 || true
    read -r elapsed rss < <(tail -n 1 "$work/time")
    python3 -c "import sys; n,e,r=int(sys.argv[1]),float(sys.argv[2]),int(sys.argv[3]); print(f'   verify: {n} proofs in {e:.1f} s: {n/max(e,0.01):.0f} proofs/s, peak RSS {r//1024} MB')" \
        "$count" "$elapsed" "$rss"
    grep -v WARNING "$work/verify-bundle.txt" | tail -n 1 | cut -c1-160 | sed 's/^/     /'
    rm -f "$work/export.zip"
}

python3 Benchmarks/api_load.py --mode bodies --out "$work/bodies.jsonl" --token unused --corpus "$corpus" >&2
serve "$binary"
if [ "$(sql -c "SELECT count(*) FROM deliveries WHERE reference LIKE 'SEED-%'")" = 0 ]; then
    sql -c "INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon)
            SELECT 'SEED-' || g, 'Seed Recipient', 'Seed Street', 52.52, 13.405 FROM generate_series(0, 639) g"
    echo "scale: 640 seed uploads over HTTP" >&2
    python3 Benchmarks/api_load.py --url "http://127.0.0.1:$port" --token "$token" --mode upload --prefix SEED- --count 640 \
        --duration 600 --corpus "$corpus" >&2
    [ "$(proofs)" -ge 640 ] || { echo "scale: the seed uploads failed" >&2; exit 1; }
fi
anchor="$(sql -c "SELECT coalesce(min(created_at), now()) FROM deliveries WHERE reference LIKE 'SEED-%'")"

steps=()
for step in 0 25000 50000 100000 200000 400000 800000 1600000 3200000; do
    [ "$step" -lt "$target" ] && steps+=("$step")
done
steps+=("$target")
# SCALE_STEPS="1000000": measure only these steps (a cluster grown before is reused as it is).
[ -z "${SCALE_STEPS:-}" ] || read -r -a steps <<<"$SCALE_STEPS"
echo "host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); binary $binary; search binary $search_binary"
for step in "${steps[@]}"; do
    have="$(sql -c "SELECT count(*) FROM deliveries WHERE reference LIKE 'B-%'")"
    if [ "$have" -lt "$step" ]; then
        started=$(date +%s.%N)
        [ "$(sql -c "SELECT to_regclass('bench_clear_templates') IS NOT NULL")" = t ] \
            || python3 Benchmarks/clear_templates.py "$($PG owner-url countersign_scale)" 'SEED-%' >/dev/null
        sql -v from="$have" -v to="$step" -v target="$target" -v anchor="$anchor" -f Benchmarks/scale/grow.sql >/dev/null
        python3 Benchmarks/proof_events.py "$($PG owner-url countersign_scale)" "d.reference LIKE 'B-%'" "delivery:SEED-%" >/dev/null
        echo "== step $step: grew $((step - have)) deliveries with proofs in $(echo "$(date +%s.%N) - $started" | bc) s"
    fi
    echo "== step $step: $(proofs) proofs, database $(sql -c "SELECT pg_size_pretty(pg_database_size(current_database()))"), load $(cut -d' ' -f1-3 /proc/loadavg)"
    prefix="M$step-$$-"
    sql -c "INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon)
            SELECT '$prefix' || g, 'Measured Recipient', 'Measured Street', 52.52, 13.405 FROM generate_series(0, $((seconds * 1500))) g
            ON CONFLICT DO NOTHING"
    witness_now "$binary"
    echo "-- uploads (wrk -t1 -c8 -d${seconds}s), from just after a PostgreSQL checkpoint"
    # The run starts where full-page images are most frequent, and PostgreSQL's WAL counters start
    # at zero: WAL and full-page images per upload, and the checkpoints the run spanned.
    psql -X -q "$admin_url" -c "CHECKPOINT" -c "SELECT pg_stat_reset_shared('wal'), pg_stat_reset_shared('bgwriter')" >/dev/null
    uploads_since="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    wrk -t1 -c8 -d"${seconds}s" --latency -s Benchmarks/upload.lua "http://127.0.0.1:$port" -- "$work/bodies.jsonl" "$token" "$prefix" \
        | grep -E "Requests/sec|Latency  |^ +(50|99)%|Non-2xx" | sed 's/^/   /'
    uploaded="$(sql -c "SELECT count(*) FROM deliveries WHERE reference LIKE '$prefix%' AND status = 'delivered'")"
    psql -X -tA "$admin_url" -c "SELECT '   ' || $uploaded || ' uploads; WAL ' || pg_size_pretty(w.wal_bytes) || ', '
        || round(w.wal_bytes / greatest($uploaded, 1) / 1024.0, 1) || ' KB and ' || round(w.wal_fpi::numeric / greatest($uploaded, 1), 2)
        || ' full-page images per upload; checkpoints ' || b.checkpoints_timed || ' timed, ' || b.checkpoints_req || ' requested; '
        || round(b.buffers_backend::numeric / greatest($uploaded, 1), 1) || ' buffers written by backends per upload'
        FROM pg_stat_wal w, pg_stat_bgwriter b"
    [ -z "${SCALE_ONLY_UPLOADS:-}" ] || continue
    echo "-- verify --database --from-checkpoint (the uploads' events, after the witnessed checkpoint)"
    timed env DATABASE_URL="$url" "$binary" verify --database --checkpoints "$work/witness" --from-checkpoint --trust-embedded-key \
        >"$work/verify.txt" 2>&1 || true
    read -r elapsed rss < <(tail -n 1 "$work/time")
    echo "   $elapsed s, peak RSS $((rss / 1024)) MB:"
    grep -v WARNING "$work/verify.txt" | tail -n 3 | cut -c1-220 | sed 's/^/     /' 
    echo "-- verify --database"
    timed env DATABASE_URL="$url" "$binary" verify --database --trust-embedded-key --json >"$work/verify.json" 2>&1 || true
    read -r elapsed rss < <(tail -n 1 "$work/time")
    echo "   $elapsed s, peak RSS $((rss / 1024)) MB; last line: $(tail -n 1 "$work/verify.json" | cut -c1-160)"
    until="$(date -u -d '+1 minute' +%Y-%m-%dT%H:%M:%SZ)"
    # The grown history's last day, which ends where the seeds begin: the seeds are uploaded first
    # (the lowest seqs) yet are the newest, so a period holding them would carry every event since
    # the first as its audit segments, as no real history does. Without growth, the last day.
    # Grown history exists when this step grew some or an earlier run did ($have before the step).
    if [ "$step" -gt 0 ] || [ "$have" -gt 0 ]; then
        day_end="$(date -u -d "$anchor" +%Y-%m-%dT%H:%M:%SZ)"
    else
        day_end="$until"
    fi
    day_start="$(date -u -d "$day_end -${SCALE_EXPORT_HOURS:-24} hours" +%Y-%m-%dT%H:%M:%SZ)"
    echo "-- export of ${SCALE_EXPORT_HOURS:-24} hours ($day_start to $day_end), ZIP, then verify it (countersign verify FILE.zip)"
    export_and_verify "$day_start" "$day_end"
    # The step's own uploads alone (real events, from the API), exported warm, then verified.
    echo "-- export and verify of this step's uploads (since $uploads_since)"
    export_and_verify "$uploads_since" "$until"
    [ "$search_binary" = "$binary" ] || { stop_server; serve "$search_binary"; }
    echo "-- search latency"
    python3 Benchmarks/search_latency.py --url "http://127.0.0.1:$port" --token "$token" --requests "${SCALE_SEARCH_REQUESTS:-200}" | sed 's/^/   /'
    if [ -n "${SEARCH_PEER_BINARY:-}" ]; then
        stop_server; serve "$SEARCH_PEER_BINARY"
        echo "-- search latency, peer $SEARCH_PEER_BINARY (same database; a binary without q/flag ignores them)"
        python3 Benchmarks/search_latency.py --url "http://127.0.0.1:$port" --token "$token" --requests "${SCALE_SEARCH_REQUESTS:-200}" | sed 's/^/   /'
        stop_server; serve "$binary"
    fi
done
