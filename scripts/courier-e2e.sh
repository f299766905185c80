#!/usr/bin/env bash
# The courier SDK end to end (issue 21): Examples/courier-cli queues N proofs, in all four ink
# formats, while the server is down; `send` is killed with SIGKILL twice mid-queue (once exactly
# between the server's answer and the file's removal, once from outside at an arbitrary point) and
# started again; every proof must then be stored exactly once: N delivered deliveries, N
# proof_recorded audit events, an empty queue, nothing rejected. Half the proofs are signed with a
# device key the CLI registered and a dispatcher approved: N/2 proofs carry it.
#
#   scripts/courier-e2e.sh [path/to/countersign] [path/to/courier-cli]   (default: .build/debug/…)
#
# Needs a running cluster (scripts/pg.sh start; scripts/test.sh starts it), curl and python3.
# The server takes a free port and its own fresh database; it is stopped afterwards, also on failure.
#   COURIER_E2E_PROOFS  N (default 8)      COURIER_E2E_OUT  logs and queue (default test-output/courier-e2e)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

server_binary="${1:-.build/debug/countersign}"
cli="${2:-.build/debug/courier-cli}"
proofs="${COURIER_E2E_PROOFS:-8}"
out="${COURIER_E2E_OUT:-test-output/courier-e2e}"
database=countersign_courier_e2e
PG=scripts/pg.sh
for binary in "$server_binary" "$cli"; do [ -x "$binary" ] || { echo "courier-e2e: no binary at $binary" >&2; exit 1; }; done

rm -rf "$out"
mkdir -p "$out/ink"
queue="$out/queue"
$PG createdb "$database" --fresh >/dev/null
url="$($PG url "$database")"
MIGRATION_DATABASE_URL="$($PG owner-url "$database")" "$server_binary" migrate >/dev/null
port="$(python3 scripts/free-port.py)"
base="http://127.0.0.1:$port"

server=""
stop_server() {
    if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
        kill "$server" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    server=""
}
sender=""
cleanup() {
    stop_server
    if [ -n "$sender" ]; then kill -9 "$sender" 2>/dev/null || true; fi
}
trap cleanup EXIT
start_server() {
    DATABASE_URL="$url" HOST=127.0.0.1 PORT="$port" LOG_LEVEL=notice DATA_DIR="$out/data" CHECKPOINT_KEY_GENERATE=true DATA_KEY_GENERATE=true \
        "$server_binary" serve --no-metrics >>"$out/server.log" 2>&1 &
    server=$!
    for _ in $(seq 150); do
        if curl -fsS --max-time 2 "$base/readyz" >/dev/null 2>&1; then return 0; fi
        kill -0 "$server" 2>/dev/null || { echo "courier-e2e: the server exited:" >&2; cat "$out/server.log" >&2; exit 1; }
        sleep 0.2
    done
    echo "courier-e2e: the server did not become ready on $base" >&2
    exit 1
}
api() {  # api TOKEN PATH [curl args…]: the JSON body of a 2xx, or fail
    local token="$1" path="$2"; shift 2
    curl -fsS --max-time 10 -H "Authorization: Bearer $token" "$@" "$base$path"
}

# The deliveries, made by a dispatcher while the server runs; then the server goes away.
start_server
key() { DATABASE_URL="$url" "$server_binary" keys create --role "$1" --name "courier e2e $1" 2>/dev/null; }
dispatcher="$(key dispatcher)"; courier="$(key courier)"; auditor="$(key auditor)"
# The device's key: made and registered by the CLI, approved by the dispatcher; even-numbered proofs
# are signed with it (the server then verifies each and binds key and signature into its event).
device_file="$out/device-key.json"
COURIER_TOKEN="$courier" "$cli" device --key-file "$device_file" --server "$base" --label "courier e2e" >>"$out/cli.log"
device_id="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["key_id"])' "$device_file")"
api "$dispatcher" "/v1/devices/$device_id/approve" -X POST >/dev/null
for i in $(seq "$proofs"); do
    api "$dispatcher" /v1/deliveries -X POST -H 'Content-Type: application/json' \
        -d "{\"reference\":\"E2E-$i\",\"recipient\":{\"name\":\"Recipient $i\"},\"address\":\"$i Main St\"}" >/dev/null
done
stop_server

# One signature in the four formats SignatureKit reads (from the worked example's ink).
python3 - docs/examples/proof-upload.json "$out/ink" <<'PY'
import json, sys
ink = json.load(open(sys.argv[1]))["ink"]
folder = sys.argv[2]
json.dump(ink, open(f"{folder}/signature.json", "w"))
json.dump([{"points": [{"x": x, "y": y, "time": 1_700_000_000_000 + t} for x, y, t in s]} for s in ink["strokes"]],
          open(f"{folder}/signature-pad.json", "w"))
