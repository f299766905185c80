#!/usr/bin/env bash
# `make test`: a fresh test database on a private cluster, every test, then the cluster stopped
# again if this script started it. Fails on any compiler warning in our own code. Every server and
# cluster it starts takes a free port (scripts/free-port.py); scripts/ports-taken.sh proves that.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# A private test cluster (.data/test) on a free port, so the run neither needs 5544 nor touches the
# development cluster or another checkout's PostgreSQL there. Exported: the outage suites restart it
# through COUNTERSIGN_PGCTL, and browser-test.sh uses it, with the same port and folder. A caller
# who sets COUNTERSIGN_PG_PORT (and maybe COUNTERSIGN_PG_DIR) gets that cluster instead, as before.
# A cluster already running in that folder (an interrupted run's) keeps its port, and is stopped at
# the end when it is the private one.
PG=scripts/pg.sh
started=0
if [ -z "${COUNTERSIGN_PG_PORT:-}" ]; then
    [ -n "${COUNTERSIGN_PG_DIR:-}" ] || { export COUNTERSIGN_PG_DIR="$PWD/.data/test"; started=1; }
    export COUNTERSIGN_PG_PORT="$($PG pick-port)"
fi
cleanup() {
    if [ "$started" = 1 ]; then $PG stop || true; fi
}
trap cleanup EXIT
if ! $PG status; then
    started=1
    $PG start
fi

$PG createdb countersign_test --fresh
# The service under test connects as the runtime role; test set-up (creating and migrating scratch
# databases, the client tests' own tables) as the owner; tampering tests as the superuser.
export TEST_DATABASE_URL="$($PG url countersign_test)"
export TEST_DATABASE_OWNER_URL="$($PG owner-url countersign_test)"
export TEST_DATABASE_ADMIN_URL="$($PG admin-url countersign_test)"
export TEST_DATABASE_SOCKET_DIR="$($PG socket-dir)"
export COUNTERSIGN_PGCTL="$PWD/scripts/pg.sh"
mkdir -p test-output

echo "test: building (debug, with tests)"
swift build --build-tests 2>&1 | tee test-output/build.log | grep -E "error|warning: |Build complete" | grep -v "^warning: '" || true
if [ "${PIPESTATUS[0]}" != 0 ] || grep -q "error:" test-output/build.log; then
    echo "test: build failed (test-output/build.log)" >&2
    exit 1
fi
ours="$(grep -E "^$PWD/(Sources|Tests)/.*: warning: " test-output/build.log | sort -u || true)"
if [ -n "$ours" ]; then
    echo "$ours" >&2
    echo "test: compiler warnings in our code" >&2
    exit 1
fi

scripts/openapi-check.sh  # public/openapi.yaml (served as /openapi.yaml) must be valid OpenAPI 3.1

# Deployment files: parse, name only variables the service reads, libraries the runtime image has,
# and a smoke run of the binary laid out as in the image.
$PG createdb countersign_deploycheck --fresh
python3 scripts/check-deploy.py --binary .build/debug/countersign --smoke --database-url "$($PG url countersign_deploycheck)" \
    --owner-url "$($PG owner-url countersign_deploycheck)"

# Everything but the suites that stop and start the shared server, in parallel...
swift test --skip-build --skip DatabaseOutage
# ...then those, alone.
swift test --skip-build --no-parallel --filter DatabaseOutage

# The web console in headless chromium against a live server from this debug build, on its own
# fresh database and a free port (screenshots in test-output/browser/).
scripts/browser-test.sh .build/debug/countersign

# A client generated from public/openapi.yaml (openapi-python-client) uploads each of the
# document's proof examples to a live server; every JSON example matches its schema.
scripts/generated-client-smoke.sh .build/debug/countersign

# The reference verifier (Python, written from docs/audit.md alone) on a real bundle and database
# and on tampered copies of both (scripts/reference-verifier/run.sh).
scripts/reference-verifier/run.sh .build/debug/countersign

# The courier SDK end to end: courier-cli queues proofs while the server is down, is killed with
# SIGKILL mid-queue, and every proof is stored exactly once (its own database and a free port).
scripts/courier-e2e.sh .build/debug/countersign .build/debug/courier-cli

# Webhooks from a live server to a live receiver on 127.0.0.1, every post verified with the
# Standard Webhooks reference library (its fault run is part of reliability.sh below).
scripts/webhooks-check.sh .build/debug/countersign verify

# Reliability, short form, on its own PostgreSQL cluster (a free port): each fuzz target for a few
# seconds, contract fuzzing per role, a PostgreSQL restart under load, live socket checks
# (`make reliability` is the long form; figures in docs/reliability.md).
RELIABILITY_BINARY="$PWD/.build/debug/countersign" scripts/reliability.sh
