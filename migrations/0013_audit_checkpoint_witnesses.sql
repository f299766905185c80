-- 0013: where each signed checkpoint was published outside the database (docs/audit.md,
-- "Witnessed checkpoints").
--
-- A checkpoint kept only in `audit_checkpoints` does not stop an insider who controls the
-- database: they can rewrite the chain and its checkpoints together. The service therefore
-- publishes every scheduled checkpoint to witnesses it cannot rewrite later (an append-only
-- directory, HTTP receivers, an RFC 3161 timestamp authority) and records here, one row per
-- attempt, what each witness answered. The rows are only a report for operators
-- (`GET /v1/audit/checkpoints`): verification trusts the witnesses' copies, never this table.
--
-- Insert-only, like the checkpoints themselves: a receipt is never updated (a later retry is a
-- new row), so the service needs INSERT and SELECT here and nothing else.
CREATE TABLE audit_checkpoint_witnesses (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    checkpoint_id bigint NOT NULL REFERENCES audit_checkpoints (id),
    -- `directory`, `http` or `tsa`.
    witness_kind  text NOT NULL CHECK (witness_kind IN ('directory', 'http', 'tsa')),
    -- Which one: the file name written, the receiver's URL, the TSA's URL.
    witness       text NOT NULL CHECK (length(witness) BETWEEN 1 AND 2048),
    succeeded     boolean NOT NULL,
    -- Why it failed (or the receiver's status), for operators; NULL when there is nothing to say.
    detail        text CHECK (length(detail) <= 2048),
    recorded_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_checkpoint_witnesses_checkpoint ON audit_checkpoint_witnesses (checkpoint_id, id);

CREATE TRIGGER audit_checkpoint_witnesses_immutable BEFORE UPDATE OR DELETE ON audit_checkpoint_witnesses
    FOR EACH ROW EXECUTE FUNCTION countersign_refuse_change();
CREATE TRIGGER audit_checkpoint_witnesses_no_truncate BEFORE TRUNCATE ON audit_checkpoint_witnesses
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();
