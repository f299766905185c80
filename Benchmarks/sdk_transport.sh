#!/usr/bin/env bash
# The courier SDK's transports against one live server, alternating rounds in the same run:
# URLSession (FoundationNetworking/libcurl on Linux) vs AsyncHTTPClient (docs/decisions/0022).
#
#   Benchmarks/sdk_transport.sh [UPLOADS_PER_ROUND] [ROUNDS] [BENCH_BINARY] [SERVER_BINARY]
#
# Defaults: 50 uploads a round, 4 rounds, .build/release/sdk-transport-bench (build it with
# `swift build -c release --product sdk-transport-bench`), .build/debug/countersign. Needs a
# running cluster (scripts/pg.sh start). The server takes a free port and a fresh database and is
# stopped afterwards. ≈ 1 min.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
per_round="${1:-50}"; rounds="${2:-4}"
bench="${3:-.build/release/sdk-transport-bench}"; server_binary="${4:-.build/debug/countersign}"
PG=scripts/pg.sh
out=test-output/sdk-transport
mkdir -p "$out"
$PG createdb countersign_sdk_bench --fresh >/dev/null
url="$($PG url countersign_sdk_bench)"
port="$(python3 scripts/free-port.py)"
# No rate limit: the benchmark measures transports, not the limiter.
DATABASE_URL="$url" HOST=127.0.0.1 PORT="$port" LOG_LEVEL=error DATA_DIR="$out/data" CHECKPOINT_KEY_GENERATE=true DATA_KEY_GENERATE=true \
    RATE_LIMIT_PER_SECOND=0 "$server_binary" serve --no-metrics >"$out/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 150); do curl -fsS --max-time 2 "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
key() { DATABASE_URL="$url" "$server_binary" keys create --role "$1" --name "sdk bench $1" 2>/dev/null; }
"$bench" "http://127.0.0.1:$port" "$(key courier)" "$(key dispatcher)" "$per_round" "$rounds"
