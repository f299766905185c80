#!/usr/bin/env bash
# The reference verifier's test (issue 19.7), run by `make test` (scripts/test.sh): builds a real
# database (three delivered proofs through a live server on a free port) and a real bundle
# (`countersign export`; REF-4 device-signed; and one `--without-points`), checks that countersign_verify.py passes on them, then that it fails,
# naming the file or event, on each tampered copy of the bundle (a changed PNG byte, a changed
# metadata field, a removed proof, a manifest re-signed with another key, an altered event, another
# device signature) and on the database after a proof's signer, a recipient, an event and a device
# signature were changed behind the service's back; and that the server refuses a small-order device key and
# the verifier's strict Ed25519 self-test passes.
#
#   scripts/reference-verifier/run.sh [BINARY]     (default .build/debug/countersign)
#
# Needs the cluster of scripts/pg.sh running (COUNTERSIGN_PG_DIR/PORT, as scripts/test.sh sets
# them); uses database countersign_refverify. `cryptography` comes from the system's Python or is
# installed into .build-venv-refverify/ (ignored) on first use.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BIN="$(realpath "${1:-.build/debug/countersign}")"
PG=scripts/pg.sh
HERE=scripts/reference-verifier
python=python3
if ! python3 -c "import cryptography" 2>/dev/null; then
    venv=.build-venv-refverify
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import cryptography" 2>/dev/null; then
        echo "reference-verifier: installing cryptography into $venv" >&2
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check "cryptography==50.0.2"
    fi
    python="$venv/bin/python"
fi

