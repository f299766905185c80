#!/usr/bin/env bash
# The appendices of docs/scaling.md, on demand: the SQL that generated the 100,000-delivery
# database (generate.sql), the statements whose plans section 2 summarises (explain.sql, the
# unpartitioned schema; explain-partitioned.sql, migration 0008 and later), and their
# EXPLAIN (ANALYZE, BUFFERS) output.
#
#   Benchmarks/scaling-appendix.sh sql [DIR]              write the three SQL files
#                                                         (default Benchmarks/out/scaling)
#   Benchmarks/scaling-appendix.sh generate DATABASE_URL  run generate.sql on a database that holds
#                                                         the 640 real uploads (docs/scaling.md §1)
#   Benchmarks/scaling-appendix.sh plans DATABASE_URL [partitioned]
#                                                         print every plan (explain.sql, or
#                                                         explain-partitioned.sql)
#
# `plans` binds a token hash, the most frequent actor and 50 proof ids read from the database
# itself (the files keep the recorded run's values as defaults for plain `psql -f`). The
# statements are those the code sent when docs/scaling.md §2 was measured (schema through 0008);
# the code has changed since (pipelining, the chain-lock statement, domains), so compare them with
# Sources/ProofStore before reading a new plan as the service's; on the current schema some of them
# fail (e.g. the pre-0009 audit insert without a chain; P-statements name the month partitions of
# the recorded run), and `plans` prints their errors and goes on. generate.sql runs on the current
# schema (it fills the chain and encoding columns of 0009). Needs psql; use a scratch database.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

write_sql() {
    local dir="$1"
    mkdir -p "$dir"
    cat >"$dir/generate.sql" <<'SQL'
-- 20 more API keys so actor filters have realistic selectivity.
INSERT INTO api_keys (name, role, token_sha256)
SELECT 'gen ' || g, (ARRAY['courier','dispatcher','auditor','admin'])[1 + g % 4], sha256(('gen' || g)::bytea) FROM generate_series(1, 20) g;

-- 100,000 deliveries over the last 100 days, 70 % delivered, destinations across Europe.
INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon, status, created_by, created_at, updated_at, delivered_at)
SELECT 'G-' || g, 'Recipient ' || g, g || ' Example Street, Some City',
       40 + random() * 20, -5 + random() * 30,
       CASE WHEN g % 10 < 7 THEN 'delivered' ELSE 'pending' END,
       (SELECT id FROM api_keys WHERE name = 'gen ' || (1 + g % 20)),
       now() - (100000 - g) * interval '86.4 seconds',
       now() - (100000 - g) * interval '86.4 seconds' + interval '3 hours',
       CASE WHEN g % 10 < 7 THEN now() - (100000 - g) * interval '86.4 seconds' + interval '3 hours' END
FROM generate_series(1, 100000) g;

-- A proof for every delivered generated delivery, content copied from the 640 real uploads.
CREATE TEMP TABLE src AS SELECT row_number() OVER (ORDER BY id) - 1 AS n, * FROM proofs;
INSERT INTO proofs (id, delivery_id, signer_name, captured_at, captured_at_offset_min, captured_at_text, received_at,
    location_lat, location_lon, location_accuracy_m, distance_to_destination_m, geofence_radius_m, flags, device_id, device_model,
    device_os, device_app, body, body_content_type, body_content_encoding, body_sha256, ink_format, ink, point_count, stroke_count,
    png, png_sha256, png_width, png_height, render_options, algorithm_version, uploaded_by, idempotency_key)
SELECT gen_random_uuid(), d.id, s.signer_name, d.delivered_at - interval '1 minute', s.captured_at_offset_min, s.captured_at_text, d.delivered_at,
    s.location_lat, s.location_lon, s.location_accuracy_m, s.distance_to_destination_m, s.geofence_radius_m, s.flags, s.device_id, s.device_model,
    s.device_os, s.device_app, s.body, s.body_content_type, s.body_content_encoding, s.body_sha256, s.ink_format, s.ink, s.point_count, s.stroke_count,
    s.png, s.png_sha256, s.png_width, s.png_height, s.render_options, s.algorithm_version, s.uploaded_by, NULL
FROM deliveries d JOIN src s ON s.n = d.seq % 640
WHERE d.reference LIKE 'G-%' AND d.status = 'delivered';

