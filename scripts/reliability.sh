#!/usr/bin/env bash
# `make reliability`: the reliability and security proof, against a real `countersign serve` on a
# private PostgreSQL cluster (its own port and data folder, so restarting it disturbs nobody).
#
#   scripts/reliability.sh           short form (about 2 minutes once built; part of `make test`)
#   scripts/reliability.sh --long    long form (about 2 hours: 10 min per fuzz target, 30 min soak)
#
# Parts (docs/reliability.md explains each and records the figures of a full run):
#   fuzz        libFuzzer + ASan over the four parsers and the renderer (Fuzz/run.sh)
#   contract    schemathesis against public/openapi.yaml with a key of each role (scripts/contract-fuzz.sh)
#   pg-restart  PostgreSQL stopped and started under upload load (Tests/reliability/reliability.py)
#   pg-crash    the same with an immediate shutdown: no checkpoint, WAL crash recovery on start
#   kill9       the service SIGKILLed and restarted mid-upload; retries with Idempotency-Key (long form)
#   live        slow clients, idle connections, oversized headers on a real socket
#   soak        mixed load with memory / descriptor / connection bounds (long form)
#   swift       the hostile-input and authorisation-matrix suites (long form; `make test` runs them anyway)
#   linearity   every client-facing parser at n and 4n, CPU ratio at most 6 (Benchmarks/linearity.sh; long form)
#   webhooks    receiver down / 500 / 429 / hanging, service SIGKILLed, PostgreSQL restarted: every
#               committed change's webhook arrives, none for a refused one (scripts/webhooks-check.sh)
# Prints a summary table at the end; exit 1 if any part failed.
#
# Environment: RELIABILITY_BINARY (default: a debug build made here), RELIABILITY_PG_PORT (default:
# a free port), RELIABILITY_PORT (first of 2 HTTP ports; default: each a free port),
# RELIABILITY_OUT (test-output/reliability),
# FUZZ_SECONDS / SOAK_SECONDS / CONTRACT_EXAMPLES to override the form's durations,
# RELIABILITY_ONLY="fuzz contract ..." to run some parts.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

long=0
[ "${1:-}" = "--long" ] && long=1
out="${RELIABILITY_OUT:-test-output/reliability}"
export RELIABILITY_OUT="$out"
mkdir -p "$out"
results="$out/results.jsonl"
: >"$results"

if [ $long = 1 ]; then
    fuzz_seconds="${FUZZ_SECONDS:-600}"; soak_seconds="${SOAK_SECONDS:-1800}"; examples="${CONTRACT_EXAMPLES:-25}"
    parts="${RELIABILITY_ONLY:-fuzz contract pg-restart pg-crash kill9 live soak swift linearity webhooks}"
else
    fuzz_seconds="${FUZZ_SECONDS:-8}"; soak_seconds="${SOAK_SECONDS:-0}"; examples="${CONTRACT_EXAMPLES:-8}"
    parts="${RELIABILITY_ONLY:-fuzz contract pg-restart pg-crash live webhooks}"
fi
want() { [[ " $parts " == *" $1 "* ]]; }

# A private cluster: never the shared development one, and on a free port unless
# RELIABILITY_PG_PORT names one (a cluster still running in its folder keeps its port).
export COUNTERSIGN_PG_DIR="${RELIABILITY_PG_DIR:-$PWD/.data/reliability}"
PG=scripts/pg.sh
export COUNTERSIGN_PG_PORT="${RELIABILITY_PG_PORT:-$($PG pick-port)}"
pg_started=0
if ! $PG status >/dev/null 2>&1; then
    $PG start >&2 || { echo "reliability: cannot start PostgreSQL" >&2; exit 1; }
    pg_started=1
fi
cleanup() { if [ $pg_started = 1 ]; then $PG stop >/dev/null 2>&1 || true; fi; }
trap cleanup EXIT

if [ -n "${RELIABILITY_BINARY:-}" ]; then
    binary="$RELIABILITY_BINARY"
else
    echo "reliability: building countersign (debug)" >&2
    # A failed build must stop the run: an older binary left in .build would be tested instead.
    swift build --product countersign >"${TMPDIR:-/tmp}/countersign-reliability-build.log" 2>&1 \
        || { grep -E "error" "${TMPDIR:-/tmp}/countersign-reliability-build.log" | head -20 >&2; echo "reliability: build failed" >&2; exit 1; }
    binary="$(swift build --show-bin-path)/countersign"
fi
[ -x "$binary" ] || { echo "reliability: no binary at $binary" >&2; exit 1; }
# Two HTTP ports, each free: the contract fuzzing server and the fault runs' server (which restarts
# on its port). RELIABILITY_PORT names the first; the second is then the next one, as before.
if [ -n "${RELIABILITY_PORT:-}" ]; then
    port="$RELIABILITY_PORT"; fault_port=$((port + 1))
else
    read -r port fault_port <<<"$(python3 scripts/free-port.py 2 | tr '\n' ' ')"
