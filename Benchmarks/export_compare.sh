#!/usr/bin/env bash
# CLI export of one period by two builds, alternating, on a database that already holds it (issue 23):
# each round exports [SINCE, UNTIL) with BEFORE, then AFTER, and prints seconds, MB/s, CPU seconds
# (user + system) and peak RSS (/usr/bin/time), then the median MB/s of each. The first round warms
# the page cache for both (unless EXPORT_COLD). Needs DATABASE_URL (e.g. `scripts/pg.sh url countersign_scale` with the
# scale cluster started) and CHECKPOINT_KEY_FILE (the key the exports sign with); bundles go to
# Benchmarks/out/ and are deleted after each round. EXPORT_COLD=1: before every export the cluster
# (COUNTERSIGN_PG_DIR, COUNTERSIGN_PG_PORT) is stopped, the page cache dropped (root) and the
# cluster started again, so every run reads the period from disk.
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
printf "%-7s %5s %9s %9s %8s %9s\n" binary round seconds "MB/s" "CPU s" "peak RSS"
for round in $(seq "$ROUNDS"); do
    for which in before after; do
        bin=$BEFORE; [ $which = after ] && bin=$AFTER
        if [ -n "${EXPORT_COLD:-}" ]; then
            scripts/pg.sh stop >/dev/null 2>&1 || true
            sync && echo 3 >/proc/sys/vm/drop_caches
            scripts/pg.sh start >/dev/null 2>&1
        fi
        LOG_LEVEL=warning /usr/bin/time -f "%e %M %U %S" -o "$timing" "$bin" export --since "$SINCE" --until "$UNTIL" -o "$bundle" >/dev/null
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