traces = "".join("<trace>" + ", ".join(f"{x} {y} {t}" for x, y, t in s) + "</trace>" for s in ink["strokes"])
open(f"{folder}/signature.inkml", "w").write(
    '<ink xmlns="http://www.w3.org/2003/InkML"><traceFormat><channel name="X"/><channel name="Y"/>'
    f'<channel name="T"/></traceFormat>{traces}</ink>')
rows = [f"{round(x * 10)} {round((200 - y) * 10)} {t} {0 if i == 0 else 1}" for s in ink["strokes"] for i, (x, y, t) in enumerate(s)]
open(f"{folder}/signature.svc", "w").write(f"{len(rows)}\n" + "\n".join(rows) + "\n")
PY
files=("signature.json" "signature-pad.json" "signature.inkml" "signature.svc")
for i in $(seq "$proofs"); do
    file="${files[$(( (i - 1) % 4 ))]}"
    canvas=(); [ "$file" = signature-pad.json ] && canvas=(--canvas 600x200)
    signing=(); [ $((i % 2)) = 0 ] && signing=(--device-key "$device_file")
    "$cli" queue --queue "$queue" --reference "E2E-$i" --signer "Recipient $i" "${canvas[@]}" "${signing[@]}" \
        --lat 52.52 --lon 13.405 --accuracy 10 "$out/ink/$file" >>"$out/cli.log"
done
echo "courier-e2e: queued $proofs proofs with the server down"

pending() { "$cli" status --queue "$queue" | tail -1 | awk '{print $2}'; }
delivered() { api "$dispatcher" "/v1/deliveries?status=delivered&limit=500" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))'; }

# 1. Server down: send gets no answer and keeps everything.
set +e
COURIER_TOKEN="$courier" "$cli" send --queue "$queue" --server "$base" --max-attempts 2 --max-delay 0.2 >>"$out/cli.log" 2>&1
status=$?
set -e
[ "$status" = 3 ] && [ "$(pending)" = "$proofs" ] || { echo "courier-e2e: offline send: exit $status, $(pending) pending" >&2; exit 1; }

# 2. The server comes back; send dies by SIGKILL right after the 2nd answer, before removing its file.
start_server
set +e
COURIER_TOKEN="$courier" "$cli" send --queue "$queue" --server "$base" --until-empty --crash-after-answers 2 >>"$out/cli.log" 2>&1
status=$?
set -e
[ "$status" = 137 ] || { echo "courier-e2e: expected the crash hook's SIGKILL (137), got $status" >&2; exit 1; }
left="$(pending)"
[ "$left" = $((proofs - 1)) ] || { echo "courier-e2e: after the crash $left pending, expected $((proofs - 1))" >&2; exit 1; }
echo "courier-e2e: killed between answer and removal: $(delivered) stored, $left still queued"

# 3. Killed from outside mid-queue (kill -9 once another proof is stored).
COURIER_TOKEN="$courier" "$cli" send --queue "$queue" --server "$base" --until-empty --pause-after-answer 0.3 >>"$out/cli.log" 2>&1 &
sender=$!
before="$(delivered)"
for _ in $(seq 200); do [ "$(delivered)" -gt "$before" ] && break; sleep 0.05; done
kill -9 "$sender"
wait "$sender" 2>/dev/null || true
sender=""
echo "courier-e2e: kill -9 mid-queue: $(delivered) stored, $(pending) still queued"
[ "$(pending)" -gt 0 ] || { echo "courier-e2e: the kill did not land mid-queue" >&2; exit 1; }

# 4. Restarted: the rest goes, the interrupted ones as replays.
COURIER_TOKEN="$courier" "$cli" send --queue "$queue" --server "$base" --until-empty >>"$out/cli.log" 2>&1

stored="$(delivered)"
recorded="$(api "$auditor" "/v1/audit/events?action=proof_recorded&limit=500" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')"
rejected="$("$cli" status --queue "$queue" | tail -1 | awk '{print $4}')"
replayed="$(grep -c '(replayed)' "$out/cli.log" || true)"
signed="$(psql -XAtq "$url" -c "SELECT count(*) FROM proofs WHERE device_key_id = '$device_id'")"
echo "courier-e2e: $stored of $proofs deliveries delivered, $recorded proof_recorded events, $(pending) pending, $rejected rejected, $replayed replayed answers, $signed device-signed"
[ "$stored" = "$proofs" ] && [ "$recorded" = "$proofs" ] && [ "$(pending)" = 0 ] && [ "$rejected" = 0 ] && [ "$replayed" -ge 1 ] \
    && [ "$signed" = $((proofs / 2)) ] \
    || { echo "courier-e2e: FAILED (logs in $out)" >&2; exit 1; }
echo "courier-e2e: every proof stored exactly once"
