#!/usr/bin/env bash
# What webhooks cost an upload: the same build serving two clusters at once, one with two
# subscribed endpoints (one answering at once, one taking SLOW_SECONDS per post, default 2), the
# other with none; which side has the endpoints swaps every round, so cluster and port differences
# cancel out. Per round and side: uploads/s, wrk's p99, the CPU time per stored proof of the server
# and of its PostgreSQL, and how many events the receivers got.
#
#   Benchmarks/webhook_compare.sh BIN [SECONDS] [ROUNDS]     defaults 20 s, 2 rounds
#
# Everything on 127.0.0.1 with free ports; clusters in .data/whbench1 and .data/whbench2.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# wrk drives the load; a fresh machine gets it the way it gets every other package.
command -v wrk >/dev/null || COUNTERSIGN_EXTRA_PACKAGES=wrk scripts/deps.sh >&2
binary="$1"; seconds="${2:-20}"; rounds="${3:-2}"
slow="${SLOW_SECONDS:-2}"
corpus="${COUNTERSIGN_CORPUS:-../shared/corpus}"
bodies="${TMPDIR:-/tmp}/countersign-webhook-bodies.jsonl"
free=($(python3 scripts/free-port.py 6))
http_ports=(- "${free[0]}" "${free[1]}"); pg_ports=(- "${free[2]}" "${free[3]}")
fast_port="${free[4]}"; slow_port="${free[5]}"
secrets_key="$(head -c 32 /dev/urandom | base64)"
servers=(); receiver=""
cluster() { COUNTERSIGN_PG_PORT=${pg_ports[$1]} COUNTERSIGN_PG_DIR="$PWD/.data/whbench$1" scripts/pg.sh "${@:2}"; }
cleanup() {
    for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
    [ -n "$receiver" ] && kill "$receiver" 2>/dev/null || true
    for side in 1 2; do cluster "$side" stop >/dev/null 2>&1 || true; done
    rm -f "$bodies" "${TMPDIR:-/tmp}"/countersign-webhook-wrk*.out
}
trap cleanup EXIT
python3 Benchmarks/api_load.py --mode bodies --out "$bodies" --token unused --corpus "$corpus" >&2
python3 Benchmarks/webhook_receiver.py "$fast_port" "$slow_port" --slow-seconds "$slow" >"${TMPDIR:-/tmp}/countersign-webhook-receiver.out" &
receiver=$!

urls=(-); tokens=(-)
for side in 1 2; do
    cluster "$side" start >/dev/null
    cluster "$side" createdb countersign_bench --fresh >/dev/null
    url="$(cluster "$side" url countersign_bench)"
    MIGRATION_DATABASE_URL="$(cluster "$side" owner-url countersign_bench)" "$binary" migrate >/dev/null
    tokens+=("$(DATABASE_URL="$url" "$binary" keys create --role admin --name bench 2>&1 | grep -o 'cs_[A-Za-z0-9_-]*' | head -1)")
    psql -q "$url" -c "INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon)
                       SELECT 'R' || r || '-' || g, 'Load Test', 'Somewhere', 52.52, 13.405
                       FROM generate_series(1, $rounds) r, generate_series(0, 19999) g"
    urls+=("$url")
done

