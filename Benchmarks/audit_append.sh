#!/usr/bin/env bash
# Audit appends per second from N connections, each append in a transaction of its own (like the
# `proof_recorded` event of an upload), with pgbench, on a private cluster of scripts/pg.sh
# (.data/bench-audit on a free port; BENCH_PG_DIR and BENCH_PG_PORT name others), stopped at the end.
#
#   before: the single chain of migrations 0003-0007 (countersign_audit_head(): one advisory lock
#           held until COMMIT, then the insert) — the statements AuditLog ran before 0009
#   after:  the 16 chains of 0009 (countersign_audit_lock_chains(): the chain's row FOR UPDATE and a
#           seq from the sequence, then one statement moving the head and inserting) — what AuditLog runs now
#
# Both run the same round trips as the service (lock+head, insert, commit); the hash is computed
# in SQL here instead of Swift (microseconds either way). The chain is uniform at random, as
# SHA-256 of real subjects is. Runs are interleaved (before, after, before, after, …) so machine
# load hits both alike. Usage: Benchmarks/audit_append.sh [clients=16] [seconds=20] [rounds=3]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PG="$ROOT/scripts/pg.sh"
clients="${1:-16}"
seconds="${2:-20}"
rounds="${3:-3}"
pgbench="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)/pgbench"
work="$(mktemp -d)"
export COUNTERSIGN_PG_DIR="${BENCH_PG_DIR:-$ROOT/.data/bench-audit}"
export COUNTERSIGN_PG_PORT="${BENCH_PG_PORT:-$("$PG" pick-port)}"
pg_started=0
trap 'rm -rf "$work"; if [ $pg_started = 1 ]; then "$PG" stop >/dev/null || true; fi' EXIT

"$PG" status || { pg_started=1; "$PG" start >/dev/null; }
for variant in before after; do
    db="countersign_bench_audit_$variant"
    "$PG" createdb "$db" --fresh >/dev/null
    url="$("$PG" admin-url "$db")"
    for file in "$ROOT"/migrations/0*.sql; do
        version="$(basename "$file" | cut -c1-4)"
        if [ "$variant" = before ] && [ "$version" -gt 7 ]; then continue; fi
        psql -q -X -v ON_ERROR_STOP=1 "$url" -f "$file" >/dev/null
    done
done

# The first event, so the single chain always has a head.
psql -q -X -v ON_ERROR_STOP=1 "$("$PG" admin-url countersign_bench_audit_before)" -c "
    INSERT INTO audit_events (seq, occurred_at, actor_role, action, subject, details_text, prev_hash, hash)
    VALUES (1, clock_timestamp(), 'system', 'proof_png_read', 'delivery:bench', '{}', '\\x$(printf '0%.0s' {1..64})', sha256('x'))"

cat > "$work/before.sql" <<'SQL'
BEGIN;
SELECT head_seq AS s, encode(head_hash, 'hex') AS h FROM countersign_audit_head() \gset
INSERT INTO audit_events (seq, occurred_at, actor_role, action, subject, details_text, prev_hash, hash)
VALUES (:s + 1, clock_timestamp(), 'system', 'proof_recorded', 'delivery:bench', '{}', decode(':h', 'hex'),
        sha256(decode(':h', 'hex') || int8send(:s + 1)));
END;
SQL
cat > "$work/after.sql" <<'SQL'
\set chain random(0, 15)
BEGIN;
SELECT locked_head_seq AS s, encode(locked_head_hash, 'hex') AS h, seqs[1] AS n
FROM countersign_audit_lock_chains(ARRAY[:chain]::smallint[], '{1}') \gset
WITH moved AS (UPDATE audit_chains SET head_seq = :n, head_hash = sha256(decode(':h', 'hex') || int8send(:n)) WHERE chain = :chain)
INSERT INTO audit_events (seq, chain, encoding, occurred_at, actor_role, action, subject, details_text, prev_hash, hash)
VALUES (:n, :chain, 2, clock_timestamp(), 'system', 'proof_recorded', 'delivery:bench', '{}', decode(':h', 'hex'),
        sha256(decode(':h', 'hex') || int8send(:n)));
END;
SQL

for round in $(seq 1 "$rounds"); do
    for variant in before after; do
        url="$("$PG" admin-url "countersign_bench_audit_$variant")"
        tps="$("$pgbench" -n -c "$clients" -j 2 -T "$seconds" -f "$work/$variant.sql" "$url" 2>/dev/null \
               | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')"
        echo "round $round $variant: $clients clients, ${seconds}s: $tps appends/s"
    done
done

# The chains stayed whole: in every chain each event's prev_hash is the previous event's hash, and
# audit_chains names each chain's newest event.
psql -X -At "$("$PG" admin-url countersign_bench_audit_after)" -c "
    WITH linked AS (SELECT prev_hash, lag(hash) OVER (PARTITION BY chain ORDER BY seq) AS previous FROM audit_events)
    SELECT 'after: ' || count(*) || ' events, '
        || count(*) FILTER (WHERE previous IS NOT NULL AND prev_hash <> previous) || ' broken links' FROM linked"
psql -X -At "$("$PG" admin-url countersign_bench_audit_after)" -c "
    SELECT 'after: ' || count(*) || ' of 16 heads name their chain''s newest event' FROM audit_chains c
    WHERE (c.head_seq, c.head_hash) = (SELECT seq, hash FROM audit_events e WHERE e.chain = c.chain ORDER BY seq DESC LIMIT 1)"
for variant in before after; do
    psql -q -X "$("$PG" admin-url postgres)" -c "DROP DATABASE IF EXISTS countersign_bench_audit_$variant WITH (FORCE)"
done
