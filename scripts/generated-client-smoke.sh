#!/usr/bin/env bash
# The contract is one a client can be generated from: openapi-python-client generates a typed
# client from public/openapi.yaml, and Tests/contract/generated_client_smoke.py drives a live
# server with it alone (session, create a delivery, upload each of the document's three proof
# examples — ink, signature_pad, InkML — read metadata and search). It also checks every example
# in the document against its own schema, so the examples a developer copies are valid requests.
#
#   scripts/generated-client-smoke.sh [path/to/countersign]     (default .build/debug/countersign)
#
# Needs a running cluster (scripts/pg.sh start; scripts/test.sh starts it). The generator and
# its runtime (httpx, attrs) go into .build-venv-openapi-client/ (ignored) on first use.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
binary="${1:-.build/debug/countersign}"
venv=.build-venv-openapi-client
version=0.29.1
if [ ! -x "$venv/bin/openapi-python-client" ]; then
    echo "generated-client: installing openapi-python-client $version into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "openapi-python-client==$version" pyyaml jsonschema
fi
out="$(mktemp -d)"
. scripts/live-server.sh
trap 'live_server_stop; rm -rf "$out"' EXIT

(cd "$out" && "$OLDPWD/$venv/bin/openapi-python-client" generate --path "$OLDPWD/public/openapi.yaml" --meta none >generate.log 2>&1) \
    || { cat "$out/generate.log" >&2; echo "generated-client: generation failed" >&2; exit 1; }
live_server_start "$binary" countersign_generated_client "$out/server.log"
export SMOKE_BASE="$LIVE_BASE"
export SMOKE_DISPATCHER_KEY="$(live_server_key dispatcher "generated client dispatcher")"
export SMOKE_COURIER_KEY="$(live_server_key courier "generated client courier")"
PYTHONPATH="$out" "$venv/bin/python" Tests/contract/generated_client_smoke.py public/openapi.yaml \
    || { echo "generated-client: server log:" >&2; tail -20 "$out/server.log" >&2; exit 1; }