fi
db() { $PG createdb "reliab_$1" --fresh >/dev/null && echo "reliab_$1"; }

status=0
part_started=$SECONDS
record() {  # record PART RC OUTPUT-FILE: copy its RESULT lines; a part without one is a failure
    local part="$1" rc="$2" file="$3"
    echo "reliability: $part took $((SECONDS - part_started)) s" >&2
    part_started=$SECONDS
    if grep -q '^RESULT ' "$file"; then
        grep '^RESULT ' "$file" | sed 's/^RESULT //' >>"$results"
    else
        echo "{\"run\":\"$part\",\"ok\":false,\"error\":\"no result (exit $rc), see $file\"}" >>"$results"
    fi
    [ "$rc" = 0 ] || status=1
}

if want fuzz; then
    part_started=$SECONDS
    echo "reliability: fuzz, ${fuzz_seconds}s per target" >&2
    Fuzz/run.sh "$fuzz_seconds" >"$out/fuzz.txt" 2>"$out/fuzz.err"
    rc=$?
    cat "$out/fuzz.txt" >&2
    echo "reliability: fuzz took $((SECONDS - part_started)) s" >&2
    python3 - "$out/fuzz.txt" "$rc" >>"$results" <<'EOF'
import json, re, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("fuzz ")]
for l in lines:
    m = dict(re.findall(r"(\w+)=(\d+)", l))
    name, seconds = l.split()[1], l.split()[2]
    print(json.dumps({"run": f"fuzz {name}", "seconds": int(seconds.rstrip("s")), "cases": int(m.get("runs", 0)),
                      "failures": int(m.get("crashes", 0)), "corpus": int(m.get("corpus", 0)),
                      "ok": m.get("crashes") == "0" and m.get("exit") == "0"}))
if not lines:
    print(json.dumps({"run": "fuzz", "ok": False, "error": f"no fuzz results (exit {sys.argv[2]})"}))
EOF
    [ "$rc" = 0 ] || status=1
fi

if want contract; then
    part_started=$SECONDS
    echo "reliability: contract fuzzing" >&2
    contract_db="$(db contract)"
    urls=(--database-url "$($PG url "$contract_db")" --owner-url "$($PG owner-url "$contract_db")")
    if [ $long = 1 ]; then
        scripts/contract-fuzz.sh --binary "$binary" "${urls[@]}" --port "$port" \
            --examples "$examples" >"$out/contract.out" 2>&1
    else
        scripts/contract-fuzz.sh --binary "$binary" "${urls[@]}" --port "$port" \
            --examples "$examples" --roles admin --phases examples,fuzzing >"$out/contract.out" 2>&1
    fi
    record contract $? "$out/contract.out"
fi

