#!/usr/bin/env bash
# Export and bundle-verification memory as the period grows (issue 23: peak RSS flat from 25k to
# 1M proofs): fills a private cluster step by step with Benchmarks/export_fill.py (copies of one
# uploaded proof, each with a valid audit event), and at each size prints the ZIP export through
# the API (streamed to /dev/null: MB/s and the server's peak RSS, sampled every 50 ms), the CLI
# export to a file (time, peak RSS) and `countersign verify` of that file (proofs/s, peak RSS).
# The bundle is deleted after each step, so the disk holds the database and one bundle
# (about 18 KB per proof each).
#
#   Benchmarks/bundle_memory.sh BINARY SIZES...          e.g. BINARY 25000 250000 1000000
#
# The cluster lives in .data/bundle-memory on a free port; it is stopped at the end (delete the
# directory afterwards: a million proofs take about 25 GB).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
binary="$(realpath "$1")"; shift
PG=scripts/pg.sh
export COUNTERSIGN_PG_DIR="$PWD/.data/bundle-memory"
export COUNTERSIGN_PG_PORT="$(python3 scripts/free-port.py)"
work="$(mktemp -d "${TMPDIR:-/tmp}/countersign-bundle-memory.XXXXXX")"
. Benchmarks/export_setup.sh
trap 'export_cleanup; rm -rf "$work"' EXIT
export_setup "$binary" "$work"

printf "%8s %9s %9s %9s %8s %9s %10s %10s\n" proofs "bundle MB" "API MB/s" "API peak" "CLI s" "CLI peak" "verify/s" "verify pk"
filled=1
for size in "$@"; do
    python3 Benchmarks/export_fill.py "$($PG owner-url export_bench)" $((size - filled)) TPL-0 B- >/dev/null
    filled=$size
    psql -X -q "$($PG owner-url export_bench)" -c "VACUUM ANALYZE" >/dev/null 2>&1
    start_server "$binary"
    peak=0
    t0=$(date +%s.%N)
    api "http://127.0.0.1:$port/v1/exports/proofs?format=zip" -o /dev/null -w '%{size_download}\n' >"$work/api-bytes" &
    download=$!
    while kill -0 $download 2>/dev/null; do
        now=$(awk '/VmRSS/ {print $2}' "/proc/$server/status"); [ "$now" -gt "$peak" ] && peak=$now; sleep 0.05
    done
    wait $download
    t1=$(date +%s.%N)
    stop_server
    api_rate=$(python3 -c "print(round($(cat "$work/api-bytes") / 1e6 / ($t1 - $t0), 1))")
    /usr/bin/time -f "%e %M" -o "$work/time" "$binary" export -o "$work/bundle.zip" >/dev/null
    read -r cli_s cli_peak <"$work/time"
    bytes=$(stat -c %s "$work/bundle.zip")
    /usr/bin/time -f "%e %M" -o "$work/time" "$binary" verify "$work/bundle.zip" --public-key "$key" >"$work/verify.out" \
        || { echo "bundle_memory: the bundle of $size proofs did not verify:" >&2; tail -5 "$work/verify.out" >&2; exit 1; }
    read -r verify_s verify_peak <"$work/time"
    rm -f "$work/bundle.zip"
    printf "%8d %9.0f %9s %6d MB %8s %6d MB %10s %7d MB\n" "$size" "$(python3 -c "print($bytes / 1e6)")" "$api_rate" $((peak / 1024)) \
        "$cli_s" $((cli_peak / 1024)) "$(python3 -c "print(round($size / max($verify_s, 0.01)))")" $((verify_peak / 1024))
done
