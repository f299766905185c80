#!/usr/bin/env bash
# What a device signature costs an upload (issue 21, decision 0026), paired in one run: one server,
# signed and unsigned uploads interleaved (Benchmarks/device_signature_compare.py), so a slow spell
# of the host hits both sides alike.
#
#   Benchmarks/device_signature_compare.sh [BINARY] [PAIRS]     defaults .build/debug/countersign, 300
#
# Needs a running cluster (scripts/pg.sh start) and python3's `cryptography` (Debian:
# python3-cryptography). Everything on 127.0.0.1 with a free port.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
binary="${1:-.build/debug/countersign}"; pairs="${2:-300}"
python3 -c 'import cryptography' 2>/dev/null || { echo "device-signature-compare: needs python3-cryptography" >&2; exit 1; }
log="$(mktemp)"
. scripts/live-server.sh
trap 'live_server_stop; rm -f "$log"' EXIT
# A release build uploads faster than the per-key limit allows: the server inherits this.
export RATE_LIMIT_PER_SECOND=0
live_server_start "$binary" countersign_device_bench "$log"
courier="$(live_server_key courier "bench courier")"
dispatcher="$(live_server_key dispatcher "bench dispatcher")"
python3 Benchmarks/device_signature_compare.py "$LIVE_BASE" "$courier" "$dispatcher" "$pairs"