-- Audit events for them: created, recorded, and one PNG read per proof (not chain-valid: plans only).
-- Since 0009 every event names its chain (first two bytes of SHA-256(subject) mod 16) and encoding 2;
-- the recorded run predates 0009 and inserted neither column.
INSERT INTO audit_events (seq, chain, encoding, occurred_at, actor_key_id, actor_role, action, subject, request_id, client_address, user_agent, details_text, prev_hash, hash)
SELECT coalesce((SELECT max(seq) FROM audit_events), 0) + row_number() OVER (ORDER BY t, k),
       (get_byte(sha256(convert_to(subject, 'UTF8')), 0) * 256 + get_byte(sha256(convert_to(subject, 'UTF8')), 1)) % 16, 2,
       t, actor, role, action, subject,
       md5(random()::text), '10.0.0.' || (k % 250), 'courier/3.2 (Android 15)', details, sha256('p'::bytea), sha256(random()::text::bytea)
FROM (
    SELECT d.created_at t, 0 k, d.created_by actor, 'dispatcher' role, 'delivery_created' action, 'delivery:' || d.reference subject,
           format('{"delivery_id":"%s"}', d.id) details FROM deliveries d WHERE d.reference LIKE 'G-%'
    UNION ALL
    SELECT p.received_at, 1, p.uploaded_by, 'courier', 'proof_recorded', 'delivery:' || d.reference,
           format('{"png_sha256":"%s","points_sha256":"%s","proof_id":"%s"}', encode(p.png_sha256, 'hex'), encode(p.body_sha256, 'hex'), p.id)
    FROM proofs p JOIN deliveries d ON d.id = p.delivery_id WHERE d.reference LIKE 'G-%'
    UNION ALL
    SELECT p.received_at + interval '2 hours', 2, d.created_by, 'auditor', 'proof_png_read', 'delivery:' || d.reference,
           format('{"png_sha256":"%s"}', encode(p.png_sha256, 'hex'))
    FROM proofs p JOIN deliveries d ON d.id = p.delivery_id WHERE d.reference LIKE 'G-%'
) e(t, k, actor, role, action, subject, details);
VACUUM ANALYZE;
SELECT (SELECT count(*) FROM deliveries) deliveries, (SELECT count(*) FROM proofs) proofs, (SELECT count(*) FROM audit_events) events;
SQL
    cat >"$dir/explain.sql" <<'SQL'
\if :{?tok}
\else
\set tok '\'\\x304121f03246e7076ba5f501238a0371185edc6d29aff2ab860c2027c178f2e7\'::bytea'
\endif
\if :{?actor}
\else
\set actor '\'cbc780fd-5257-4e73-90b3-60048964dc76\'::uuid'
\endif
\pset pager off
\echo '### Q01 auth: api key by token hash'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT id, name, role FROM api_keys WHERE token_sha256 = :tok AND revoked_at IS NULL;
\echo '### Q02 delivery create (rolled back)'
BEGIN;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon, created_by)
VALUES ('NEW-1', 'Ada', '1 Main St', 52.5, 13.4, :actor) ON CONFLICT (reference) DO NOTHING RETURNING id;
ROLLBACK;
\echo '### Q03 delivery by reference (GET /v1/deliveries/{reference}, create re-read)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, d.recipient_name, d.address, d.destination_lat, d.destination_lon, d.status,
        d.created_at, d.updated_at, d.delivered_at, p.id, p.signer_name, p.captured_at, p.received_at, p.distance_to_destination_m, array_to_string(p.flags, ',')
FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id WHERE d.reference = 'G-50000';
\echo '### Q04a list, no filter, first page'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id ORDER BY d.seq DESC LIMIT 51;
\echo '### Q04b list, cursor deep in the table'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id WHERE d.seq < 20000 ORDER BY d.seq DESC LIMIT 51;
\echo '### Q04c list, status=pending'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id WHERE d.status = 'pending' ORDER BY d.seq DESC LIMIT 51;
\echo '### Q04d list, status=delivered + cursor'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id WHERE d.status = 'delivered' AND d.seq < 50000 ORDER BY d.seq DESC LIMIT 51;
\echo '### Q04e list, since..until one day, 50 days ago'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id WHERE d.created_at >= now() - interval '50 days' AND d.created_at < now() - interval '49 days' ORDER BY d.seq DESC LIMIT 51;
\echo '### Q04f list, until 90 days ago (old end)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id WHERE d.created_at < now() - interval '90 days' ORDER BY d.seq DESC LIMIT 51;
\echo '### Q04g list, status=pending + since one week'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id WHERE d.status = 'pending' AND d.created_at >= now() - interval '7 days' ORDER BY d.seq DESC LIMIT 51;
\echo '### Q04h list, bbox (1 x 1 degree)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id WHERE d.destination_lat BETWEEN 52 AND 53 AND d.destination_lon BETWEEN 13 AND 14 ORDER BY d.seq DESC LIMIT 51;
\echo '### Q04i list, near 5 km'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id
WHERE d.destination_lat BETWEEN 52.52 - 0.045 AND 52.52 + 0.045
  AND 2 * 6371008.8 * asin(least(1, sqrt(power(sin(radians(d.destination_lat - 52.52) / 2), 2) + cos(radians(52.52)) * cos(radians(d.destination_lat)) * power(sin(radians(d.destination_lon - 13.405) / 2), 2)))) <= 5000
ORDER BY d.seq DESC LIMIT 51;
\echo '### Q05 upload: delivery state'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.destination_lat, d.destination_lon, p.id FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id WHERE d.reference = 'G-50000';
\echo '### Q06 upload: record (CTE, rolled back; pending delivery G-50008)'
BEGIN;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) WITH delivery AS (SELECT id FROM deliveries WHERE reference = 'G-50008'),
proof AS (INSERT INTO proofs (id, delivery_id, signer_name, captured_at, captured_at_offset_min, captured_at_text, received_at, geofence_radius_m, flags, body, body_content_type, body_sha256, ink_format, ink, point_count, stroke_count, png, png_sha256, png_width, png_height, render_options, algorithm_version, uploaded_by)
  SELECT gen_random_uuid(), delivery.id, 'x', now(), 0, 'x', now(), 150, '{}', s.body, s.body_content_type, s.body_sha256, s.ink_format, s.ink, s.point_count, s.stroke_count, s.png, s.png_sha256, s.png_width, s.png_height, s.render_options, s.algorithm_version, s.uploaded_by
  FROM delivery, (SELECT * FROM proofs LIMIT 1) s RETURNING delivery_id),
