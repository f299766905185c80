#!/usr/bin/env bash
# Regression check for issue 20 item 6: the tests must not depend on a free well-known port.
# Occupies 127.0.0.1:8080 (the service's default), 18080 (the reliability runs' old first port) and
# 5544 (the development PostgreSQL's default) with dummy listeners, then runs a command, by default
# the whole of `make test` (scripts/test.sh), and exits with its status.
#
#   scripts/ports-taken.sh                          the whole test run with the ports taken
#   scripts/ports-taken.sh scripts/reliability.sh   any other command (browser-test.sh, a benchmark, …)
#
# PORTS_TAKEN overrides the list ("8080 18080 5544"). A port some other process already listens on
# (a Countersign, another checkout's PostgreSQL) is left to it: it is taken either way, which is the
# point. The listeners are stopped when the command ends, also on failure or Ctrl-C.
#
# `make test` itself does not hold these ports: on a shared machine a dummy listener on 5544 or 8080
# could make another checkout's PostgreSQL or service fail when it restarts there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ports="${PORTS_TAKEN:-8080 18080 5544}"
[ $# -gt 0 ] || set -- scripts/test.sh
ready="$(mktemp)"

# One process holds every port that is free; it exits by itself if this script dies without the trap.
python3 - "$ready" $ports <<'PY' &
import os, socket, sys, time
held, others = [], []
for port in map(int, sys.argv[2:]):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
        s.listen()
        held.append(s)
    except OSError:
        s.close()
        others.append(port)
with open(sys.argv[1], "w") as f:
    f.write(f"held {' '.join(str(s.getsockname()[1]) for s in held) or '-'}; "
            f"already in use by another process {' '.join(map(str, others)) or '-'}\n")
parent = os.getppid()
while os.getppid() == parent:
    time.sleep(1)
PY
holder=$!
stop_holder() { kill "$holder" 2>/dev/null || true; wait "$holder" 2>/dev/null || true; rm -f "$ready"; }
trap stop_holder EXIT
for _ in $(seq 100); do [ -s "$ready" ] && break; sleep 0.1; done
[ -s "$ready" ] || { echo "ports-taken: the dummy listeners did not start" >&2; exit 1; }
echo "ports-taken: 127.0.0.1 ports $ports: $(cat "$ready")"

# Every port must now refuse a bind, as it would refuse a server.
for port in $ports; do
    if python3 -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))' "$port" 2>/dev/null; then
        echo "ports-taken: 127.0.0.1:$port is still free" >&2
        exit 1
    fi
done

echo "ports-taken: running $*"
status=0
"$@" || status=$?
echo "ports-taken: $* exited $status with 127.0.0.1 ports $ports taken"
exit $status
