#!/usr/bin/env bash
# CLI export of one period by two builds, alternating, on a database that already holds it (issue 23):
# each round exports [SINCE, UNTIL) with BEFORE, then AFTER, and prints seconds, MB/s, CPU seconds
# (user + system) and peak RSS (/usr/bin/time), then the median MB/s of each. The first round warms
# the page cache for both (unless EXPORT_COLD). Needs DATABASE_URL (e.g. `scripts/pg.sh url countersign_scale` with the
# scale cluster started) and CHECKPOINT_KEY_FILE (the key the exports sign with); bundles go to
# Benchmarks/out/ and are deleted after each round. EXPORT_COLD=1: before every export the cluster
# (COUNTERSIGN_PG_DIR, COUNTERSIGN_PG_PORT) is stopped, the page cache dropped (root) and the
# cluster started again, so every run reads the period from disk. EXPORT_VIA_API=1: each binary
# serves (free port, one admin key made for the run) and the bundle comes from GET
# /v1/exports/proofs; CPU and peak RSS are then the server's (startup included). EXPORT_FORMAT=ndjson
# or csv exports that format instead of the ZIP bundle.
#
#   Benchmarks/export_compare.sh BEFORE_BINARY AFTER_BINARY SINCE UNTIL [ROUNDS]   (default 3)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BEFORE="$(realpath "$1")"; AFTER="$(realpath "$2")"; SINCE="$3"; UNTIL="$4"; ROUNDS="${5:-3}"
: "${DATABASE_URL:?set DATABASE_URL to the database holding the period}"
: "${CHECKPOINT_KEY_FILE:?set CHECKPOINT_KEY_FILE to the signing key}"
if [ -n "${EXPORT_COLD:-}" ]; then
    : "${COUNTERSIGN_PG_DIR:?EXPORT_COLD restarts the cluster: set COUNTERSIGN_PG_DIR and COUNTERSIGN_PG_PORT}"
    [ -w /proc/sys/vm/drop_caches ] || { echo "export_compare: EXPORT_COLD needs root to drop the page cache" >&2; exit 1; }
fi
mkdir -p Benchmarks/out
timing="$(mktemp)"
bundle="Benchmarks/out/export-compare.zip"
trap 'rm -f "$timing" "$bundle"' EXIT
declare -A rates
if [ -n "${EXPORT_VIA_API:-}" ]; then
    # The server of each binary in turn, on a free port, and one admin key made for the run.
    token="$(LOG_LEVEL=warning "$AFTER" keys create --role admin --name "export_compare $$" 2>/dev/null | tail -1)"
    server_dir="$(mktemp -d)"
    trap 'rm -rf "$timing" "$bundle" "$server_dir"' EXIT
fi
# GET /v1/exports/proofs of the period from BINARY's server; writes what /usr/bin/time would, for
# the server process (its CPU and peak RSS, read just before it is stopped).
api_export() {
    local port pid started ended
    port="$(python3 scripts/free-port.py)"
    DATA_DIR="$server_dir" PORT=$port LOG_LEVEL=warning RATE_LIMIT_PER_SECOND=0 "$1" serve >"$server_dir/log" 2>&1 &
    pid=$!
    for _ in $(seq 200); do curl -sf --max-time 2 "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
    started=$(date +%s.%N)
    curl -sf -H "Authorization: Bearer $token" -o "$bundle" "http://127.0.0.1:$port/v1/exports/proofs?format=${EXPORT_FORMAT:-zip}&since=$SINCE&until=$UNTIL"
    ended=$(date +%s.%N)
    python3 - "$pid" "$started" "$ended" >"$timing" <<'PY'
import os, sys
pid, started, ended = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
hz = os.sysconf("SC_CLK_TCK")
peak = next(int(line.split()[1]) for line in open(f"/proc/{pid}/status") if line.startswith("VmHWM:"))
print(f"{ended - started:.2f} {peak} {int(fields[11]) / hz} {int(fields[12]) / hz}")
PY
    kill "$pid"; wait "$pid" 2>/dev/null || true
}
printf "%-7s %5s %9s %9s %8s %9s\n" binary round seconds "MB/s" "CPU s" "peak RSS"
for round in $(seq "$ROUNDS"); do
    for which in before after; do
        bin=$BEFORE; [ $which = after ] && bin=$AFTER
        if [ -n "${EXPORT_COLD:-}" ]; then
            scripts/pg.sh stop >/dev/null 2>&1 || true
            sync && echo 3 >/proc/sys/vm/drop_caches
            scripts/pg.sh start >/dev/null 2>&1
        fi
        if [ -n "${EXPORT_VIA_API:-}" ]; then
            api_export "$bin"
        else
            LOG_LEVEL=warning /usr/bin/time -f "%e %M %U %S" -o "$timing" "$bin" export --format "${EXPORT_FORMAT:-zip}" --since "$SINCE" --until "$UNTIL" -o "$bundle" >/dev/null
        fi
        read -r seconds peak user system < "$timing"
        rate=$(python3 -c "print(round($(stat -c %s "$bundle") / 1e6 / max($seconds, 0.01), 1))")
        rates[$which]+="$rate "
        printf "%-7s %5d %9s %9s %8s %6d MB\n" $which "$round" "$seconds" "$rate" "$(python3 -c "print(round($user + $system, 2))")" $((peak / 1024))
        rm -f "$bundle"
    done
done
for which in before after; do
    printf "median %-7s %s MB/s\n" $which "$(python3 -c "import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))" ${rates[$which]})"
done
