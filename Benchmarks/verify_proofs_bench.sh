#!/usr/bin/env bash
# `countersign verify --database` over proofs with valid events, builds alternating (issue 23, item 3):
# a private cluster (.data/bench-bundles, a free port, stopped at the end) with one proof uploaded
# through the API and N-1 copied in SQL with valid audit events (Benchmarks/export_fill.py), then
# ROUNDS rounds of a full verification with each binary in turn: wall time, CPU and peak RSS.
#
#   Benchmarks/verify_proofs_bench.sh N ROUNDS BINARY...      (e.g. 20000 3 before after)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
size="$1"; rounds="$2"; shift 2
binaries=()
for binary in "$@"; do binaries+=("$(realpath "$binary")"); done
export COUNTERSIGN_PG_DIR="$PWD/.data/bench-bundles"
export COUNTERSIGN_PG_PORT="$(python3 scripts/free-port.py)"
. Benchmarks/export_setup.sh
work="$(mktemp -d "${TMPDIR:-/tmp}/countersign-verify-proofs.XXXXXX")"
trap 'export_cleanup; rm -rf "$work"' EXIT
export_setup "${binaries[-1]}" "$work"
python3 Benchmarks/export_fill.py "$(scripts/pg.sh owner-url export_bench)" $((size - 1)) TPL-0 B- >/dev/null
psql -X -q "$(scripts/pg.sh owner-url export_bench)" -c "VACUUM ANALYZE proofs" -c "VACUUM ANALYZE deliveries" -c "VACUUM ANALYZE audit_events"
for round in $(seq 1 "$rounds"); do
    for binary in "${binaries[@]}"; do
        /usr/bin/time -o "$work/time" -f "%e s wall, %U s user, %S s system, peak RSS %M KB" \
            "$binary" verify --database --trust-embedded-key >"$work/out" 2>&1 || true
        echo "round $round $binary: $(tail -n 1 "$work/time"); $(grep -v WARNING "$work/out" | tail -n 1 | cut -c1-80)"
    done
done