delivered AS (UPDATE deliveries SET status = 'delivered', delivered_at = now(), updated_at = now() FROM proof WHERE deliveries.id = proof.delivery_id RETURNING deliveries.id),
completed AS (UPDATE idempotency_records SET state = 'completed', completed_at = now() FROM proof WHERE api_key_id = :actor AND idempotency_key = 'k' RETURNING 1)
SELECT (SELECT count(*) FROM delivery), (SELECT count(*) FROM delivered);
ROLLBACK;
\echo '### Q07 proof metadata'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.id, d.reference, p.signer_name, p.received_at, k.id, k.name, k.role
FROM deliveries d JOIN proofs p ON p.delivery_id = d.id JOIN api_keys k ON k.id = p.uploaded_by WHERE d.reference = 'G-50000';
\echo '### Q08 stored PNG (no matching ETag: detoasts the PNG)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.png_sha256, CASE WHEN p.png_sha256 = '\x00'::bytea THEN NULL ELSE p.png END FROM deliveries d JOIN proofs p ON p.delivery_id = d.id WHERE d.reference = 'G-50000';
\echo '### Q09 original body'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.body, p.body_content_type, p.body_content_encoding, p.body_sha256 FROM deliveries d JOIN proofs p ON p.delivery_id = d.id WHERE d.reference = 'G-50000';
\echo '### Q10 stored ink (SVG, resized PNG, InkML)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.ink, p.render_options::text FROM deliveries d JOIN proofs p ON p.delivery_id = d.id WHERE d.reference = 'G-50000';
\echo '### Q11 audit head (before migration 0009, which replaced it by countersign_audit_lock_chains())'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT a.seq, a.hash FROM audit_events a ORDER BY a.seq DESC LIMIT 1;
\echo '### Q12 audit append (rolled back)'
BEGIN;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) INSERT INTO audit_events (seq, occurred_at, actor_key_id, actor_role, action, subject, request_id, client_address, user_agent, details_text, prev_hash, hash)
VALUES (240842, now(), :actor, 'auditor', 'proof_png_read', 'delivery:G-50000', 'r', '127.0.0.1', 'ua', '{"png_sha256":"00"}', sha256('a'::bytea), sha256('b'::bytea));
ROLLBACK;
\echo '### Q13a audit events, first page'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT seq, occurred_at, action, subject, details_text FROM audit_events ORDER BY seq LIMIT 51;
\echo '### Q13b audit events, since (one day, 50 days ago)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT seq, occurred_at, action, subject, details_text FROM audit_events WHERE occurred_at >= now() - interval '50 days' AND occurred_at < now() - interval '49 days' ORDER BY seq LIMIT 51;
\echo '### Q13c audit events, by actor'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT seq, occurred_at, action, subject, details_text FROM audit_events WHERE actor_key_id = :actor ORDER BY seq LIMIT 51;
\echo '### Q13d audit events, by actor + cursor'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT seq, occurred_at, action, subject, details_text FROM audit_events WHERE actor_key_id = :actor AND seq > 200000 ORDER BY seq LIMIT 51;
\echo '### Q13e audit events, by action (rare: key_created)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT seq, occurred_at, action, subject, details_text FROM audit_events WHERE action = 'key_created' ORDER BY seq LIMIT 51;
\echo '### Q13f audit events, by subject'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT seq, occurred_at, action, subject, details_text FROM audit_events WHERE subject = 'delivery:G-50000' ORDER BY seq LIMIT 51;
\echo '### Q13g audit events, action + since (one day)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT seq, occurred_at, action, subject, details_text FROM audit_events WHERE action = 'proof_recorded' AND occurred_at >= now() - interval '50 days' AND occurred_at < now() - interval '49 days' ORDER BY seq LIMIT 51;
\echo '### Q13h audit events, actor + since (one day)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT seq, occurred_at, action, subject, details_text FROM audit_events WHERE actor_key_id = :actor AND occurred_at >= now() - interval '50 days' AND occurred_at < now() - interval '49 days' ORDER BY seq LIMIT 51;
\echo '### Q14 verify: one page of 1000 after seq'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT seq, occurred_at, actor_key_id, actor_role, action, subject, request_id, client_address, user_agent, details_text, prev_hash, hash FROM audit_events WHERE seq > 120000 ORDER BY seq LIMIT 1000;
\echo '### Q15 verify: 50 proofs by id'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT id, body, png, body_sha256, png_sha256 FROM proofs WHERE id = ANY(string_to_array(:'ids', ',')::uuid[]);
\echo '### Q16 idempotency claim / read / release (rolled back)'
BEGIN;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) INSERT INTO idempotency_records (api_key_id, idempotency_key, request_sha256, state) VALUES (:actor, 'k-1', sha256('x'::bytea), 'in_flight')
ON CONFLICT (api_key_id, idempotency_key) DO UPDATE SET request_sha256 = EXCLUDED.request_sha256, created_at = now()
WHERE idempotency_records.state = 'in_flight' AND idempotency_records.created_at < now() - make_interval(secs => 3600) RETURNING 1;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT request_sha256, state, response_status FROM idempotency_records WHERE api_key_id = :actor AND idempotency_key = 'k-1';
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) DELETE FROM idempotency_records WHERE api_key_id = :actor AND idempotency_key = 'k-1' AND state = 'in_flight';
ROLLBACK;

\echo '### Q17a export: count of one day of proofs'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT count(*) FROM proofs p WHERE p.received_at >= now() - interval '50 days' AND p.received_at < now() - interval '49 days';
\echo '### Q17b export: first page of one day (ORDER BY received_at, id)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.id, d.reference, k.name, p.body, p.ink, p.png FROM proofs p JOIN deliveries d ON d.id = p.delivery_id JOIN api_keys k ON k.id = p.uploaded_by
WHERE p.received_at >= now() - interval '50 days' AND p.received_at < now() - interval '49 days' ORDER BY p.received_at, p.id LIMIT 100;
\echo '### Q17c export: next page (keyset after a row)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.id, d.reference, k.name, p.body, p.ink, p.png FROM proofs p JOIN deliveries d ON d.id = p.delivery_id JOIN api_keys k ON k.id = p.uploaded_by
WHERE p.received_at >= now() - interval '50 days' AND p.received_at < now() - interval '49 days' AND (p.received_at, p.id) > (now() - interval '49 days 12 hours', '00000000-0000-0000-0000-000000000000'::uuid) ORDER BY p.received_at, p.id LIMIT 100;
SQL
    cat >"$dir/explain-partitioned.sql" <<'SQL'
