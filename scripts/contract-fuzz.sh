#!/usr/bin/env bash
# Contract fuzzing with schemathesis: a live `countersign serve` on a scratch database, every
# operation of public/openapi.yaml, once with a key of each role. Checks: no 5xx; status, content
# type, headers and body conform to the spec (Tests/reliability/schemathesis.toml).
#
#   scripts/contract-fuzz.sh --binary B --database-url URL [--owner-url URL] [--port P] [--examples N] [--roles "admin courier"] [--phases LIST]
#
# The server listens on 127.0.0.1:P, by default a free port (scripts/free-port.py). It serves as the
# role of --database-url (the runtime role); `migrate` runs as --owner-url (default: the same URL).
#
# Prints `RESULT {"run":"contract",...}` with the number of generated cases and failures; exit 1 on
# any failure. schemathesis is installed into .build-venv/ (ignored) on first use.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

binary=""; database_url=""; owner_url=""; port=""; examples=50; roles="courier dispatcher auditor admin"; phases="examples,coverage,fuzzing,stateful"
max_time=""
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift 2 ;;
        --database-url) database_url="$2"; shift 2 ;;
        --owner-url) owner_url="$2"; shift 2 ;;
        --port) port="$2"; shift 2 ;;
        --examples) examples="$2"; shift 2 ;;
        --roles) roles="$2"; shift 2 ;;
        --phases) phases="$2"; shift 2 ;;
        --max-time) max_time="$2"; shift 2 ;;
        *) echo "contract-fuzz: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -n "$binary" ] && [ -n "$database_url" ] || { echo "contract-fuzz: --binary and --database-url are required" >&2; exit 2; }
[ -n "$port" ] || port="$(python3 scripts/free-port.py)"

venv=.build-venv
if [ ! -x "$venv/bin/st" ]; then
    echo "contract-fuzz: installing schemathesis into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "schemathesis>=4,<5" >&2
fi

out="${RELIABILITY_OUT:-test-output/reliability}"
mkdir -p "$out"
log="$out/contract-server.log"
MIGRATION_DATABASE_URL="${owner_url:-$database_url}" "$binary" migrate >/dev/null
token() { DATABASE_URL="$database_url" "$binary" keys create --role "$1" --name "contract $1" 2>&1 | grep -o 'cs_[A-Za-z0-9_-]*' | head -1; }
# Webhooks on, so their routes are fuzzed too, but with no sender: the fuzzer registers arbitrary
# URLs, and tests send nothing beyond loopback (a throwaway sealing key, for this run only).
DATABASE_URL="$database_url" PORT="$port" HOST=127.0.0.1 LOG_LEVEL=warning CHECKPOINT_KEY_GENERATE=true DATA_KEY_GENERATE=true DATA_DIR="$out/contract-data" \
    WEBHOOK_SECRETS_KEY="$(openssl rand -base64 32)" WEBHOOK_SENDER_ENABLED=false \
    "$binary" serve >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
# Bounded probes, and stop as soon as the server exits: on a taken port some other listener may
# accept the connection and never answer.
for _ in $(seq 1 240); do
    curl -fs --max-time 2 "http://127.0.0.1:$port/healthz" >/dev/null && break
    kill -0 $server 2>/dev/null || { echo "contract-fuzz: the server on port $port exited: $(tail -3 "$log")" >&2; exit 1; }
    sleep 0.25
done

admin="$(token admin)"
base="http://127.0.0.1:$port"
stamp="$(date +%s)"
delivered="CF-$stamp-D"
curl -fs -X POST "$base/v1/deliveries" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
    -d "{\"reference\":\"$delivered\",\"recipient\":{\"name\":\"Contract\"},\"address\":\"1 Main St\",\"destination\":{\"lat\":52.52,\"lon\":13.405}}" >/dev/null
python3 -c 'import sys; sys.path.insert(0, "Tests/reliability"); import reliability; sys.stdout.buffer.write(reliability.ink_body(1))' \
    | curl -fs -X POST "$base/v1/deliveries/$delivered/proof" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
        --data-binary @- >/dev/null

total=0; failures=0; per_role=""
status=0
for role in $roles; do
    pending="CF-$stamp-$role"
    curl -fs -X POST "$base/v1/deliveries" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
        -d "{\"reference\":\"$pending\",\"recipient\":{\"name\":\"Contract\"},\"address\":\"1 Main St\"}" >/dev/null
    report="$out/contract-$role.txt"
    extra=()
    [ -n "$max_time" ] && extra+=(--max-time "$max_time")
    set +e
    CS_TOKEN="$(token "$role")" CS_DELIVERED="$delivered" CS_PENDING="$pending" \
        "$venv/bin/st" --config-file Tests/reliability/schemathesis.toml run public/openapi.yaml --url "$base" \
        --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
        --max-examples "$examples" --phases "$phases" --workers 1 --seed 20261122 --no-color \
        --report junit --report-junit-path "$out/contract-$role.xml" "${extra[@]}" >"$report" 2>&1
    rc=$?
    set -e
    cases="$(grep -oE '[0-9]+ generated' "$report" | tail -1 | grep -oE '[0-9]+' || echo 0)"
    failed="$(grep -oE '[0-9]+ (unique )?failures?' "$report" | tail -1 | grep -oE '^[0-9]+' || true)"
    [ "$rc" = 0 ] && failed=0
    [ -z "$failed" ] && failed=1
    echo "contract: $role: $cases cases, $failed failures (exit $rc, $report)" >&2
    total=$((total + cases)); failures=$((failures + failed))
    per_role="$per_role\"$role\":{\"cases\":$cases,\"failures\":$failed},"
    [ "$rc" = 0 ] || status=1
done
echo "RESULT {\"run\":\"contract\",\"cases\":$total,\"failures\":$failures,\"roles\":{${per_role%,}},\"ok\":$([ $status = 0 ] && echo true || echo false)}"
exit $status
