#!/usr/bin/env bash
# Parser linearity: every parser a client's bytes reach, on adversarial inputs of size n and 4n
# (attributes, elements, members, nesting, escapes, points, lines, ZIP entries), CPU time ratio per
# shape; fails when one exceeds BOUND (default 6: about 4 is linear, 16 quadratic).
#   Benchmarks/linearity.sh [BOUND]
# Needs nothing but this package; about a minute with the release build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
swift build -c release --product linearity-bench 2>&1 | { grep -E "error|complete" || true; } | tail -1 >&2
# glibc serves an allocation above its mmap threshold (128 KiB at first, moving as blocks are freed)
# with fresh pages from the kernel, so an input whose buffers fall on one side of it pays page
# faults that a smaller one does not: a step in cost, not growth, that doubles some ratios. These
# keep every size on the heap, so the ratio shows how the parser's own work grows.
export MALLOC_MMAP_THRESHOLD_=2000000000 MALLOC_TRIM_THRESHOLD_=2000000000 MALLOC_TOP_PAD_=268435456
exec "$(swift build -c release --show-bin-path)/linearity-bench" --bound "${1:-6}" --repeats 5
