-- 0005: signed checkpoints of the audit chain. Each row is an Ed25519 signature by the service's
-- checkpoint key over (seq, head_hash, signed_at) — the canonical message is in docs/audit.md — so
-- a chain head handed to an auditor (or put in an export's manifest) can later prove that events
-- up to `seq` existed with exactly that hash: removing the newest events (a truncated tail) or
-- rewriting the whole chain no longer goes unnoticed. Append-only like the chain itself.
CREATE TABLE audit_checkpoints (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    seq         bigint NOT NULL CHECK (seq >= 0),
    head_hash   bytea NOT NULL CHECK (length(head_hash) = 32),
    signed_at   timestamptz NOT NULL,
    algorithm   text NOT NULL CHECK (algorithm = 'Ed25519'),
    public_key  bytea NOT NULL CHECK (length(public_key) = 32),
    signature   bytea NOT NULL CHECK (length(signature) = 64)
);
-- The newest checkpoint is what `GET /v1/audit/checkpoint` reuses while the head has not moved.
CREATE INDEX audit_checkpoints_seq ON audit_checkpoints (seq DESC, id DESC);

CREATE TRIGGER audit_checkpoints_immutable BEFORE UPDATE OR DELETE ON audit_checkpoints
    FOR EACH ROW EXECUTE FUNCTION countersign_refuse_change();
CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();
