#!/usr/bin/env bash
# Hostile load (issue 20): legitimate uploads (8 threads over 32 courier keys) and a /healthz
# probe, first alone, then while two attacker keys send the heaviest valid uploads and maximal
# resizes at their rate limit and one client drips request bodies. Prints both runs and the ratios.
#
#   Benchmarks/hostile_load.sh [SECONDS]       (default 30 per run)
#
# A release build, a private PostgreSQL cluster and the server on free ports; loopback only.
# Environment: BENCH_BINARY (default: `swift build -c release` here).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-30}"
port="$(python3 scripts/free-port.py)"
export COUNTERSIGN_PG_DIR="$PWD/.data/hostile"
PG=scripts/pg.sh
export COUNTERSIGN_PG_PORT="$($PG pick-port)"
server=""
cleanup() { [ -z "$server" ] || { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; }; $PG stop >/dev/null 2>&1 || true; }
trap cleanup EXIT
$PG start >&2
$PG createdb countersign_hostile --fresh >&2
url="$($PG url countersign_hostile)"
if [ -n "${BENCH_BINARY:-}" ]; then
    binary="$BENCH_BINARY"
else
    swift build -c release --product countersign 2>&1 | { grep -E "error|complete" || true; } >&2
    binary="$(swift build -c release --show-bin-path)/countersign"
fi
MIGRATION_DATABASE_URL="$($PG owner-url countersign_hostile)" "$binary" migrate >/dev/null
key() { DATABASE_URL="$url" "$binary" keys create --role "$1" --name "$2" 2>&1 | grep -o 'cs_[A-Za-z0-9_-]*' | head -1; }
legit="$(for i in $(seq 1 32); do key courier "legit $i"; done | paste -sd, -)"
attacker1="$(key courier attacker-1)"; attacker2="$(key courier attacker-2)"
attackers="$attacker1,$attacker2"
psql -q "$url" -c "INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon)
    SELECT p || w || '-' || n, 'Load Test', 'Somewhere', 52.52, 13.405
    FROM unnest(array['C-', 'A-']) p, generate_series(0, 7) w, generate_series(0, 9999) n
    UNION ALL SELECT 'X-' || a || '-' || n, 'Attack', 'Somewhere', 52.52, 13.405 FROM generate_series(0, 1) a, generate_series(0, 19999) n
    UNION ALL SELECT 'HEAVY-' || a, 'Heavy', 'Somewhere', 52.52, 13.405 FROM generate_series(0, 1) a"

DATABASE_URL="$url" PORT="$port" HOST=127.0.0.1 LOG_LEVEL=warning CHECKPOINT_KEY_GENERATE=true DATA_KEY_GENERATE=true DATA_DIR="$COUNTERSIGN_PG_DIR/key" \
    REQUEST_TIMEOUT_SECONDS=10 "$binary" serve >"${TMPDIR:-/tmp}/countersign-hostile-server.log" 2>&1 &
server=$!
for _ in $(seq 1 200); do curl -fs --max-time 2 "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
# The stored proofs the attackers resize, each uploaded by its attacker: the most points the limits allow.
python3 - "$port" "$attacker1" "$attacker2" <<'PY'
import http.client, sys
sys.path.insert(0, "Benchmarks")
from hostile_load import body
for k, token in enumerate(sys.argv[2:]):
    conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=60)
    conn.request("POST", f"/v1/deliveries/HEAVY-{k}/proof", body=body(40000, 7),
                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    response = conn.getresponse()
    assert response.status == 201, (response.status, response.read()[:300])
PY

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
calm="$(python3 Benchmarks/hostile_load.py --port "$port" --duration "$seconds" --legit-tokens "$legit" --prefix C- --label calm)"
attack="$(python3 Benchmarks/hostile_load.py --port "$port" --duration "$seconds" --legit-tokens "$legit" --prefix A- --label attack \
    --attack --attack-tokens "$attackers")"
echo "$calm"
echo "$attack"
python3 - "$calm" "$attack" <<'PY'
import json, sys
calm, attack = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print("\n| measure | without attackers | under attack |")
print("|---|---:|---:|")
for key in ["legit_uploads_per_s", "legit_p50_ms", "legit_p99_ms", "healthz_p50_ms", "healthz_p99_ms", "healthz_max_ms"]:
    print(f"| {key} | {calm[key]} | {attack[key]} |")
print(f"| legit errors | {calm['legit_errors'] or 0} | {attack['legit_errors'] or 0} |")
print(f"\nattackers got: {attack['attacks']}")
ok = (attack["legit_p99_ms"] <= 2 * calm["legit_p99_ms"] and attack["healthz_p99_ms"] < 50 and not attack["legit_errors"])
print(f"RESULT {{\"run\":\"hostile-load\",\"ok\":{str(ok).lower()},\"p99_ratio\":{attack['legit_p99_ms'] / calm['legit_p99_ms']:.2f}}}")
PY