\if :{?actor}
\else
\set actor '\'cbc780fd-5257-4e73-90b3-60048964dc76\'::uuid'
\endif
\pset pager off
\echo '### P03 delivery by reference + proof summary (DeliveryRepository.find)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, d.recipient_name, d.address, d.destination_lat, d.destination_lon, d.status,
        d.created_at, d.updated_at, d.delivered_at, p.id, p.signer_name, p.captured_at, p.received_at, p.distance_to_destination_m, array_to_string(p.flags, ',')
FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at WHERE d.reference = 'G-50000';
\echo '### P03-old the same with the 0007 join (delivery_id only), for comparison'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, p.id, p.signer_name
FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id WHERE d.reference = 'G-50000';
\echo '### P04a list, no filter, first page'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at ORDER BY d.seq DESC LIMIT 51;
\echo '### P04b list, cursor deep in the table'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at WHERE d.seq < 20000 ORDER BY d.seq DESC LIMIT 51;
\echo '### P04c list, status=pending'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at WHERE d.status = 'pending' ORDER BY d.seq DESC LIMIT 51;
\echo '### P04d list, status=delivered + cursor'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at WHERE d.status = 'delivered' AND d.seq < 50000 ORDER BY d.seq DESC LIMIT 51;
\echo '### P04e list, since..until one day, 50 days ago'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at WHERE d.created_at >= now() - interval '50 days' AND d.created_at < now() - interval '49 days' ORDER BY d.seq DESC LIMIT 51;
\echo '### P04h list, bbox (1 x 1 degree)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at WHERE d.destination_lat BETWEEN 52 AND 53 AND d.destination_lon BETWEEN 13 AND 14 ORDER BY d.seq DESC LIMIT 51;
\echo '### P04-500 list, 500 per page (largest page)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.seq, d.reference, p.id, p.signer_name FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at ORDER BY d.seq DESC LIMIT 501;
\echo '### P05 upload: delivery state'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.destination_lat, d.destination_lon, p.id FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at WHERE d.reference = 'G-50000';
\echo '### P06 upload: record (CTE, rolled back; pending delivery G-50008)'
BEGIN;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) WITH delivery AS (SELECT id FROM deliveries WHERE reference = 'G-50008'),
proof AS (INSERT INTO proofs (id, delivery_id, signer_name, captured_at, captured_at_offset_min, captured_at_text, received_at, geofence_radius_m, flags, body, body_content_type, body_sha256, ink_format, ink, point_count, stroke_count, png, png_sha256, png_width, png_height, render_options, algorithm_version, uploaded_by)
  SELECT gen_random_uuid(), delivery.id, 'x', now(), 0, 'x', now(), 150, '{}', s.body, s.body_content_type, s.body_sha256, s.ink_format, s.ink, s.point_count, s.stroke_count, s.png, s.png_sha256, s.png_width, s.png_height, s.render_options, s.algorithm_version, s.uploaded_by
  FROM delivery, (SELECT * FROM proofs_p202610 LIMIT 1) s RETURNING delivery_id),
