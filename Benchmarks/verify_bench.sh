#!/usr/bin/env bash
# `countersign verify --database` speed: a full walk of N events, and an incremental run over NEW
# events after a witnessed checkpoint (`--checkpoints DIR --from-checkpoint`), on a private cluster
# of scripts/pg.sh (.data/bench-verify on a free port; BENCH_PG_DIR / BENCH_PG_PORT name others),
# stopped at the end. The peer, in the same run and interleaved: the full walk of BASELINE (another
# build of countersign, e.g. main's `swift build -c release` copied aside) over the same database.
#
# Events are written with valid v2 hashes by Benchmarks/verify_fill.py through COPY (seconds per
# 100,000), `proof_png_read` on 5,000 subjects over the 16 chains: no proof rows, so this measures
# the chain walk (reads + hashing), not proof re-hashing. Needs python3 with `cryptography` (signs
# the witnessed checkpoint) and a release build: `swift build -c release --product countersign`.
#
# Usage: Benchmarks/verify_bench.sh [N=300000] [NEW=10000] [BASELINE=] [ROUNDS=2]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PG="$ROOT/scripts/pg.sh"
n="${1:-300000}"
new="${2:-10000}"
baseline="${3:-}"
rounds="${4:-2}"
ours="${COUNTERSIGN_BIN:-$ROOT/.build/release/countersign}"
work="$(mktemp -d)"
export COUNTERSIGN_PG_DIR="${BENCH_PG_DIR:-$ROOT/.data/bench-verify}"
export COUNTERSIGN_PG_PORT="${BENCH_PG_PORT:-$("$PG" pick-port)}"
pg_started=0
trap 'rm -rf "$work"; if [ $pg_started = 1 ]; then "$PG" stop >/dev/null || true; fi' EXIT
python3 -c 'import cryptography' 2>/dev/null || python3 -m pip install --quiet cryptography

"$PG" status || { pg_started=1; "$PG" start >/dev/null; }
db=countersign_bench_verify
"$PG" createdb "$db" --fresh >/dev/null
url="$("$PG" url "$db")"
for file in "$ROOT"/migrations/0*.sql; do psql -q -X -v ON_ERROR_STOP=1 "$url" -f "$file" >/dev/null; done

columns="seq, chain, encoding, occurred_at, actor_key_id, actor_role, action, subject, request_id, client_address, user_agent, details_text, prev_hash, hash"
fill() {  # fill START COUNT: appends COUNT events after seq START and moves the heads
    python3 Benchmarks/verify_fill.py events "$1" "$2" "$work/state.json" \
        | psql -q -X -v ON_ERROR_STOP=1 "$url" -c "COPY audit_events ($columns) FROM STDIN"
    python3 Benchmarks/verify_fill.py heads "$work/state.json" | psql -q -X -v ON_ERROR_STOP=1 "$url" >/dev/null
    psql -q -X -v ON_ERROR_STOP=1 "$url" -c "SELECT setval('audit_events_seq', $(($1 + $2)))" >/dev/null
}
start=$(date +%s.%N)
fill 0 "$n"
openssl genpkey -algorithm ed25519 -out "$work/key.pem" 2>/dev/null
python3 Benchmarks/verify_fill.py checkpoint "$work/state.json" "$work/key.pem" "$work/witness" 2>"$work/public" \
    | psql -q -X -v ON_ERROR_STOP=1 "$url" >/dev/null
public="$(cat "$work/public")"
fill "$n" "$new"
psql -q -X "$url" -c "VACUUM ANALYZE audit_events" >/dev/null
echo "filled $n + $new events in $(echo "$(date +%s.%N) - $start" | bc) s"

run() {  # run LABEL EVENTS BINARY ARGS...: one timed verify, its events/s
    local label="$1" events="$2" binary="$3"; shift 3
    local t0 t1 out cpu
    t0=$(date +%s.%N)
    out="$(/usr/bin/time -f 'CPU %U %S' "$binary" verify --database --database-url "$url" --public-key "$public" "$@" 2>&1)" \
        || { echo "$label FAILED: $out"; return 1; }
    t1=$(date +%s.%N)
    cpu="$(echo "$out" | sed -n 's/^CPU \([0-9.]*\) \([0-9.]*\)$/\1 + \2/p' | bc)"
    echo "$label: $(echo "$t1 - $t0" | bc) s, $(echo "$events / ($t1 - $t0)" | bc) events/s, client CPU ${cpu} s  [$(echo "$out" | head -n 1)]"
}
total=$((n + new))
for round in $(seq 1 "$rounds"); do
    if [ -n "$baseline" ]; then run "round $round full, baseline" "$total" "$baseline"; fi
    run "round $round full, this build" "$total" "$ours"
    run "round $round full + witnesses, this build" "$total" "$ours" --checkpoints "$work/witness"
    run "round $round incremental ($new new), this build" "$new" "$ours" --checkpoints "$work/witness" --from-checkpoint
done
