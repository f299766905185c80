-- 0025: a proof's biometric bytes are stored sealed (issue 43, docs/decisions/0043-sealed-proofs.md).
--
-- Each delivery gets a data key when its proof is stored: 32 random bytes, kept here only wrapped
-- (AES-256-GCM) by a key-encryption key of the deployment's DATA_KEY_FILE, which the database never
-- holds. The proof's body (the point stream), canonical ink and PNG are sealed with it
-- (AES-256-GCM, bound to the proof id and the column). Destroying the row destroys the only copy
-- of the key, and with it every box it sealed: erasure without rewriting the audit chain.
--
-- proofs.sealing says how the three columns are stored: 0 in clear (proofs stored before this
-- migration), 1 sealed as above. A domain, as in 0011, so the rule is parsed once per session.

CREATE TABLE delivery_data_keys (
    delivery_id  uuid PRIMARY KEY REFERENCES deliveries (id),
    kek_id       text NOT NULL CONSTRAINT delivery_data_keys_kek_id CHECK (kek_id ~ '^[A-Za-z0-9._-]{1,32}$'),
    -- nonce (12) ‖ wrapped key (32) ‖ tag (16)
    wrapped_key  bytea NOT NULL CONSTRAINT delivery_data_keys_wrapped_length CHECK (octet_length(wrapped_key) = 60),
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE DOMAIN proof_sealing AS smallint CONSTRAINT proof_sealing_known CHECK (VALUE IN (0, 1));
ALTER TABLE proofs ADD COLUMN sealing proof_sealing NOT NULL DEFAULT 0;

-- A wrapped key never changes; destroying one is erasure, which gets a function of its own.
CREATE TRIGGER delivery_data_keys_immutable BEFORE UPDATE OR DELETE ON delivery_data_keys
    FOR EACH ROW EXECUTE FUNCTION countersign_refuse_change();
CREATE TRIGGER delivery_data_keys_no_truncate BEFORE TRUNCATE ON delivery_data_keys
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();