faults() {  # faults NAME SUBCOMMAND ARGS…
    local name="$1" sub="$2"; shift 2
    local database; database="$(db "${name//-/_}")"
    part_started=$SECONDS
    echo "reliability: $name" >&2
    python3 Tests/reliability/reliability.py "$sub" --binary "$binary" --database-url "$($PG url "$database")" \
        --owner-url "$($PG owner-url "$database")" --admin-url "$($PG admin-url "$database")" --port "$fault_port" --server-log "$out/$name-server.log" "$@" \
        >"$out/$name.out" 2>"$out/$name.err"
    record "$name" $? "$out/$name.out"
}

pgctl="COUNTERSIGN_PG_PORT=$COUNTERSIGN_PG_PORT COUNTERSIGN_PG_DIR=$COUNTERSIGN_PG_DIR $PG"
# The outage runs: long form 8 threads and a 10 s outage, short form 4 threads and a 3 s outage;
# pg-restart and pg-crash differ only in how PostgreSQL stops. Both stop starting uploads 2 s after
# PostgreSQL is back (--stop-after-outage), with deliveries to spare: a fixed count can all be
# uploaded before the outage begins on a quiet machine, which tests nothing (the long form's
# idempotent run did that with 200 in under its 2 s warm-up).
if [ $long = 1 ]; then
    outage=(--deliveries 2400 --connections 8 --outage 10 --stop-after-outage 2 --pg-start "$pgctl start")
else
    outage=(--deliveries 600 --connections 4 --outage 3 --warmup 1 --stop-after-outage 2 --pg-start "$pgctl start")
fi
if want pg-restart; then
    faults pg-restart pg-restart "${outage[@]}" --pg-stop "$pgctl stop"
    if [ $long = 1 ]; then
        faults pg-restart-idempotent pg-restart "${outage[@]}" --idempotency --pg-stop "$pgctl stop"
    fi
fi
if want pg-crash; then
    # Acknowledged proofs must survive a crash of PostgreSQL itself (synchronous_commit stays on):
    # an immediate shutdown writes no checkpoint, so the start that follows replays the WAL.
    faults pg-crash pg-restart --label pg-crash "${outage[@]}" --pg-stop "$pgctl crash"
fi
if want kill9; then
    faults kill9 kill9 --deliveries 300 --connections 8 --kills 3 --timeout 240
fi
if want live; then
    if [ $long = 1 ]; then
        faults live live --slow-timeout 75 --idle-connections 500
    else
        faults live live --skip-slow --idle-connections 100
    fi
fi
if want soak && [ "$soak_seconds" != 0 ]; then
    faults soak soak --duration "$soak_seconds" --connections 6
fi
if want swift; then
    part_started=$SECONDS
    echo "reliability: swift suites (hostile input, authorisation matrix)" >&2
    $PG createdb reliab_swift --fresh >/dev/null
    (
        export TEST_DATABASE_URL="$($PG url reliab_swift)" TEST_DATABASE_ADMIN_URL="$($PG admin-url reliab_swift)"
        export TEST_DATABASE_OWNER_URL="$($PG owner-url reliab_swift)"
        export TEST_DATABASE_SOCKET_DIR="$($PG socket-dir)" COUNTERSIGN_PGCTL="$PWD/$PG"
        swift build --build-tests >/dev/null 2>&1 && swift test --skip-build --filter "HostileInputTests|AuthorizationMatrixTests" 2>&1
    ) >"$out/swift.out"
    rc=$?
    tests="$(grep -oE 'Test run with [0-9]+ tests' "$out/swift.out" | grep -oE '[0-9]+' | head -1)"
    issues="$(grep -oE 'with [0-9]+ issues?' "$out/swift.out" | tail -1 | grep -oE '[0-9]+' || echo 0)"
    echo "{\"run\":\"swift hostile+authz\",\"cases\":${tests:-0},\"failures\":${issues:-0},\"ok\":$([ $rc = 0 ] && echo true || echo false)}" >>"$results"
    [ $rc = 0 ] || status=1
fi

if want webhooks; then
    part_started=$SECONDS
    echo "reliability: webhooks under faults" >&2
    # On this script's cluster (which it restarts mid-way); 3 s per phase in the short form, 30 s in the long.
    WEBHOOKS_PG_DIR="$COUNTERSIGN_PG_DIR" WEBHOOKS_PG_PORT="$COUNTERSIGN_PG_PORT" \
        scripts/webhooks-check.sh "$binary" faults --phase-seconds "$([ $long = 1 ] && echo 30 || echo 3)" \
        >"$out/webhooks.out" 2>"$out/webhooks.err"
    record webhooks $? "$out/webhooks.out"
fi

if want linearity; then
    part_started=$SECONDS
    echo "reliability: parser linearity (release build)" >&2
    Benchmarks/linearity.sh >"$out/linearity.out" 2>&1
    record linearity $? "$out/linearity.out"
fi

echo "reliability: total $SECONDS s" >&2
python3 - "$results" "$long" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
form = "long" if sys.argv[2] == "1" else "short"
print(f"\nreliability ({form} form)")
print(f"{'part':<26} {'cases':>10} {'failures':>9} {'ack/stored':>12} {'recovery':>9}  result  notes")
def fmt(v):
    return "-" if v is None else str(v)
for r in rows:
    run = r.get("run")
    cases = r.get("cases", r.get("requests", r.get("uploads")))
    failures = r.get("failures", r.get("errors", r.get("bad")))
    ack = f"{r['acknowledged']}/{r['stored']}" if "acknowledged" in r else (
        f"{r['final_201']}/{r['final_201'] - r['proofs_not_exactly_one']}" if "final_201" in r else None)
    recovery = r.get("recovery_s")
    if recovery is None and r.get("restart_s"):
        recovery = max(r["restart_s"])
    notes = []
    if run and run.startswith("fuzz"):
        notes.append(f"{r.get('seconds')}s, corpus {r.get('corpus')}")
    for key in ["served_503", "ambiguous", "kills", "replayed", "partial", "in_flight_left", "audit_verify",
                "cli_verify_exit", "missing", "mismatched"]:
        if key in r:
            notes.append(f"{key}={r[key]}")
    if run == "soak":
        notes.append(f"{r['seconds']}s {r['rate']}/s p99 {r['p99_ms']}ms rss {r['rss_mb_warm']}->{r['rss_mb_last']}MB "
                     f"(max {r['rss_mb_max']}) fds<={r['max_fds']} db<={r['max_db_connections']}")
    if run == "live":
        notes += [f"{c['case']}: {'ok' if c['ok'] else 'FAIL'}" for c in r.get("checks", []) if not c["ok"]]
    if "statuses" in r:
        notes.append("statuses " + ",".join(f"{k}:{v}" for k, v in sorted(r["statuses"].items())))
    if r.get("error"):
        notes.append(r["error"])
    print(f"{run:<26} {fmt(cases):>10} {fmt(failures):>9} {fmt(ack):>12} {fmt(recovery):>9}  "
          f"{'ok' if r.get('ok') else 'FAIL':<6}  {'; '.join(notes)}")
EOF
exit $status
