#!/usr/bin/env bash
# Bundle verification, before and after, on the same bundle in one run (issue 23): runs
# `countersign verify BUNDLE.zip --trust-embedded-key` with each binary in turn, ROUNDS times,
# alternating (before, after, before, …) so both see the same load, and prints each run's proofs/s
# and peak RSS (/usr/bin/time), CPU seconds (user + system: what the load does not change) and
# the median per binary. After each round, the host's floor for the same bundle
# (Benchmarks/verify_floor.c: every entry read, inflated and hashed once in C on all cores, nothing
# else) is the peer that says how close the verifier is to what this machine can do at all.
# `Benchmarks/export_bench.sh` leaves bundles in Benchmarks/out/ (bench-cli-*.zip); any v3 bundle will do.
#
#   Benchmarks/verify_bundle_bench.sh BEFORE_BINARY AFTER_BINARY BUNDLE.zip [ROUNDS]   (default 3)
set -euo pipefail
BEFORE="$(realpath "$1")"; AFTER="$(realpath "$2")"; BUNDLE="$(realpath "$3")"; ROUNDS="${4:-3}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
timing="$(mktemp)"
trap 'rm -f "$timing" "$timing.floor"' EXIT
proofs=""
declare -A rates
floor="$PWD/.build/verify_floor"
mkdir -p .build
cc -O2 -o "$floor" Benchmarks/verify_floor.c -ldeflate -lcrypto -lpthread
printf "%-7s %5s %10s %10s %10s %8s\n" binary round seconds proofs/s "peak RSS" "CPU s"
for round in $(seq "$ROUNDS"); do
    for which in before after; do
        bin=$BEFORE; [ $which = after ] && bin=$AFTER
        out="$(/usr/bin/time -f "%e %M %U %S" -o "$timing" "$bin" verify "$BUNDLE" --trust-embedded-key 2>/dev/null)"
        read -r seconds peak user system < "$timing"
        proofs="$(sed -n 's/.* \([0-9]*\) proofs each matching.*/\1/p' <<<"$out")"
        [ -n "$proofs" ] || { echo "$which: the bundle did not verify: $out" >&2; exit 1; }
        rate=$(python3 -c "print(round($proofs / max($seconds, 0.01)))")
        rates[$which]+="$rate "
        printf "%-7s %5d %10s %10s %7d MB %8s\n" $which "$round" "$seconds" "$rate" $((peak / 1024)) "$(python3 -c "print(round($user + $system, 2))")"
    done
    /usr/bin/time -f "%e %M %U %S" -o "$timing" "$floor" "$BUNDLE" >"$timing.floor"
    read -r seconds peak user system < "$timing"
    rate="$(sed -n 's/.*: \([0-9]*\) proofs\/s$/\1/p' "$timing.floor")"
    rates[floor]+="$rate "
    printf "%-7s %5d %10s %10s %7d MB %8s\n" floor "$round" "$seconds" "$rate" $((peak / 1024)) "$(python3 -c "print(round($user + $system, 2))")"
done
sed 's/^/(last /; s/$/)/' "$timing.floor"
for which in before after floor; do
    printf "median %-7s %d proofs/s (%s proofs)\n" $which "$(python3 -c "import statistics, sys; print(round(statistics.median(map(int, sys.argv[1:]))))" ${rates[$which]})" "$proofs"
done
