-- 0003: audit log. An append-only, hash-chained record of every change and every read of proof
-- content. See docs/audit.md for the canonical encoding that `hash` covers.
--
-- seq is assigned by the writer as head + 1 while it holds the audit lock (not an identity: a
-- rolled-back identity value would leave a gap, and a gap is what verification reports as tampering).

CREATE TABLE audit_events (
    seq            bigint PRIMARY KEY CHECK (seq >= 1),
    occurred_at    timestamptz NOT NULL,
    actor_key_id   uuid,
    actor_role     text CHECK (actor_role IN ('courier', 'dispatcher', 'auditor', 'admin', 'cli', 'system')),
    action         text NOT NULL CHECK (length(action) BETWEEN 1 AND 64),
    subject        text NOT NULL,
    request_id     text,
    client_address text,
    user_agent     text,
    -- The exact JSON text the writer hashed; `details` is a jsonb copy for queries only.
    details_text   text NOT NULL,
    details        jsonb GENERATED ALWAYS AS (details_text::jsonb) STORED,
    prev_hash      bytea NOT NULL CHECK (length(prev_hash) = 32),
    hash           bytea NOT NULL CHECK (length(hash) = 32)
);
CREATE INDEX audit_events_occurred_at ON audit_events (occurred_at, seq);
CREATE INDEX audit_events_actor ON audit_events (actor_key_id, seq) WHERE actor_key_id IS NOT NULL;
CREATE INDEX audit_events_action ON audit_events (action, seq);
CREATE INDEX audit_events_subject ON audit_events (subject, seq);

-- Append-only for everyone who cannot disable triggers (the service role included).
CREATE TRIGGER audit_events_immutable BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION countersign_refuse_change();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();

-- Takes the transaction-scoped audit lock, then returns the chain head (no row when empty).
-- Every append calls this first, so appends are serialised and the head read is never stale:
-- plpgsql takes a fresh snapshot for the SELECT after the lock is granted (READ COMMITTED).
CREATE FUNCTION countersign_audit_head(OUT head_seq bigint, OUT head_hash bytea)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(4242000003);
    RETURN QUERY SELECT a.seq, a.hash FROM audit_events a ORDER BY a.seq DESC LIMIT 1;
END;
$$;
