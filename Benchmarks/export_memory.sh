#!/usr/bin/env bash
# Export memory bound (issue 5): N real corpus proofs uploaded through the API, then
# GET /v1/exports/proofs?format=zip streamed to a file while the server's resident memory is
# sampled every 100 ms; then `countersign verify` on the bundle (valid, and invalid after one
# flipped byte), and the same export through `countersign export` under /usr/bin/time.
#
#   Benchmarks/export_memory.sh [BINARY] [N]     (default .build/release/countersign, 10000)
#
# Needs ../shared/corpus. Uses database export_bench on a private cluster of scripts/pg.sh
# (.data/bench-export on a free port, stopped at the end; BENCH_PG_DIR and BENCH_PG_PORT name
# others) and a free HTTP port (EXPORT_BENCH_PORT names one); leaves the bundle in Benchmarks/out/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN="$(realpath "${1:-.build/release/countersign}")"
N="${2:-10000}"
PORT="${EXPORT_BENCH_PORT:-$(python3 scripts/free-port.py)}"
PG=scripts/pg.sh
OUT=Benchmarks/out
mkdir -p "$OUT"
export COUNTERSIGN_PG_DIR="${BENCH_PG_DIR:-$PWD/.data/bench-export}"
export COUNTERSIGN_PG_PORT="${BENCH_PG_PORT:-$($PG pick-port)}"
server=""; pg_started=0
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
    if [ $pg_started = 1 ]; then $PG stop >/dev/null || true; fi
}
trap cleanup EXIT
$PG status || { pg_started=1; $PG start; }
export DATABASE_URL="$($PG url export_bench)"
# REUSE=1 keeps the proofs of an earlier run (uploading 10,000 takes a while) and only exports again.
if [ "${REUSE:-0}" != 1 ]; then $PG createdb export_bench --fresh >/dev/null; fi
export RATE_LIMIT_PER_SECOND=0  # one courier key uploads everything
export DATA_DIR="$PWD/$OUT/export-bench-data"
[ "${REUSE:-0}" = 1 ] || rm -rf "$DATA_DIR"
"$BIN" migrate >/dev/null
courier="$("$BIN" keys create --role courier --name bench-courier | tail -1)"
auditor="$("$BIN" keys create --role auditor --name bench-auditor | tail -1)"
psql -q "$DATABASE_URL" -c "INSERT INTO deliveries (reference, recipient_name, address)
    SELECT 'E-' || g, 'Recipient ' || g, g || ' Main St' FROM generate_series(0, $N - 1) g ON CONFLICT DO NOTHING"

LOG_LEVEL=warning PORT=$PORT "$BIN" serve > "$OUT/export-bench-server.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -sf --max-time 2 "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done

echo "uploading $N proofs..."
start=$(date +%s)
python3 Benchmarks/api_load.py --url "http://127.0.0.1:$PORT" --token "$courier" --mode upload --prefix E- \
    --count "$N" --duration 3600 --connections 8 > "$OUT/export-bench-upload.txt" 2>&1 &
loader=$!
while [ "$(psql -qtA "$DATABASE_URL" -c 'SELECT count(*) FROM proofs')" -lt "$N" ]; do sleep 2; done
kill $loader 2>/dev/null || true
wait $loader 2>/dev/null || true
echo "uploaded in $(( $(date +%s) - start )) s"

rss() { awk '/VmRSS/ {print $2}' "/proc/$server/status"; }
before=$(rss)
peak=$before
curl -sf -H "Authorization: Bearer $auditor" "http://127.0.0.1:$PORT/v1/exports/proofs?format=zip" -o "$OUT/export-bench.zip" &
download=$!
t0=$(date +%s.%N)
while kill -0 $download 2>/dev/null; do
    now=$(rss); [ "$now" -gt "$peak" ] && peak=$now
    sleep 0.1
done
wait $download
t1=$(date +%s.%N)
size=$(stat -c %s "$OUT/export-bench.zip")
key="$(curl -sf -H "Authorization: Bearer $auditor" "http://127.0.0.1:$PORT/v1/audit/checkpoint" | python3 -c 'import json,sys; print(json.load(sys.stdin)["public_key"])')"
echo "API export: $N proofs, $size bytes in $(python3 -c "print(round($t1 - $t0, 1))") s; server RSS before ${before} KiB, peak ${peak} KiB"
"$BIN" verify "$OUT/export-bench.zip" --public-key "$key"
cp "$OUT/export-bench.zip" "$OUT/export-bench-damaged.zip"
python3 - "$OUT/export-bench-damaged.zip" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[len(data) // 2] ^= 0x01
open(path, "wb").write(data)
PY
if "$BIN" verify "$OUT/export-bench-damaged.zip" --public-key "$key" | head -3; then
    echo "a damaged bundle verified" >&2; exit 1
fi
kill $server; wait $server 2>/dev/null || true
/usr/bin/time -f "countersign export: peak RSS %M KiB, %e s" "$BIN" export -o "$OUT/export-bench-cli.zip" 2>&1 | tail -2
"$BIN" verify "$OUT/export-bench-cli.zip" --public-key "$key"