ticks() { local sum=0 pid; for pid in "$@"; do [ -r "/proc/$pid/stat" ] && sum=$((sum + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo "$sum"; }
postgres_pids() { local postmaster; postmaster="$(head -1 "$(readlink -f "$PWD/.data/whbench$1/pg")/postmaster.pid")"; echo "$postmaster $(pgrep -P "$postmaster" | tr '\n' ' ')"; }
count() { psql -tAq "${urls[$1]}" -c "$2"; }
milliseconds() { echo "scale=2; $1 * 1000 / $(getconf CLK_TCK) / $2" | bc; }
subscribe() {  # subscribe SIDE PORT
    curl -fs -X POST "http://127.0.0.1:${http_ports[$1]}/v1/webhooks" -H "Authorization: Bearer ${tokens[$1]}" \
        -H 'Content-Type: application/json' \
        -d "{\"url\":\"http://127.0.0.1:$2/hook\",\"events\":[\"delivery.delivered\",\"delivery.created\"]}" >/dev/null
}

for round in $(seq 1 "$rounds"); do
    hooked=$(( (round - 1) % 2 + 1 ))
    servers=(); line="round $round"
    for side in 1 2; do
        env DATABASE_URL="${urls[$side]}" PORT=${http_ports[$side]} HOST=127.0.0.1 LOG_LEVEL=warning RATE_LIMIT_PER_SECOND=0 \
            CHECKPOINT_KEY_GENERATE=true DATA_KEY_GENERATE=true DATA_DIR="${TMPDIR:-/tmp}/countersign-webhook-data$side" \
            WEBHOOK_SECRETS_KEY="$secrets_key" WEBHOOK_ALLOW_PRIVATE_NETWORKS=true \
            "$binary" serve >"${TMPDIR:-/tmp}/countersign-webhook-server$side.log" 2>&1 &
        servers+=($!)
    done
    for side in 1 2; do
        for _ in $(seq 1 200); do curl -fs --max-time 2 "http://127.0.0.1:${http_ports[$side]}/readyz" >/dev/null && break; sleep 0.1; done
    done
    psql -q "${urls[1]}" -c "UPDATE webhook_endpoints SET deleted_at = now(), enabled = false WHERE deleted_at IS NULL"
    psql -q "${urls[2]}" -c "UPDATE webhook_endpoints SET deleted_at = now(), enabled = false WHERE deleted_at IS NULL"
    subscribe "$hooked" "$fast_port"; subscribe "$hooked" "$slow_port"
    before=(-); server_before=(-); pg_before=(-); events_before=(-)
    for side in 1 2; do
        before+=("$(count "$side" 'SELECT count(*) FROM proofs')"); server_before+=("$(ticks "${servers[$((side - 1))]}")")
        pg_before+=("$(ticks $(postgres_pids "$side"))")
        events_before+=("$(count "$side" "SELECT count(*) FROM webhook_deliveries WHERE state = 'succeeded'")")
    done
    loads=()
    for side in 1 2; do
        wrk -t1 -c4 -d"${seconds}s" --latency -s Benchmarks/upload.lua "http://127.0.0.1:${http_ports[$side]}" \
            -- "$bodies" "${tokens[$side]}" "R$round-" >"${TMPDIR:-/tmp}/countersign-webhook-wrk$side.out" &
        loads+=($!)
    done
    wait "${loads[@]}"
    for side in 1 2; do
        stored=$(( $(count "$side" 'SELECT count(*) FROM proofs') - before[side] ))
        server_ms=$(milliseconds $(( $(ticks "${servers[$((side - 1))]}") - server_before[side] )) "$stored")
        pg_ms=$(milliseconds $(( $(ticks $(postgres_pids "$side")) - pg_before[side] )) "$stored")
        out="${TMPDIR:-/tmp}/countersign-webhook-wrk$side.out"
        errors=$(grep -o 'Non-2xx or 3xx responses: [0-9]*' "$out" | grep -o '[0-9]*$' || echo 0)
        sent=$(( $(count "$side" "SELECT count(*) FROM webhook_deliveries WHERE state = 'succeeded'") - events_before[side] ))
        label="no endpoints"; [ "$side" = "$hooked" ] && label="2 endpoints (1 slow)"
        line+="  | $label: $((stored / seconds))/s p99 $(awk '$1 == "99%" {print $2}' "$out")"
        line+=" server ${server_ms} ms + PostgreSQL ${pg_ms} ms per upload, errors $errors, webhooks sent $sent"
    done
    echo "$line"
    for pid in "${servers[@]}"; do kill "$pid"; wait "$pid" 2>/dev/null || true; done
done
kill "$receiver"; wait "$receiver" 2>/dev/null || true; receiver=""
cat "${TMPDIR:-/tmp}/countersign-webhook-receiver.out"
