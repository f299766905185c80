-- 0004: give proofs stored before the audit log (0003) their `proof_recorded` event, so
-- verification re-hashes them too. Events are appended in (received_at, id) order as the
-- `system` actor, with the canonical encoding of docs/audit.md computed here in SQL; details
-- carry `"source":"migration_0004"`. A database without earlier proofs gets no event.

CREATE FUNCTION countersign_audit_text(value text) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN value IS NULL THEN '\x00'::bytea
                ELSE '\x01'::bytea || int4send(octet_length(convert_to(value, 'UTF8'))) || convert_to(value, 'UTF8') END
$$;

DO $$
DECLARE
    proof record;
    head_seq bigint;
    head_hash bytea;
    micros bigint := (extract(epoch from date_trunc('milliseconds', clock_timestamp())) * 1000000)::bigint;
    details text;
    canonical bytea;
BEGIN
    SELECT h.head_seq, h.head_hash INTO head_seq, head_hash FROM countersign_audit_head() h;
    head_seq := coalesce(head_seq, 0);
    head_hash := coalesce(head_hash, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea);
    FOR proof IN
        SELECT p.id, d.reference, p.body_sha256, p.png_sha256 FROM proofs p JOIN deliveries d ON d.id = p.delivery_id
        WHERE NOT EXISTS (SELECT 1 FROM audit_events a WHERE a.action = 'proof_recorded' AND a.details ->> 'proof_id' = p.id::text)
        ORDER BY p.received_at, p.id
    LOOP
        head_seq := head_seq + 1;
        details := format('{"png_sha256":"%s","points_sha256":"%s","proof_id":"%s","source":"migration_0004"}',
                          encode(proof.png_sha256, 'hex'), encode(proof.body_sha256, 'hex'), proof.id::text);
        canonical := countersign_audit_text('countersign.audit/v1') || int8send(head_seq) || int8send(micros)
            || countersign_audit_text(NULL) || countersign_audit_text('system') || countersign_audit_text('proof_recorded')
            || countersign_audit_text('delivery:' || proof.reference) || countersign_audit_text(NULL)
            || countersign_audit_text(NULL) || countersign_audit_text(NULL) || countersign_audit_text(details);
        INSERT INTO audit_events (seq, occurred_at, actor_key_id, actor_role, action, subject, request_id, client_address,
            user_agent, details_text, prev_hash, hash)
        VALUES (head_seq, to_timestamp(0) + micros * interval '1 microsecond', NULL, 'system', 'proof_recorded',
            'delivery:' || proof.reference, NULL, NULL, NULL, details, head_hash, sha256(head_hash || canonical));
        head_hash := sha256(head_hash || canonical);
    END LOOP;
END;
$$;

DROP FUNCTION countersign_audit_text(text);
