#!/usr/bin/env bash
# What a proof upload costs in CPU, and which of two builds is cheaper, on a host whose speed
# drifts (this VM's steal time moves request rates by 25-40 % between back-to-back runs):
#
#   Benchmarks/upload_compare.sh BIN [SECONDS] [ROUNDS]          one build, wrk -c8 per round
#   Benchmarks/upload_compare.sh BIN_A BIN_B [SECONDS] [ROUNDS]  both at once, head to head
#   Benchmarks/upload_compare.sh --alternate BIN_A BIN_B [SECONDS] [ROUNDS]
#                      one at a time with all the connections (Benchmarks/api_bench.sh's load),
#                      A B in odd rounds and B A in even ones, so a drift of the host's speed
#                      weighs on both alike
#
# Each build gets its own PostgreSQL cluster (free ports, folders .data/bench1 and .data/bench2),
# its own server (a free port) and its own wrk with Benchmarks/upload.lua (corpus bodies from api_load.py, one
# proof per delivery). Per round and build it prints uploads/s, wrk's p99, and the CPU time per
# stored proof of the server process and of that cluster's PostgreSQL processes (from
# /proc/PID/stat), plus the host's steal share over the round. CPU per upload barely moves with
# the host's speed, so it is the figure to compare; head to head, the two builds share every
# slow spell, and they swap clusters and ports every round. Defaults: 30 s, 4 rounds.
#
# UPLOAD_CONNECTIONS sets wrk's connections per server (default 8, split between the sides when
# they run at once). Each round has 1,500 deliveries per second of run (at least 20,000) per side.
#
# Schema changes: MIGRATIONS_A and MIGRATIONS_B name the migration folders of the two sides (the
# same build may be given twice); ONE_ROLE_A=1 serves build A as the owner (a build from before
# the runtime role). Each build then keeps its own cluster, migrated from its folder
# and served with it as MIGRATIONS_DIR, and the sides do not swap.
#
# Deliveries get their data key as `POST /v1/deliveries` gives it (Benchmarks/seed_data_keys.py,
# decision 0045), wrapped by a key file made for the cluster. A build from before keys were made
# with the delivery stores its own key with the proof and refuses a delivery that has one: give it
# SEED_KEYS_A=0 (with MIGRATIONS_A set, so that the sides do not swap).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# wrk drives the load; a fresh machine gets it the way it gets every other package.
command -v wrk >/dev/null || COUNTERSIGN_EXTRA_PACKAGES=wrk scripts/deps.sh >&2
alternate=0
if [ "${1:-}" = "--alternate" ]; then alternate=1; shift; fi
binaries=("$1"); shift
if [ $# -gt 0 ] && [ -x "$1" ]; then binaries+=("$1"); shift; fi
seconds="${1:-30}"; rounds="${2:-4}"
sides=${#binaries[@]}
at_once=$sides
if [ "$alternate" = 1 ]; then at_once=1; fi
connections="${UPLOAD_CONNECTIONS:-$((8 / at_once))}"
per_round=$(( seconds * 1500 > 20000 ? seconds * 1500 : 20000 ))
corpus="${COUNTERSIGN_CORPUS:-../shared/corpus}"
bodies="${TMPDIR:-/tmp}/countersign-compare-bodies.jsonl"
servers=()
# Ports chosen once (free now, or the port a cluster still running in its folder has), so every
# call of one run agrees on them: pg_ports[SIDE] for the clusters, http_ports[SIDE] for the servers.
free=($(python3 scripts/free-port.py $((2 * sides))))
pg_ports=(-); http_ports=(-)
for side in $(seq 1 "$sides"); do
    http_ports+=("${free[$((side - 1))]}")
    if COUNTERSIGN_PG_DIR="$PWD/.data/bench$side" scripts/pg.sh status; then
        pg_ports+=("$(COUNTERSIGN_PG_DIR="$PWD/.data/bench$side" scripts/pg.sh port)")
    else
        pg_ports+=("${free[$((sides + side - 1))]}")
    fi
done
cluster() { COUNTERSIGN_PG_PORT=${pg_ports[$1]} COUNTERSIGN_PG_DIR="$PWD/.data/bench$1" scripts/pg.sh "${@:2}"; }
cleanup() {
    for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
    for side in $(seq 1 "$sides"); do cluster "$side" stop >/dev/null 2>&1 || true; done
    rm -f "$bodies" "${TMPDIR:-/tmp}"/countersign-compare-wrk*.out "${TMPDIR:-/tmp}"/countersign-compare-keys*
}
trap cleanup EXIT
python3 Benchmarks/api_load.py --mode bodies --out "$bodies" --token unused --corpus "$corpus" >&2

urls=(); tokens=()
migrations=("${MIGRATIONS_A:-migrations}" "${MIGRATIONS_B:-migrations}")
swapping=1
if [ -n "${MIGRATIONS_A:-}${MIGRATIONS_B:-}" ]; then swapping=0; fi
for side in $(seq 1 "$sides"); do
    cluster "$side" start >/dev/null
    cluster "$side" createdb countersign_bench --fresh >/dev/null
    url="$(cluster "$side" url countersign_bench)"
    owner="$(cluster "$side" owner-url countersign_bench)"
    # With two schemas each build migrates its own; a build from before the two roles
    # (ONE_ROLE_A=1 for the first) also serves as the owner, as it did then.
    builder="${binaries[0]}"
    if [ "$swapping" = 0 ]; then builder="${binaries[$((side - 1))]}"; fi
    if [ "$side" = 1 ] && [ "${ONE_ROLE_A:-0}" = 1 ]; then url="$owner"; fi
    DATABASE_URL="$owner" MIGRATION_DATABASE_URL="$owner" MIGRATIONS_DIR="${migrations[$((side - 1))]}" "$builder" migrate >/dev/null
    tokens+=("$(DATABASE_URL="$url" "$builder" keys create --role admin --name bench 2>&1 | grep -o 'cs_[A-Za-z0-9_-]*' | head -1)")
    psql -q "$url" -c "INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon)
                       SELECT 'R' || r || '-' || g, 'Load Test', 'Somewhere', 52.52, 13.405
                       FROM generate_series(1, $rounds) r, generate_series(0, $((per_round - 1))) g"
    keys="${TMPDIR:-/tmp}/countersign-compare-keys$side"
    printf 'bench-%s %s\n' "$side" "$(openssl rand -base64 32)" > "$keys"
    seed="SEED_KEYS_$([ "$side" = 1 ] && echo A || echo B)"
    if [ "${!seed:-1}" = 1 ]; then python3 Benchmarks/seed_data_keys.py "$url" "$keys"; fi
    urls+=("$url")
done

ticks() { local sum=0 pid; for pid in "$@"; do [ -r "/proc/$pid/stat" ] && sum=$((sum + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo "$sum"; }
postgres_pids() { local postmaster; postmaster="$(head -1 "$(readlink -f "$PWD/.data/bench$1/pg")/postmaster.pid")"; echo "$postmaster $(pgrep -P "$postmaster" | tr '\n' ' ')"; }
proofs() { psql -tAq "${urls[$1]}" -c 'SELECT count(*) FROM proofs'; }
steal() { awk '/^cpu /{print $9}' /proc/stat; }
jiffies() { awk '/^cpu /{s = 0; for (i = 2; i <= NF; i++) s += $i; print s}' /proc/stat; }
milliseconds() { echo "scale=2; $1 * 1000 / $(getconf CLK_TCK) / $2" | bc; }

# measure ROUND SIDE...: serves and loads the given sides at once for one round, prints one line.
measure() {
    local round=$1; shift
    local side b pid
    servers=(); before=(); server_before=(); pg_before=(); line="round $round"
    for side in "$@"; do
        # Build b serves cluster side; with two builds they swap every round (not with two schemas).
        b=$(( (side - 1 + (round - 1) * swapping) % sides ))
        env DATABASE_URL="${urls[$((side - 1))]}" MIGRATIONS_DIR="${migrations[$((side - 1))]}" MIGRATE_ON_START=false \
            PORT=${http_ports[$side]} HOST=127.0.0.1 LOG_LEVEL=warning \
            RATE_LIMIT_PER_SECOND=0 CHECKPOINT_KEY_GENERATE=true DATA_KEY_FILE="${TMPDIR:-/tmp}/countersign-compare-keys$side" DATA_DIR="${TMPDIR:-/tmp}/countersign-compare-data$side" "${binaries[$b]}" serve >"${TMPDIR:-/tmp}/countersign-compare-server$side.log" 2>&1 &
        servers[$side]=$!
    done
    for side in "$@"; do
        for _ in $(seq 1 200); do curl -fs --max-time 2 "http://127.0.0.1:${http_ports[$side]}/readyz" >/dev/null && break; sleep 0.1; done
        before[$side]="$(proofs $((side - 1)))"; server_before[$side]="$(ticks "${servers[$side]}")"
        pg_before[$side]="$(ticks $(postgres_pids "$side"))"
    done
    steal_before=$(steal); jiffies_before=$(jiffies)
    loads=()
    for side in "$@"; do
        wrk -t1 -c"$connections" -d"${seconds}s" --latency -s Benchmarks/upload.lua "http://127.0.0.1:${http_ports[$side]}" \
            -- "$bodies" "${tokens[$((side - 1))]}" "R$round-" >"${TMPDIR:-/tmp}/countersign-compare-wrk$side.out" &
        loads+=($!)
    done
    wait "${loads[@]}"
    steal_share=$(( ($(steal) - steal_before) * 100 / ($(jiffies) - jiffies_before) ))
    for side in "$@"; do
        b=$(( (side - 1 + (round - 1) * swapping) % sides ))
        stored=$(( $(proofs $((side - 1))) - before[side] ))
        server_ms=$(milliseconds $(( $(ticks "${servers[$side]}") - server_before[side] )) "$stored")
        pg_ms=$(milliseconds $(( $(ticks $(postgres_pids "$side")) - pg_before[side] )) "$stored")
        out="${TMPDIR:-/tmp}/countersign-compare-wrk$side.out"
        errors=$(grep -o 'Non-2xx or 3xx responses: [0-9]*' "$out" | grep -o '[0-9]*$' || echo 0)
        label="$(basename "${binaries[$b]}")"
        if [ "$swapping" = 0 ]; then label+=" ($(basename "${migrations[$((side - 1))]}"))"; fi
        line+="  | $label: $((stored / seconds))/s p99 $(awk '$1 == "99%" {print $2}' "$out")"
        line+=" server ${server_ms} ms + PostgreSQL ${pg_ms} ms per upload, errors $errors"
    done
    echo "$line  | steal ${steal_share} %"
    for pid in "${servers[@]}"; do kill "$pid"; wait "$pid" 2>/dev/null || true; done
    servers=()
}

for round in $(seq 1 "$rounds"); do
    if [ "$alternate" = 1 ] && [ "$sides" = 2 ]; then
        if [ $((round % 2)) = 1 ]; then measure "$round" 1; measure "$round" 2; else measure "$round" 2; measure "$round" 1; fi
    else
        measure "$round" $(seq 1 "$sides")
    fi
done
