#!/usr/bin/env bash
# Export and bundle verification, before and after, in one run (issue 23): fills a private
# cluster with proofs fast (one uploaded through the API, copied in SQL with valid audit events by
# Benchmarks/export_fill.py), then for each binary and each size: the ZIP export through the API
# (server peak RSS sampled every 50 ms, MB/s), `countersign export` (peak RSS and time from
# /usr/bin/time) and `countersign verify` on that bundle (proofs/s, peak RSS).
#
#   Benchmarks/export_bench.sh BEFORE_BINARY AFTER_BINARY [SIZES...]     (default sizes: 5000 40000)
#
# Migrates with AFTER_BINARY (both must share the schema). Uses .data/bench-bundles on a free port
# (stopped at the end) and free HTTP ports; leaves bundles and a table in Benchmarks/out/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BEFORE="$(realpath "$1")"; AFTER="$(realpath "$2")"; shift 2
SIZES=("${@:-5000 40000}")
read -r -a SIZES <<<"${SIZES[*]}"
PG=scripts/pg.sh
OUT=Benchmarks/out
mkdir -p "$OUT"
export COUNTERSIGN_PG_DIR="$PWD/.data/bench-bundles"
export COUNTERSIGN_PG_PORT="$(python3 scripts/free-port.py)"
. Benchmarks/export_setup.sh
trap export_cleanup EXIT
export_setup "$AFTER" "$PWD/$OUT/bench-data"

table="$OUT/export-bench.txt"
printf "%-7s %7s %9s %10s %10s %10s %10s %10s %10s\n" binary proofs MB "API MB/s" "API peak" "CLI s" "CLI peak" "verify/s" "verify pk" | tee "$table"
filled=1
for size in "${SIZES[@]}"; do
    python3 Benchmarks/export_fill.py "$($PG owner-url export_bench)" $((size - filled)) TPL-0 B- >/dev/null
    filled=$size
    for which in before after; do
        bin=$BEFORE; [ $which = after ] && bin=$AFTER
        start_server "$bin"
        rss() { awk '/VmRSS/ {print $2}' "/proc/$server/status"; }
        peak=$(rss)
        t0=$(date +%s.%N)
        api "http://127.0.0.1:$port/v1/exports/proofs?format=zip" -o "$OUT/bench-api-$which.zip" &
        download=$!
        while kill -0 $download 2>/dev/null; do now=$(rss); [ "$now" -gt "$peak" ] && peak=$now; sleep 0.05; done
        wait $download
        t1=$(date +%s.%N)
        stop_server
        bytes=$(stat -c %s "$OUT/bench-api-$which.zip")
        api_rate=$(python3 -c "print(round($bytes / 1e6 / ($t1 - $t0), 1))")
        /usr/bin/time -f "%e %M" -o "$OUT/bench-time" "$bin" export -o "$OUT/bench-cli-$which.zip" >/dev/null
        read -r cli_s cli_peak < "$OUT/bench-time"
        /usr/bin/time -f "%e %M" -o "$OUT/bench-time" "$bin" verify "$OUT/bench-cli-$which.zip" --public-key "$key" >/dev/null
        read -r verify_s verify_peak < "$OUT/bench-time"
        printf "%-7s %7d %9.1f %10s %8d MB %10s %7d MB %10s %7d MB\n" $which "$size" "$(python3 -c "print($bytes / 1e6)")" "$api_rate" \
            $((peak / 1024)) "$cli_s" $((cli_peak / 1024)) "$(python3 -c "print(round($size / max($verify_s, 0.01)))")" \
            $((verify_peak / 1024)) | tee -a "$table"
    done
done
