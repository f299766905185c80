#!/usr/bin/env bash
# Benchmark of the signature render pipeline against cairo, on one core.
#   Benchmarks/run.sh [ITERATIONS]      (COUNTERSIGN_CORPUS overrides ../shared/corpus)
# Needs: release builds of render-bench and countersign (done here), Debian libcairo2-dev + pkg-config + cc
# for the cairo peer, util-linux (taskset) and GNU time (/usr/bin/time) for the memory line.
set -euo pipefail
cd "$(dirname "$0")/.."
ITER=${1:-20}
CORPUS=${COUNTERSIGN_CORPUS:-../shared/corpus}
swift build -c release --product countersign
swift build -c release --product render-bench
BIN="$(swift build -c release --show-bin-path)/countersign"
BENCH="$(swift build -c release --show-bin-path)/render-bench"
PEER=.build/cairo_fill
cc -O2 -Wall -o "$PEER" Benchmarks/cairo_fill.c $(pkg-config --cflags --libs cairo)
OUTLINES=$(mktemp)
trap 'rm -f "$OUTLINES" "$OUTLINES.png"' EXIT
# Same outlines, same core, one after the other. The machine is shared: say how busy it was.
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
taskset -c 1 "$BENCH" --corpus "$CORPUS" --iterations "$ITER" --dump-outlines "$OUTLINES"
taskset -c 1 "$PEER" "$OUTLINES" "$ITER"
# Whole-process peak RSS of one CLI render of the largest SVC2004 file, and of the bare CLI.
# (sed, not head: head would close the pipe early and pipefail would end the script here)
LARGEST=$(ls -S "$CORPUS"/svc2004-task*/*.TXT | sed -n 1p)
echo "CLI render of $(basename "$LARGEST"): $(/usr/bin/time -v "$BIN" render "$LARGEST" -o "$OUTLINES.png" 2>&1 | grep 'Maximum resident')"
echo "CLI --help only:      $(/usr/bin/time -v "$BIN" render --help 2>&1 >/dev/null | grep 'Maximum resident')"
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