delivered AS (UPDATE deliveries SET status = 'delivered', delivered_at = now(), updated_at = now() FROM proof WHERE deliveries.id = proof.delivery_id AND deliveries.status = 'pending' RETURNING deliveries.id),
completed AS (UPDATE idempotency_records SET state = 'completed', completed_at = now() FROM delivered WHERE api_key_id = :actor AND idempotency_key = 'k' RETURNING 1)
SELECT (SELECT count(*) FROM delivery), (SELECT count(*) FROM delivered);
ROLLBACK;
\echo '### P07 proof metadata'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.id, d.reference, p.signer_name, p.received_at, octet_length(p.body), k.id, k.name, k.role
FROM deliveries d JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at JOIN api_keys k ON k.id = p.uploaded_by WHERE d.reference = 'G-50000';
\echo '### P08 stored PNG (no matching ETag: detoasts the PNG)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.png_sha256, CASE WHEN p.png_sha256 = '\x00'::bytea THEN NULL ELSE p.png END FROM deliveries d JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at WHERE d.reference = 'G-50000';
\echo '### P09 original body'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.body, p.body_content_type, p.body_content_encoding, p.body_sha256 FROM deliveries d JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at WHERE d.reference = 'G-50000';
\echo '### P10 stored ink (SVG, resized PNG, InkML) and uploader (courier image check)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.ink, p.render_options::text FROM deliveries d JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at WHERE d.reference = 'G-50000';
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.uploaded_by FROM deliveries d JOIN proofs p ON p.delivery_id = d.id AND p.received_at = d.delivered_at WHERE d.reference = 'G-50000';
\echo '### P15 verify: 50 proofs by id (AuditVerifier, SQL unchanged)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT id, body, png, body_sha256, png_sha256 FROM proofs WHERE id = ANY(string_to_array(:'ids', ',')::uuid[]);
\echo '### P17a export: count of one day of proofs'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT count(*) FROM proofs p WHERE p.received_at >= now() - interval '50 days' AND p.received_at < now() - interval '49 days';
\echo '### P17b export: first page of one day (ORDER BY received_at, id)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.id, d.reference, k.name, p.body, p.ink, p.png FROM proofs p JOIN deliveries d ON d.id = p.delivery_id JOIN api_keys k ON k.id = p.uploaded_by
WHERE p.received_at >= now() - interval '50 days' AND p.received_at < now() - interval '49 days' ORDER BY p.received_at, p.id LIMIT 32;
\echo '### P17c export: next page (keyset after a row)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.id, d.reference, k.name, p.body, p.ink, p.png FROM proofs p JOIN deliveries d ON d.id = p.delivery_id JOIN api_keys k ON k.id = p.uploaded_by
WHERE p.received_at >= now() - interval '50 days' AND p.received_at < now() - interval '49 days' AND (p.received_at, p.id) > (now() - interval '49 days 12 hours', '00000000-0000-0000-0000-000000000000'::uuid) ORDER BY p.received_at, p.id LIMIT 32;
\echo '### P17d export: whole history, no since/until (count, first page)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT count(*) FROM proofs p;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.id, d.reference, k.name, p.body, p.ink, p.png FROM proofs p JOIN deliveries d ON d.id = p.delivery_id JOIN api_keys k ON k.id = p.uploaded_by
ORDER BY p.received_at, p.id LIMIT 32;
\echo '### P17e export: whole history, page after a cursor in October (received_at >= cursor prunes August and September)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT p.id, d.reference, k.name, p.body, p.ink, p.png FROM proofs p JOIN deliveries d ON d.id = p.delivery_id JOIN api_keys k ON k.id = p.uploaded_by
WHERE p.received_at >= '2026-10-20 10:00:00+00' AND (p.received_at, p.id) > ('2026-10-20 10:00:00+00', '00000000-0000-0000-0000-000000000000'::uuid) ORDER BY p.received_at, p.id LIMIT 32;
SQL
}

case "${1:-}" in
    sql)
        write_sql "${2:-Benchmarks/out/scaling}"
        echo "wrote generate.sql, explain.sql and explain-partitioned.sql to ${2:-Benchmarks/out/scaling}"
        ;;
    generate)
        url="${2:?usage: $0 generate DATABASE_URL}"
        dir="$(mktemp -d)"; trap 'rm -rf "$dir"' EXIT
        write_sql "$dir"
        psql -X -v ON_ERROR_STOP=1 "$url" -f "$dir/generate.sql"
        ;;
    plans)
        url="${2:?usage: $0 plans DATABASE_URL [partitioned]}"
        file=explain.sql
        if [ "${3:-}" = partitioned ]; then file=explain-partitioned.sql; fi
        dir="$(mktemp -d)"; trap 'rm -rf "$dir"' EXIT
        write_sql "$dir"
        tok="$(psql -X -tAq "$url" -c "SELECT format('%L::bytea', '\\x' || encode(token_sha256, 'hex'))
                                       FROM api_keys WHERE revoked_at IS NULL ORDER BY created_at LIMIT 1")"
        actor="$(psql -X -tAq "$url" -c "SELECT format('%L::uuid', created_by) FROM deliveries
                                         WHERE created_by IS NOT NULL GROUP BY created_by ORDER BY count(*) DESC LIMIT 1")"
        ids="$(psql -X -tAq "$url" -c "SELECT string_agg(id::text, ',') FROM (SELECT id FROM proofs ORDER BY random() LIMIT 50) p")"
        # No ON_ERROR_STOP: a statement that no longer fits the schema prints its error, the rest run.
        psql -X -v tok="$tok" -v actor="$actor" -v ids="$ids" "$url" -f "$dir/$file"
        ;;
    *)
        sed -n '2,22p' "$0" >&2
        exit 2
        ;;
esac
