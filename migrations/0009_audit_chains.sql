-- 0009: audit chains and monthly partitions of audit_events (docs/audit.md, "Chains").
--
-- One global hash chain serialised every append behind one advisory lock held until COMMIT, so
-- proof uploads (whose `proof_recorded` event is appended in the upload's transaction) could not
-- commit concurrently. Now there are 16 independent chains: an event's chain is derived from its
-- subject by the writer, an append locks only its chain's row in `audit_chains` (FOR UPDATE),
-- links `prev_hash` to that chain's head and moves the head, all in the caller's transaction.
--
-- * `seq` stays one global number, drawn from the sequence `audit_events_seq` while the chain row
--   is locked: it increases along every chain, is unique, but has gaps (a rolled-back append
--   keeps its number). Gaps are no longer evidence; hash links, audit_chains and signed
--   checkpoints are.
-- * Existing events are copied unchanged into chain 0 with `encoding` 1 (`countersign.audit/v1`,
--   hashes untouched); chain 0's head is the old head. New events use `countersign.audit/v2`,
--   which also hashes the chain number.
-- * `audit_events` becomes partitioned by RANGE (occurred_at), one partition per UTC month named
--   `audit_events_pYYYYMM`, plus `audit_events_default` (should stay empty). Partitions are made
--   here for every month that has events and for the current month and 3 ahead; later months are
--   created by the service's partition maintenance. Every partition needs the statement-level
--   no-TRUNCATE trigger (a TRUNCATE of one partition does not fire the parent's trigger):
--   `countersign_ensure_monthly_partitions` (0008, the function partition maintenance calls)
--   copies the parent's onto each partition it creates.
-- * Stop every older version of the service before applying this: it would fail to append
--   (`countersign_audit_head()` is gone), which is better than forking the chain.

-- The old table steps aside; the partitioned one takes its name and is filled from it.
DROP FUNCTION countersign_audit_head();
ALTER TABLE audit_events RENAME TO audit_events_v1;
CREATE TABLE audit_events (
    seq            bigint NOT NULL CHECK (seq >= 1),
    chain          smallint NOT NULL CHECK (chain >= 0),
    encoding       smallint NOT NULL CHECK (encoding IN (1, 2)),
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
) PARTITION BY RANGE (occurred_at);

CREATE TABLE audit_events_default PARTITION OF audit_events DEFAULT;
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events_default
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();

-- The parent's no-TRUNCATE trigger first: the shared partition function copies it onto each
-- partition it creates. Partitions for every month that holds events, the current one and three
-- ahead; a month that cannot be created stops the migration (nothing of it is applied).
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();
DO $$
DECLARE
    failure record;
BEGIN
    SELECT m.partition_name, m.error INTO failure
    FROM countersign_ensure_monthly_partitions('audit_events', 3,
             (SELECT min(occurred_at) FROM audit_events_v1), (SELECT max(occurred_at) FROM audit_events_v1)) m
    WHERE m.error IS NOT NULL LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'cannot create partition %: %', failure.partition_name, failure.error;
    END IF;
END;
$$;

-- History as it is: same seq, time, fields and hashes; chain 0, the v1 encoding.
INSERT INTO audit_events (seq, chain, encoding, occurred_at, actor_key_id, actor_role, action, subject, request_id,
    client_address, user_agent, details_text, prev_hash, hash)
SELECT seq, 0, 1, occurred_at, actor_key_id, actor_role, action, subject, request_id, client_address, user_agent, details_text,
    prev_hash, hash
FROM audit_events_v1 ORDER BY seq;

-- One chain head per chain, moved by every append under the row's lock.
CREATE TABLE audit_chains (
    chain     smallint PRIMARY KEY CHECK (chain >= 0),
    head_seq  bigint NOT NULL CHECK (head_seq >= 0),
    head_hash bytea NOT NULL CHECK (length(head_hash) = 32)
);
INSERT INTO audit_chains (chain, head_seq, head_hash)
SELECT g, 0, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea FROM generate_series(0, 15) g;
UPDATE audit_chains c SET head_seq = h.seq, head_hash = h.hash
FROM (SELECT seq, hash FROM audit_events_v1 ORDER BY seq DESC LIMIT 1) h WHERE c.chain = 0;

-- A head only moves forward; chains are never removed.
CREATE FUNCTION countersign_audit_chain_advance() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.chain <> OLD.chain OR NEW.head_seq <= OLD.head_seq THEN
        RAISE EXCEPTION 'audit chain % may only move forward (head % to %)', OLD.chain, OLD.head_seq, NEW.head_seq
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER audit_chains_forward BEFORE UPDATE ON audit_chains
    FOR EACH ROW EXECUTE FUNCTION countersign_audit_chain_advance();
CREATE TRIGGER audit_chains_no_delete BEFORE DELETE ON audit_chains
    FOR EACH ROW EXECUTE FUNCTION countersign_refuse_change();
CREATE TRIGGER audit_chains_no_truncate BEFORE TRUNCATE ON audit_chains
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();

CREATE SEQUENCE audit_events_seq AS bigint MINVALUE 1;
SELECT setval('audit_events_seq', coalesce(max(seq), 0) + 1, false) FROM audit_events_v1;

DROP TABLE audit_events_v1;

-- The primary key must contain the partition key; seq is unique anyway (one sequence), and
-- verification reports a duplicate.
ALTER TABLE audit_events ADD CONSTRAINT audit_events_pkey PRIMARY KEY (seq, occurred_at);
CREATE INDEX audit_events_occurred_at ON audit_events (occurred_at, seq);
CREATE INDEX audit_events_actor ON audit_events (actor_key_id, seq) WHERE actor_key_id IS NOT NULL;
CREATE INDEX audit_events_action ON audit_events (action, seq);
CREATE INDEX audit_events_subject ON audit_events (subject, seq);

-- Append-only: the row trigger is cloned onto every partition, present and future; the
-- statement trigger on the parent covers `TRUNCATE audit_events`, each partition has its own.
CREATE TRIGGER audit_events_immutable BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION countersign_refuse_change();

-- Locks the given chains' rows in ascending chain order (so two appends can never deadlock),
-- then draws `counts[i]` sequence numbers for chain `chains[i]` while its lock is held. Returns
-- each chain's head before the append and its new numbers (ascending).
CREATE FUNCTION countersign_audit_lock_chains(chains smallint[], counts int[])
RETURNS TABLE (locked_chain smallint, locked_head_seq bigint, locked_head_hash bytea, seqs bigint[])
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    wanted record;
BEGIN
    FOR wanted IN SELECT u.c, u.n FROM unnest(chains, counts) AS u(c, n) ORDER BY u.c LOOP
        SELECT a.chain, a.head_seq, a.head_hash INTO locked_chain, locked_head_seq, locked_head_hash
        FROM audit_chains a WHERE a.chain = wanted.c FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'audit chain % does not exist', wanted.c USING ERRCODE = 'foreign_key_violation';
        END IF;
        seqs := ARRAY(SELECT nextval('audit_events_seq') FROM generate_series(1, wanted.n));
        RETURN NEXT;
    END LOOP;
END;
$$;

-- Checkpoints of several chains (message countersign.checkpoint/v2): `heads` is the signed list,
-- 42 bytes per chain (int16 chain, int64 head_seq, 32-byte head_hash, big-endian, ascending
-- chain); `seq` is the highest head_seq in it. Version 1 rows (one head) stay as they are.
ALTER TABLE audit_checkpoints ADD COLUMN version smallint NOT NULL DEFAULT 1,
    ADD COLUMN heads bytea,
    ALTER COLUMN head_hash DROP NOT NULL;
ALTER TABLE audit_checkpoints ALTER COLUMN version DROP DEFAULT;
ALTER TABLE audit_checkpoints ADD CONSTRAINT audit_checkpoints_version CHECK (
    (version = 1 AND head_hash IS NOT NULL AND heads IS NULL)
    OR (version = 2 AND head_hash IS NULL AND heads IS NOT NULL AND length(heads) > 0 AND length(heads) % 42 = 0));
