#!/usr/bin/env bash
# The web console in headless chromium (Tests/browser/console_test.py) against a live server:
# a fresh database, a free port, three API keys; the server is stopped afterwards, also on failure.
#
#   scripts/browser-test.sh [path/to/countersign]      (default: .build/debug/countersign)
#
# Needs chromium, chromium-driver and python3-selenium (scripts/deps.sh installs them; this script
# installs librsvg2-bin when rsvg-convert is missing) and a running cluster (scripts/pg.sh start; scripts/test.sh starts it). Environment:
#   BROWSER_TEST_DATABASE  database name (default countersign_browser_test), recreated empty
#   BROWSER_TEST_PORT      port (default: a free one)
#   BROWSER_TEST_OUT       screenshots, PDFs, downloads, server log (default test-output/browser)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

binary="${1:-.build/debug/countersign}"
database="${BROWSER_TEST_DATABASE:-countersign_browser_test}"
out="${BROWSER_TEST_OUT:-test-output/browser}"
PG=scripts/pg.sh

for tool in /usr/bin/chromium /usr/bin/chromedriver; do
    [ -x "$tool" ] || { echo "browser-test: $tool is missing (scripts/deps.sh installs it)" >&2; exit 1; }
done
/usr/bin/python3 -c "import selenium" 2>/dev/null || { echo "browser-test: python3-selenium is missing (scripts/deps.sh)" >&2; exit 1; }
# rsvg-convert rasterises the server's SVG for the comparison with the pad's pixels.
if ! command -v rsvg-convert >/dev/null 2>&1; then
    echo "browser-test: installing librsvg2-bin (rsvg-convert)"
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends librsvg2-bin >/dev/null \
        || { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends librsvg2-bin >/dev/null; }
fi
[ -x "$binary" ] || { echo "browser-test: no server binary at $binary" >&2; exit 1; }

port="${BROWSER_TEST_PORT:-$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
rm -rf "$out"
mkdir -p "$out"
$PG createdb "$database" --fresh >/dev/null
url="$($PG url "$database")"
# Migrated as the owner; the server (and `keys`) connect as the runtime role.
MIGRATION_DATABASE_URL="$($PG owner-url "$database")" "$binary" migrate >/dev/null

server=""
stop_server() {
    if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
        kill -CONT "$server" 2>/dev/null || true   # the test pauses it to be unreachable
        kill "$server" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
}
trap stop_server EXIT

DATABASE_URL="$url" HOST=127.0.0.1 PORT="$port" PUBLIC_DIR="$PWD/public" LOG_LEVEL=notice DATA_DIR="$out/data" CHECKPOINT_KEY_GENERATE=true DATA_KEY_GENERATE=true \
    "$binary" serve >"$out/server.log" 2>&1 &
server=$!
# The test pauses the server (SIGSTOP) to make it unreachable, and lets it go on (SIGCONT).
export BROWSER_TEST_SERVER_PID="$server"
base="http://127.0.0.1:$port"
for _ in $(seq 150); do
    if curl -fsS --max-time 2 "$base/readyz" >/dev/null 2>&1; then break; fi
    if ! kill -0 "$server" 2>/dev/null; then
        echo "browser-test: the server exited; its log:" >&2
        cat "$out/server.log" >&2
        exit 1
    fi
    sleep 0.2
done
curl -fsS --max-time 5 "$base/readyz" >/dev/null || { echo "browser-test: the server did not become ready on $base" >&2; exit 1; }

key() { DATABASE_URL="$url" "$binary" keys create --role "$1" --name "browser test $1" 2>/dev/null; }
export CONSOLE_TEST_COURIER_KEY="$(key courier)"
export CONSOLE_TEST_DISPATCHER_KEY="$(key dispatcher)"
export CONSOLE_TEST_AUDITOR_KEY="$(key auditor)"
export CONSOLE_TEST_ADMIN_KEY="$(key admin)"

echo "browser-test: chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}') against $base (database $database)"
/usr/bin/python3 Tests/browser/console_test.py --base-url "$base" --out "$out" --binary "$binary"

# The ZIP the auditor downloaded through the console verifies offline with `countersign verify`,
# pinned to the server's checkpoint key; a flipped byte, or another trusted key, makes it fail.
bundle="$(ls "$out"/downloads/*.zip | head -1)"
public_key="$(curl -fsS -H "Authorization: Bearer $CONSOLE_TEST_AUDITOR_KEY" "$base/v1/audit/checkpoint" \
    | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["public_key"])')"
"$binary" verify "$bundle" --public-key "$public_key" | sed 's/^/browser-test: /'
/usr/bin/python3 - "$bundle" "$out/damaged.zip" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[len(data) // 3] ^= 0x01
open(sys.argv[2], "wb").write(data)
PY
for attempt in "$out/damaged.zip $public_key" "$bundle $(printf '11%.0s' $(seq 32))"; do
    set -- $attempt
    status=0
    "$binary" verify "$1" --public-key "$2" > "$out/verify-refused.txt" 2>&1 || status=$?
    if [ "$status" != 1 ] || ! grep -q "^INVALID " "$out/verify-refused.txt"; then
        echo "browser-test: FAIL: countersign verify $(basename "$1") with key ${2:0:8}… exited $status, not 1 with INVALID lines" >&2
        exit 1
    fi
    echo "browser-test: countersign verify refuses $(basename "$1") with key ${2:0:8}…: $(head -1 "$out/verify-refused.txt")"
done

# After the whole console workload the audit chains verify from the database too (every chain,
# the heads in audit_chains, every stored checkpoint, pinned to the server's key).
# The server's development data keys (DATA_DIR/data-keys) open the sealed proofs.
DATABASE_URL="$url" DATA_DIR="$out/data" DATA_KEY_GENERATE=true "$binary" verify --database --public-key "$public_key" | sed 's/^/browser-test: /'
