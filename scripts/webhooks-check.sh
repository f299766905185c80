#!/usr/bin/env bash
# Webhooks against a live server, verified with the Standard Webhooks reference library
# (`standardwebhooks` from PyPI, installed into .build-venv-webhooks/ on first use).
#
#   scripts/webhooks-check.sh BINARY verify   every event arrives, signed so the library verifies it,
#                                             before and after a secret rotation (part of `make test`)
#   scripts/webhooks-check.sh BINARY faults [--phase-seconds N]
#                                             receiver down / 500 / 429 + Retry-After / hanging, the
#                                             service SIGKILLed, PostgreSQL restarted: every committed
#                                             change's event arrives, none for a refused one
#
# Its own PostgreSQL cluster (.data/webhooks, a free port) and free ports for the service and the
# receiver; everything it starts is stopped at the end. Posts go to 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

binary="${1:?usage: scripts/webhooks-check.sh BINARY verify|faults [options]}"
mode="${2:?verify or faults}"
shift 2
venv=.build-venv-webhooks
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import standardwebhooks" 2>/dev/null; then
    echo "webhooks-check: installing standardwebhooks 1.1.0 into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "standardwebhooks==1.1.0"
fi

export COUNTERSIGN_PG_DIR="${WEBHOOKS_PG_DIR:-$PWD/.data/webhooks}"
PG=scripts/pg.sh
export COUNTERSIGN_PG_PORT="${WEBHOOKS_PG_PORT:-$($PG pick-port)}"
pg_started=0
if ! $PG status >/dev/null 2>&1; then
    $PG start >&2
    pg_started=1
fi
trap '[ $pg_started = 1 ] && $PG stop >/dev/null 2>&1 || true' EXIT
$PG createdb "webhooks_$mode" --fresh >/dev/null
MIGRATION_DATABASE_URL="$($PG owner-url "webhooks_$mode")" "$binary" migrate >/dev/null
read -r port receiver_port <<<"$(python3 scripts/free-port.py 2 | tr '\n' ' ')"
mkdir -p test-output
extra=()
[ "$mode" = faults ] && extra=(--pg-restart "$PWD/scripts/pg.sh restart")
"$venv/bin/python" Tests/reliability/webhooks.py "$mode" --binary "$binary" --database-url "$($PG url "webhooks_$mode")" \
    --admin-url "$($PG admin-url "webhooks_$mode")" --port "$port" --receiver-port "$receiver_port" \
    --server-log "test-output/webhooks-$mode.log" "${extra[@]}" "$@"