work="$(mktemp -d)"
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
$PG createdb countersign_refverify --fresh >/dev/null
export DATABASE_URL="$($PG url countersign_refverify)"
admin_url="$($PG admin-url countersign_refverify)"
openssl genpkey -algorithm ed25519 -out "$work/checkpoint.pem" 2>/dev/null
printf 'refverify-1 %s\n' "$(openssl rand -base64 32)" > "$work/data-keys"
export CHECKPOINT_KEY_FILE="$work/checkpoint.pem" DATA_KEY_FILE="$work/data-keys" LOG_LEVEL=warning
MIGRATION_DATABASE_URL="$($PG owner-url countersign_refverify)" "$BIN" migrate >/dev/null
token="$("$BIN" keys create --role admin --name reference-verifier | tail -1)"
port="$(python3 scripts/free-port.py)"
DATA_DIR="$work/data" PORT=$port HOST=127.0.0.1 "$BIN" serve > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 200); do curl -sf --max-time 2 "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
api() { curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' "$@"; }
for n in 1 2 3; do
    api -d "{\"reference\":\"REF-$n\",\"recipient\":{\"name\":\"Recipient $n\"},\"address\":\"$n Main St\",\"destination\":{\"lat\":52.52,\"lon\":13.405}}" \
        "http://127.0.0.1:$port/v1/deliveries" >/dev/null
    api --data-binary @docs/examples/proof-upload.json "http://127.0.0.1:$port/v1/deliveries/REF-$n/proof" >/dev/null
done
# REF-4 is uploaded device-signed: a key registered, approved, and the body signed as a device does.
device="$(api -d "{\"public_key\":\"$("$python" $HERE/device_sign.py keygen "$work/device.seed")\",\"label\":\"reference verifier\"}" \
    "http://127.0.0.1:$port/v1/devices" | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')"
api -X POST "http://127.0.0.1:$port/v1/devices/$device/approve" >/dev/null
api -d '{"reference":"REF-4","recipient":{"name":"Recipient 4"},"address":"4 Main St","destination":{"lat":52.52,"lon":13.405}}' \
    "http://127.0.0.1:$port/v1/deliveries" >/dev/null
signature="$("$python" $HERE/device_sign.py sign "$work/device.seed" REF-4 "$device" docs/examples/proof-upload.json)"
api -H "Countersign-Device-Key: $device" -H "Countersign-Device-Signature: $signature" \
    --data-binary @docs/examples/proof-upload.json "http://127.0.0.1:$port/v1/deliveries/REF-4/proof" >/dev/null
# A public key of small order (the identity: any body "verifies" with R = identity, S = 0) is refused.
failures=0
refused="$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"public_key":"AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","label":"identity"}' "http://127.0.0.1:$port/v1/devices")"
if [ "$refused" != 422 ]; then
    echo "reference-verifier: FAILED: registering the identity key was answered $refused, not 422" >&2; failures=$((failures + 1))
fi
# REF-5 is delivered, then erased: both verifiers must still pass and report it ("Erased deliveries").
api -d '{"reference":"REF-5","recipient":{"name":"Erased Person"},"address":"5 Main St"}' "http://127.0.0.1:$port/v1/deliveries" >/dev/null
api --data-binary @docs/examples/proof-upload.json "http://127.0.0.1:$port/v1/deliveries/REF-5/proof" >/dev/null
api -d '{"reason":"DSR-1"}' "http://127.0.0.1:$port/v1/deliveries/REF-5/erase" >/dev/null
key="$(api "http://127.0.0.1:$port/v1/audit/checkpoint" | python3 -c 'import json, sys; print(json.load(sys.stdin)["public_key"])')"
kill "$server"; wait "$server" 2>/dev/null || true; server=""

"$BIN" export -o "$work/bundle.zip" >/dev/null
"$BIN" verify "$work/bundle.zip" --public-key "$key" >/dev/null
# The same proofs without their raw dynamics (points, ink): both verifiers accept it.
"$BIN" export --without-points -o "$work/lean.zip" >/dev/null
"$BIN" verify "$work/lean.zip" --public-key "$key" >/dev/null
if ! out="$("$python" $HERE/countersign_verify.py self-test)"; then
    echo "reference-verifier: FAILED: self-test"$'\n'"$out" >&2; failures=$((failures + 1))
else
    echo "reference-verifier: $out"
fi
expect_ok() {
    if ! out="$("$python" $HERE/countersign_verify.py "$@" --public-key "$key")"; then
        echo "reference-verifier: FAILED: should pass: $*"$'\n'"$out" >&2; failures=$((failures + 1))
    else
        echo "reference-verifier: $out"
    fi
}
# $1 what must be named; the rest: the verifier's arguments.
expect_invalid() {
    local name="$1"; shift
    if out="$("$python" $HERE/countersign_verify.py "$@" --public-key "$key")"; then
        echo "reference-verifier: FAILED: should fail: $*" >&2; failures=$((failures + 1))
    elif ! grep -q "INVALID .*$name" <<<"$out"; then
        echo "reference-verifier: FAILED: $* does not name $name:"$'\n'"$out" >&2; failures=$((failures + 1))
    else
        echo "reference-verifier: refused as expected: $(grep -m1 "INVALID .*$name" <<<"$out")"
    fi
}
expect_ok bundle "$work/bundle.zip"
expect_ok bundle "$work/lean.zip"
if python3 -c 'import sys, zipfile; sys.exit(any(n.endswith(("/points", "/ink")) for n in zipfile.ZipFile(sys.argv[1]).namelist()))' "$work/lean.zip"; then :; else
    echo "reference-verifier: FAILED: the bundle exported --without-points holds points or ink" >&2; failures=$((failures + 1))
fi
expect_ok database --database-url "$DATABASE_URL"
if ! grep -q "1 erased deliveries (REF-5)" <<<"$out"; then
    echo "reference-verifier: FAILED: the database check does not report the erased REF-5: $out" >&2; failures=$((failures + 1))
fi
if "$BIN" verify --database --trust-embedded-key 2>/dev/null | grep -q "erased deliveries.*REF-5"; then :; else
    echo "reference-verifier: FAILED: countersign verify --database does not report the erased REF-5" >&2; failures=$((failures + 1))
fi
folder=deliveries/REF-2/
for kind in png metadata remove resign event; do
    "$python" $HERE/tamper.py "$work/bundle.zip" "$work/$kind.zip" $kind $folder
    # countersign's own verifier refuses each copy too.
    if "$BIN" verify "$work/$kind.zip" --public-key "$key" >/dev/null; then
        echo "reference-verifier: FAILED: countersign verify accepted the $kind copy" >&2; failures=$((failures + 1))
    fi
done
expect_invalid "${folder}signature.png" bundle "$work/png.zip"
expect_invalid "${folder}metadata.json" bundle "$work/metadata.zip"
expect_invalid "${folder}" bundle "$work/remove.zip"
expect_invalid "public_key.pem" bundle "$work/resign.zip"
expect_invalid "audit/chain-" bundle "$work/event.zip"
# The device-signed proof with another signature in its metadata.json (checksums made to agree).
"$python" $HERE/tamper.py "$work/bundle.zip" "$work/device.zip" device deliveries/REF-4/
if "$BIN" verify "$work/device.zip" --public-key "$key" >/dev/null; then
    echo "reference-verifier: FAILED: countersign verify accepted the device copy" >&2; failures=$((failures + 1))
fi
expect_invalid "deliveries/REF-4/metadata.json" bundle "$work/device.zip"

# The database, changed behind the service's back (as the superuser, triggers off).
psql -Xq "$admin_url" -v ON_ERROR_STOP=1 -c "ALTER TABLE proofs DISABLE TRIGGER USER" \
    -c "UPDATE proofs SET signer_name = 'Mallory' WHERE delivery_id = (SELECT id FROM deliveries WHERE reference = 'REF-1')" \
    -c "ALTER TABLE proofs ENABLE TRIGGER USER"
expect_invalid "delivery REF-1" database --database-url "$DATABASE_URL"
# A recipient renamed by the owner: only the delivery_created event's commitment guards it.
psql -Xq "$admin_url" -v ON_ERROR_STOP=1 -c "UPDATE deliveries SET recipient_name = 'Someone Else' WHERE reference = 'REF-2'"
expect_invalid "delivery REF-2: its facts do not commit to delivery_commitment" database --database-url "$DATABASE_URL"
psql -Xq "$admin_url" -v ON_ERROR_STOP=1 -c "ALTER TABLE audit_events DISABLE TRIGGER USER" \
    -c "UPDATE audit_events SET user_agent = 'forged' WHERE seq = (SELECT min(seq) FROM audit_events)" \
    -c "ALTER TABLE audit_events ENABLE TRIGGER USER"
expect_invalid "event seq" database --database-url "$DATABASE_URL"
psql -Xq "$admin_url" -v ON_ERROR_STOP=1 -c "ALTER TABLE proofs DISABLE TRIGGER USER" \
    -c "UPDATE proofs SET device_signature = set_byte(device_signature, 0, get_byte(device_signature, 0) # 1)
        WHERE delivery_id = (SELECT id FROM deliveries WHERE reference = 'REF-4')" \
    -c "ALTER TABLE proofs ENABLE TRIGGER USER"
expect_invalid "delivery REF-4" database --database-url "$DATABASE_URL"
# A sealed PNG with one bit flipped: the box no longer opens to what the event recorded.
psql -Xq "$admin_url" -v ON_ERROR_STOP=1 -c "ALTER TABLE proofs DISABLE TRIGGER USER" \
    -c "UPDATE proofs SET png = set_byte(png, 30, get_byte(png, 30) # 1) WHERE delivery_id = (SELECT id FROM deliveries WHERE reference = 'REF-3')" \
    -c "ALTER TABLE proofs ENABLE TRIGGER USER"
expect_invalid "delivery REF-3): png_sha256 differs" database --database-url "$DATABASE_URL"
# Without the data key file the sealed proofs cannot be checked, and the verifier says so.
DATA_KEY_FILE= expect_invalid "wrapped by key" database --database-url "$DATABASE_URL" --data-key-file /dev/null
if [ $failures != 0 ]; then echo "reference-verifier: $failures failures" >&2; exit 1; fi
echo "reference-verifier: all passed"
